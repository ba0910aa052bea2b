/**
 * Values in a request: spans shaped like something to pass rather than words saying what to do. A
 * file name ("rename report.txt to final.txt"), a path, a URL, a piece of code ("run print(sum(range(101)))"),
 * a chat channel ("#releases"), an @mention, an emoji shortcode (":tada:"), a host and port
 * ("localhost:3000"), an e-mail address, an IP address, a latitude and longitude, a bare host name
 * ("docs.example.com"), a SQL statement, quoted text. Their words add a little score where a tool mentions them but
 * are not required (query.ts), and each shape says what kind of thing the request passes: a word the
 * tools use for it ("file", "url", "code", "channel", ...), which query.ts adds to the request.
 */

export interface ValueShape {
  /** The span's words are values; `hints` name what the span is (alternatives of one query word). */
  hints: readonly string[];
  /** Words of the names of parameters that take such a value ("path", "file_path"; "latitude"). */
  params: readonly string[];
  span: string;
}

const EXTENSIONS =
  "txt|md|markdown|rst|pdf|csv|tsv|json|jsonl|ya?ml|toml|xml|html?|css|py|ts|tsx|jsx|go|rs|java|rb|php|c|h|cpp|sh|log|ini|cfg|conf|env|sql|ipynb|png|jpe?g|gif|svg|webp|zip|tar|gz|docx?|xlsx?|pptx?|odt|mp3|mp4|wav";

/** Top-level domains a bare host name ends with ("api.example.com", "docs.rs"): common ones only, so file names stay files. */
const TLDS = "com|org|net|io|dev|app|ai|co|gov|edu|info|xyz|cloud|tech|sh|rs|me|us|uk|de|fr|eu|ca|au|in|jp|cn|nl|es|it|ch|se|no|br|ru";

/** A host name: words and dots ending in one of TLDS, not inside a longer name, an address or a path. */
const HOST = `(?<![\\w.@/-])(?:[a-z0-9-]+\\.)+(?:${TLDS})`;

/**
 * A SQL statement, to the end of its line or its ";": keywords in capitals ("SELECT count(*) FROM orders
 * WHERE ..."), or in lower case where only SQL reads so ("select * from", "select count(", "delete from x
 * where"): "select the first row from the table" stays a request.
 */
const SQL =
  /\b(?:SELECT\s[^\n;]*?\bFROM|INSERT\s+INTO|UPDATE\s+[\w."]+\s+SET|DELETE\s+FROM|(?:CREATE|ALTER|DROP)\s+(?:TABLE|INDEX|VIEW)|WITH\s+\w+\s+AS\s*\(|select\s+(?:\*|count\(|distinct\s|[\w.]+\s*,\s*[\w.]+\s+from\b)|delete\s+from\s+[\w."]+\s+where|insert\s+into\s+[\w."]+\s*(?:\(|values\b))[^\n;]*;?/gu;

const URL_PARAMS = ["url", "urls", "uri", "link", "href"];
const CODE_PARAMS = ["code", "script", "expression", "function", "source"];

const SHAPES: { re: RegExp; hints: readonly string[]; params: readonly string[] }[] = [
  { re: SQL, hints: ["sql", "query"], params: ["sql", "query", "statement"] },
  { re: /\bhttps?:\/\/[^\s<>"'`]+/giu, hints: ["url", "link"], params: URL_PARAMS },
  { re: /(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+/gu, hints: ["email"], params: ["email", "to", "recipient", "recipients"] },
  {
    re: new RegExp(`(?<![\\w.])[\\w~/-]*[\\w-]\\.(?:${EXTENSIONS})(?![\\w.])`, "giu"),
    hints: ["file"],
    params: ["file", "path", "filename", "paths", "files"],
  },
  { re: /`[^`\n]{1,200}`/gu, hints: ["code"], params: CODE_PARAMS },
  // A path without a file name's extension: a folder, or a path to something ("~/projects/blog", "/var/log").
  {
    re: /(?<![\w.:/~-])(?:~|\.{1,2})?\/[\w.-]+(?:\/[\w.-]+)*\/?(?![\w/])/gu,
    hints: ["directory", "path"],
    params: ["directory", "path", "dir", "folder", "paths"],
  },
  { re: /(?<![\w&/])#[a-z][\w-]*/giu, hints: ["channel"], params: ["channel"] },
  { re: /(?<![\w.])@[a-z][\w.-]*(?![\w.-]*\/)/giu, hints: ["user"], params: ["user", "username", "users"] }, // not an npm scope (@types/node)
  { re: /(?<![\w:]):[a-z0-9_+-]{2,40}:(?![\w:])/giu, hints: ["emoji", "reaction"], params: ["emoji", "reaction"] },
  { re: /\b(?:localhost|[\d.]{7,15}|[\w-]+(?:\.[\w-]+)+):\d{2,5}\b/giu, hints: ["port"], params: ["port", "host", "url"] },
  // After the shapes above, which hold these inside them (a URL's host, an e-mail's domain, a host:port).
  { re: /(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.])/gu, hints: ["ip"], params: ["ip", "address", "host"] },
  {
    re: /(?<![\w.])-?\d{1,3}\.\d{2,},\s?-?\d{1,3}\.\d{2,}(?![\w.])/gu,
    hints: ["latitude", "longitude", "coordinates"],
    params: ["latitude", "longitude", "lat", "lng", "lon", "coordinates", "location"],
  },
  // A host and a path without the scheme ("airbnb.com/rooms/123"): a URL; a host alone: a domain or site.
  { re: new RegExp(`${HOST}/(?:[^\\s<>"'\`]*[^\\s<>"'\`.,;:!?)\\]])?`, "giu"), hints: ["url", "link"], params: URL_PARAMS },
  {
    re: new RegExp(`${HOST}(?![\\w.-])`, "giu"),
    hints: ["domain", "url", "website", "site"],
    params: ["domain", "site", "host", ...URL_PARAMS],
  },
];

/** Quoted text is something to pass (a message, a search, a name): its words say what, not what to do. */
const QUOTED = /(?<!\w)(?:"[^"\n]{1,120}"|'[^'\n]{1,120}'|\u201c[^\u201d\n]{1,120}\u201d|\u2018[^\u2019\n]{1,120}\u2019)(?!\w)/gu;

/** A call expression (`print(sum(range(101)))`, `document.querySelectorAll('img').length`): code. */
const CALL_HEAD = /[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*\(/gu;
const MAX_CALL = 400;

/**
 * Only this much of a request is looked at: some shapes cost time quadratic in a run of word characters
 * (a 1,000-character query is at most a few ms; the sandbox's search requests are capped at 1,000).
 */
const MAX_SCAN = 2000;

/** Value-shaped spans of `query`, in no particular order; a span inside another is not repeated. */
export function valueSpans(text: string): ValueShape[] {
  const query = text.length > MAX_SCAN ? text.slice(0, MAX_SCAN) : text;
  const out: ValueShape[] = [];
  const taken: [number, number][] = [];
  const inside = (s: number, e: number) => taken.some(([a, b]) => s >= a && e <= b);
  const add = (s: number, e: number, hints: readonly string[], params: readonly string[]) => {
    if (inside(s, e)) return;
    taken.push([s, e]);
    out.push({ span: query.slice(s, e), hints, params });
  };
  for (const { re, hints, params } of SHAPES) for (const m of query.matchAll(re)) add(m.index!, m.index! + m[0].length, hints, params);
  for (const m of query.matchAll(CALL_HEAD)) {
    const start = m.index!;
    if (inside(start, start + 1)) continue;
    const end = balancedEnd(query, start + m[0].length);
    if (end < 0) continue;
    // A trailing member access or call chain belongs to the expression (`...).length`).
    const tail = /^(?:\.[A-Za-z_$][\w$]*)+/u.exec(query.slice(end));
    add(start, end + (tail ? tail[0].length : 0), ["code"], CODE_PARAMS);
  }
  // Last: a quote inside code is part of the code.
  for (const m of query.matchAll(QUOTED)) add(m.index!, m.index! + m[0].length, [], []);
  return out;
}

/** Index just past the ")" closing the "(" before `from`, or -1 when it does not close in bounds. */
function balancedEnd(text: string, from: number): number {
  let depth = 1;
  const limit = Math.min(text.length, from + MAX_CALL);
  for (let i = from; i < limit; i++) {
    const c = text[i];
    if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return i + 1;
    else if (c === "\n") return -1;
  }
  return -1;
}
