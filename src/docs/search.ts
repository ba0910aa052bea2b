/**
 * Tool-doc search index.
 *
 * Ranks the tools of many MCP servers against a free-text query ("open a bug
 * report in a github repo", "slak chanel histroy", ...).
 *
 * Approach (all in-memory, pure TypeScript, no runtime-specific APIs):
 *
 *  - Tokenise: split camelCase / snake_case / kebab-case, lowercase, drop stop
 *    words, Porter-stem.
 *  - BM25F over fields (server, tool name, title, first sentence of the
 *    description, rest of the description, parameter names, parameter
 *    descriptions), each with its own weight and length normalisation.  Per
 *    (term, doc) scores are precomputed at build time, so a query is a few
 *    postings-list walks.
 *    Words used by most tools of one server ("It takes two arguments", shared
 *    auth parameters) are down-weighted within that server.
 *  - Query expansion: each query word becomes a *group* of weighted
 *    alternatives scored with dis-max (the best alternative counts, so a doc
 *    is never rewarded twice for synonyms of one word). All alternatives of a
 *    word share one idf (that of the most common one, as Lucene's
 *    SynonymQuery does), so a rare synonym does not outweigh a common one.
 *      * a small table of general synonyms (create/open/new/add, bug/issue,
 *        repo/repository, folder/directory, ...);
 *      * prefix matches of the stem ("repo" -> "repository", "perms" ->
 *        "permissions"), down-weighted;
 *      * typo tolerance: a word that is not in the vocabulary is mapped to the
 *        nearest vocabulary words (Damerau-Levenshtein distance 1, or 2 for
 *        words of 8+ letters), down-weighted;
 *      * compounds: "key vault" also matches "keyvault", an unknown
 *        "websearch" is split into "web search".
 *  - Re-ranking factors: a coordination factor (fraction of query words
 *    matched), a bonus for the fraction of the tool's name the query covers,
 *    and a boost for tools of a server the query names ("github", "slack").
 *  - Ties are broken by server then tool name, so results are deterministic.
 */

export interface ToolDoc {
  server: string;
  name: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
}

export interface SearchHit {
  server: string;
  name: string;
  score: number;
  /** First sentence/line of the description (or the title), at most 160 chars. */
  summary: string;
}

export interface SearchIndex {
  search(query: string, limit?: number): SearchHit[];
  readonly size: number;
}

// ---------------------------------------------------------------------------
// Tunables
// ---------------------------------------------------------------------------

// Field indices.
const F_SERVER = 0;
const F_NAME = 1;
const F_TITLE = 2;
// 3 = first sentence of description, 4 = rest of description,
// 5 = parameter names, 6 = parameter descriptions.
const NUM_FIELDS = 7;

/** Field weights for BM25F. */
const FIELD_WEIGHT = [1.5, 3.0, 2.0, 1.5, 0.6, 0.5, 0.2];
/** Per-field length normalisation (BM25 `b`). */
const FIELD_B = [0.0, 0.5, 0.5, 0.6, 0.75, 0.5, 0.75];
const K1 = 1.2;
/** BM25 saturation of a single occurrence in the server field. */
const SERVER_FIELD_SAT = (FIELD_WEIGHT[0]! * (K1 + 1)) / (FIELD_WEIGHT[0]! + K1);

const DEFAULT_LIMIT = 10;
const SUMMARY_MAX = 160;

const W_SYNONYM = 0.5;
const W_PREFIX = 0.45;
/** Two adjacent query words matching a compound in the corpus ("key vault" -> "keyvault"). */
const W_COMPOUND = 0.9;
const W_FUZZY = [1, 0.7, 0.45]; // by edit distance
/** Coordination exponent: score *= (query words matched / query words)^COORD. */
const COORD = 1.0;
/** Multiplicative boost for tools of a server named in the query. */
const SERVER_BOOST = 0.6;
/** A server-name word is "distinctive" if at most this fraction of other tools use it. */
const SERVER_TERM_MAX_OUTSIDE = 0.03;
/** Multiplicative bonus for the fraction of the tool name covered by the query. */
const NAME_COVERAGE = 0.5;
/** Server boilerplate: a word in >= this fraction of a server's tool descriptions ... */
const BOILERPLATE_FRACTION = 0.5;
/** ... (for servers with at least this many tools) has its description weight scaled by: */
const BOILERPLATE_MIN_TOOLS = 5;
const BOILERPLATE_WEIGHT = 0.5;
/** Minimum stem length for prefix expansion. */
const MIN_PREFIX = 4;
/** Max vocabulary expansions per query word (prefix / fuzzy). */
const MAX_PREFIX = 12;
const MAX_FUZZY = 6;
/** Query words beyond this many are ignored (bounds the cost of pathological queries). */
const MAX_QUERY_WORDS = 32;

// ---------------------------------------------------------------------------
// Text processing
// ---------------------------------------------------------------------------

const STOP_WORDS = new Set(
  (
    "a an the this that these those of in on at to for from by with into onto about " +
    "and or but if then than so as is are be been being was were am do does did " +
    "i me my mine we us our you your it its they them their he she his her " +
    "can could should would will shall may might must please " +
    "some any each every there here what which how where when why " +
    "want need like just up via also too very much such"
  ).split(" "),
);

const RE_UPPER = /\p{Lu}/u;
const RE_LOWER = /\p{L}/u; // any other letter counts as lowercase
const RE_DIGIT = /\p{N}/u;

/** 0 = separator, 1 = lowercase letter, 2 = uppercase letter, 3 = digit. */
function charClass(c: number, text: string, i: number): number {
  if (c >= 97 && c <= 122) return 1;
  if (c >= 65 && c <= 90) return 2;
  if (c >= 48 && c <= 57) return 3;
  if (c < 128) return 0;
  if (c >= 0xd800 && c <= 0xdfff) return 0; // astral chars (emoji etc.) separate words
  const ch = text[i]!;
  if (RE_UPPER.test(ch)) return 2;
  if (RE_LOWER.test(ch)) return 1;
  if (RE_DIGIT.test(ch)) return 3;
  return 0;
}

/** Split into lowercase word tokens; camelCase, snake_case, kebab-case and punctuation all separate words. */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  if (typeof text !== "string") return out;
  const n = text.length;
  let start = -1;
  let prev = 0;
  for (let i = 0; i <= n; i++) {
    const cls = i < n ? charClass(text.charCodeAt(i), text, i) : 0;
    if (cls === 0) {
      if (start >= 0) pushToken(out, text, start, i);
      start = -1;
    } else if (start < 0) {
      start = i;
    } else if (cls === 2) {
      // "fooBar" -> foo|Bar ; "APIKey" -> API|Key
      const next = i + 1 < n ? charClass(text.charCodeAt(i + 1), text, i + 1) : 0;
      if (prev === 1 || prev === 3 || (prev === 2 && next === 1)) {
        pushToken(out, text, start, i);
        start = i;
      }
    }
    prev = cls;
  }
  return out;
}

function pushToken(out: string[], text: string, start: number, end: number): void {
  if (end - start > 40) return;
  out.push(text.slice(start, end).toLowerCase());
}

// --- Porter stemmer (M.F. Porter, 1980), with a small cache -----------------

function isConsonant(w: string, i: number): boolean {
  const c = w.charCodeAt(i);
  // a e i o u
  if (c === 97 || c === 101 || c === 105 || c === 111 || c === 117) return false;
  if (c === 121) return i === 0 ? true : !isConsonant(w, i - 1); // y
  return true;
}

/** Number of VC sequences in w[0, end). */
function measure(w: string, end: number): number {
  let n = 0;
  let i = 0;
  while (i < end && isConsonant(w, i)) i++;
  while (i < end) {
    while (i < end && !isConsonant(w, i)) i++;
    if (i >= end) break;
    while (i < end && isConsonant(w, i)) i++;
    n++;
  }
  return n;
}

function hasVowel(w: string, end: number): boolean {
  for (let i = 0; i < end; i++) if (!isConsonant(w, i)) return true;
  return false;
}

function endsDoubleConsonant(w: string, end: number): boolean {
  return end >= 2 && w[end - 1] === w[end - 2] && isConsonant(w, end - 1);
}

/** cvc where the final c is not w, x or y. */
function endsCvc(w: string, end: number): boolean {
  if (end < 3) return false;
  if (!isConsonant(w, end - 1) || isConsonant(w, end - 2) || !isConsonant(w, end - 3)) return false;
  const c = w[end - 1];
  return c !== "w" && c !== "x" && c !== "y";
}

const STEP2: [string, string][] = [
  ["ational", "ate"], ["tional", "tion"], ["enci", "ence"], ["anci", "ance"], ["izer", "ize"],
  ["bli", "ble"], ["alli", "al"], ["entli", "ent"], ["eli", "e"], ["ousli", "ous"],
  ["ization", "ize"], ["ation", "ate"], ["ator", "ate"], ["alism", "al"], ["iveness", "ive"],
  ["fulness", "ful"], ["ousness", "ous"], ["aliti", "al"], ["iviti", "ive"], ["biliti", "ble"],
  ["logi", "log"],
];
const STEP3: [string, string][] = [
  ["icate", "ic"], ["ative", ""], ["alize", "al"], ["iciti", "ic"], ["ical", "ic"], ["ful", ""], ["ness", ""],
];
const STEP4 = [
  "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou",
  "ism", "ate", "iti", "ous", "ive", "ize",
];

function porter(word: string): string {
  if (word.length <= 2 || !/^[a-z]+$/.test(word)) return word;
  let w = word;

  // Step 1a
  if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.endsWith("ies")) w = w.slice(0, -2);
  else if (w.endsWith("ss")) { /* keep */ }
  else if (w.endsWith("s")) w = w.slice(0, -1);

  // Step 1b
  let extra = false;
  if (w.endsWith("eed")) {
    if (measure(w, w.length - 3) > 0) w = w.slice(0, -1);
  } else if (w.endsWith("ed") && hasVowel(w, w.length - 2)) {
    w = w.slice(0, -2);
    extra = true;
  } else if (w.endsWith("ing") && hasVowel(w, w.length - 3)) {
    w = w.slice(0, -3);
    extra = true;
  }
  if (extra) {
    if (w.endsWith("at") || w.endsWith("bl") || w.endsWith("iz")) w += "e";
    else if (endsDoubleConsonant(w, w.length) && !/[lsz]$/.test(w)) w = w.slice(0, -1);
    else if (measure(w, w.length) === 1 && endsCvc(w, w.length)) w += "e";
  }

  // Step 1c
  if (w.endsWith("y") && hasVowel(w, w.length - 1)) w = w.slice(0, -1) + "i";

  // Step 2
  for (const [suf, rep] of STEP2) {
    if (w.endsWith(suf)) {
      if (measure(w, w.length - suf.length) > 0) w = w.slice(0, -suf.length) + rep;
      break;
    }
  }
  // Step 3
  for (const [suf, rep] of STEP3) {
    if (w.endsWith(suf)) {
      if (measure(w, w.length - suf.length) > 0) w = w.slice(0, -suf.length) + rep;
      break;
    }
  }
  // Step 4
  for (const suf of STEP4) {
    if (w.endsWith(suf)) {
      const end = w.length - suf.length;
      if (measure(w, end) > 1) {
        if (suf !== "ion" || (end > 0 && (w[end - 1] === "s" || w[end - 1] === "t"))) w = w.slice(0, end);
      }
      break;
    }
  }
  // Step 5a
  if (w.endsWith("e")) {
    const m = measure(w, w.length - 1);
    if (m > 1 || (m === 1 && !endsCvc(w, w.length - 1))) w = w.slice(0, -1);
  }
  // Step 5b
  if (w.endsWith("ll") && measure(w, w.length) > 1) w = w.slice(0, -1);
  return w;
}

const stemCache = new Map<string, string>();
export function stem(word: string): string {
  let s = stemCache.get(word);
  if (s === undefined) {
    s = porter(word);
    if (stemCache.size < 50_000) stemCache.set(word, s);
  }
  return s;
}

// --- Synonyms ----------------------------------------------------------------

/**
 * General-purpose synonym groups (verbs and nouns that tool descriptions and
 * users phrase differently).  Every word in a group expands to the others.
 * Multi-word entries ("pull request") expand a single query word into a phrase.
 */
const SYNONYM_GROUPS: string[][] = [
  ["create", "new", "add", "make", "open", "generate", "insert", "start"],
  ["get", "fetch", "read", "retrieve", "show", "view", "display", "lookup", "obtain", "download"],
  ["list", "enumerate", "all", "show", "browse"],
  ["delete", "remove", "destroy", "drop", "erase", "purge", "rm"],
  ["update", "edit", "modify", "change", "patch", "alter"],
  ["search", "find", "query", "lookup", "seek", "look"],
  ["send", "post", "publish", "submit"],
  ["run", "execute", "exec", "invoke", "trigger", "launch"],
  ["stop", "halt", "kill", "terminate", "abort"],
  ["bug", "issue", "defect", "ticket", "problem"],
  ["error", "exception", "crash", "failure"],
  ["repo", "repository"],
  ["msg", "message", "chat"],
  ["pr", "pull request"],
  ["mr", "merge request"],
  ["folder", "directory", "dir"],
  ["doc", "docs", "document", "documentation"],
  ["image", "picture", "photo", "img"],
  ["webpage", "web page", "website", "site", "page"],
  ["url", "link", "uri"],
  ["user", "member", "people", "person", "account"],
  ["config", "configuration", "settings", "setting"],
  ["env", "environment"],
  ["var", "variable"],
  ["db", "database"],
  ["k8s", "kubernetes"],
  ["js", "javascript"],
  ["info", "information", "details", "metadata", "describe"],
  ["app", "application"],
  ["func", "function"],
  ["org", "organization"],
  ["auth", "authentication", "login", "credential"],
  ["reply", "respond", "answer"],
  ["comment", "reply"],
  ["react", "reaction", "emoji"],
  ["write", "save", "store", "put"],
  ["upload", "put", "push"],
  ["screenshot", "screen capture", "capture"],
  ["scrape", "crawl", "extract"],
  ["place", "location", "venue"],
  ["lat", "latitude"],
  ["lng", "lon", "long", "longitude"],
  ["coordinates", "latitude longitude"],
  ["payment", "charge", "pay"],
  ["price", "cost", "pricing"],
  ["customer", "client"],
  ["secret", "password", "token", "credential"],
  ["schedule", "cron"],
  ["done", "complete", "finished", "status"],
  ["mark", "set"],
  ["break", "split", "expand", "decompose"],
  ["logs", "log"],
  ["vm", "virtual machine"],
  ["directions", "route"],
  ["distance", "far"],
  ["multiple", "several", "many", "batch", "bulk"],
  ["sum", "add", "plus", "total"],
  ["navigate", "go", "visit", "goto", "open", "browse"],
  ["restart", "reboot"],
];

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

function str(x: unknown): string {
  return typeof x === "string" ? x : "";
}

const ABBREV = /(?:^|\s)(?:e\.g|i\.e|etc|vs|approx|ex|no)\.$/i;

/** First sentence / line of the description (or title), at most 160 chars. */
function summarize(description: string, title: string): string {
  let text = description.trim();
  if (!text) text = title.trim();
  if (!text) return "";
  const firstLine = text.split(/\r?\n/)[0] ?? "";
  const line = firstLine.replace(/\s+/g, " ").trim();
  let sentence = line;
  const re = /[.!?](?=\s|$)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(line))) {
    const candidate = line.slice(0, m.index + 1);
    if (ABBREV.test(candidate)) continue;
    sentence = candidate;
    break;
  }
  if (sentence.length > SUMMARY_MAX) sentence = sentence.slice(0, SUMMARY_MAX - 1).trimEnd() + "…";
  return sentence;
}

/** Split a description into its first sentence and the rest. */
function splitFirstSentence(description: string): [string, string] {
  const text = description.trim();
  const m = /[.!?](?:\s|$)|\n/.exec(text);
  if (!m) return [text, ""];
  return [text.slice(0, m.index + 1), text.slice(m.index + 1)];
}

/** Collect parameter names and descriptions from a JSON schema (nested properties too, bounded). */
function collectParams(schema: unknown, names: string[], descs: string[], depth = 0): void {
  if (depth > 3 || !schema || typeof schema !== "object" || Array.isArray(schema)) return;
  const s = schema as Record<string, unknown>;
  const props = s.properties;
  if (props && typeof props === "object" && !Array.isArray(props)) {
    for (const [key, value] of Object.entries(props as Record<string, unknown>)) {
      names.push(key);
      if (value && typeof value === "object" && !Array.isArray(value)) {
        const v = value as Record<string, unknown>;
        descs.push(str(v.description), str(v.title));
        collectParams(v, names, descs, depth + 1);
      }
    }
  }
  if (s.items) collectParams(s.items, names, descs, depth + 1);
}

// Scratch rows for boundedEditDistance (words are at most 40 chars).
const ROW_A = new Int32Array(64);
const ROW_B = new Int32Array(64);
const ROW_C = new Int32Array(64);

/** Optimal-string-alignment (Damerau-Levenshtein) distance, or max+1 if it exceeds max. */
function boundedEditDistance(a: string, b: string, max: number): number {
  const la = a.length;
  const lb = b.length;
  if (Math.abs(la - lb) > max) return max + 1;
  if (la >= 63 || lb >= 63) return max + 1;
  let prev2 = ROW_A;
  let prev = ROW_B;
  let cur = ROW_C;
  for (let j = 0; j <= lb; j++) prev[j] = j;
  for (let i = 1; i <= la; i++) {
    cur[0] = i;
    let rowMin = i;
    const ca = a.charCodeAt(i - 1);
    const caPrev = i > 1 ? a.charCodeAt(i - 2) : -1;
    for (let j = 1; j <= lb; j++) {
      const cb = b.charCodeAt(j - 1);
      let v = prev[j - 1]! + (ca === cb ? 0 : 1);
      const del = prev[j]! + 1;
      if (del < v) v = del;
      const ins = cur[j - 1]! + 1;
      if (ins < v) v = ins;
      if (j > 1 && ca === b.charCodeAt(j - 2) && caPrev === cb) {
        const tr = prev2[j - 2]! + 1;
        if (tr < v) v = tr;
      }
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    const t = prev2;
    prev2 = prev;
    prev = cur;
    cur = t;
  }
  return prev[lb]!;
}

/** 32-bit set of the characters of a word (letters a-z, other chars hashed into the top bits). */
function letterMask(w: string): number {
  let m = 0;
  for (let i = 0; i < w.length; i++) {
    const c = w.charCodeAt(i);
    m |= c >= 97 && c <= 122 ? 1 << (c - 97) : 1 << (26 + (c % 6));
  }
  return m;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}


// ---------------------------------------------------------------------------
// Index
// ---------------------------------------------------------------------------

interface Posting {
  docs: Int32Array;
  scores: Float64Array;
}

interface Alt {
  term: string; // stem
  w: number;
  /** Fallbacks (prefix expansions) do not set the word's shared idf, and score with min(own idf, shared idf). */
  fallback: boolean;
  /** Set by makeGroup. */
  idf: number;
}

interface Group {
  alts: Alt[];
  /** Optional groups (tail words of phrase synonyms) add score but do not count for coordination. */
  optional: boolean;
}

class BM25FIndex implements SearchIndex {
  readonly size: number;
  private readonly servers: string[];
  private readonly names: string[];
  private readonly summaries: string[];
  private readonly postings = new Map<string, Posting>();
  private readonly df: Map<string, number>;
  /** Surface words seen in the corpus, bucketed by length (for typo matching). */
  private readonly wordsByLength: string[][] = [];
  private readonly masksByLength: number[][] = [];
  private readonly surface = new Set<string>();
  /** Sorted distinct stems (for prefix matching). */
  private readonly sortedStems: string[];
  /** stem -> ids of servers whose name it designates. */
  private readonly serverTerms = new Map<string, number[]>();
  /** per-doc server id */
  private readonly docServer: Int32Array;
  private readonly synonyms = new Map<string, string[][]>();
  /** Per-doc meaningful stems of the tool name. */
  private readonly nameStems: string[][];
  private readonly serverDocs: number[][];

  constructor(docs: ToolDoc[]) {
    const n = docs.length;
    this.size = n;
    this.servers = new Array<string>(n);
    this.names = new Array<string>(n);
    this.summaries = new Array<string>(n);
    this.docServer = new Int32Array(n);

    // Per-doc, per-field term frequencies and lengths.
    const tfs: Map<string, number>[][] = [];
    const lens: number[][] = [];
    const avgLen = new Array<number>(NUM_FIELDS).fill(0);
    const serverIds = new Map<string, number>();
    const serverNames: string[] = [];
    // Tokenise + stem each distinct text once (parameter descriptions repeat a lot).
    const analyzed = new Map<string, string[]>();
    const analyze = (text: string): string[] => {
      let stems = analyzed.get(text);
      if (!stems) {
        stems = [];
        for (const tok of tokenize(text)) {
          if (STOP_WORDS.has(tok)) continue;
          this.addSurface(tok);
          stems.push(stem(tok));
        }
        analyzed.set(text, stems);
      }
      return stems;
    };

    for (let d = 0; d < n; d++) {
      const doc = (docs[d] ?? {}) as ToolDoc;
      const server = str(doc.server);
      const name = str(doc.name);
      const title = str(doc.title);
      const description = str(doc.description);
      this.servers[d] = server;
      this.names[d] = name;
      this.summaries[d] = summarize(description, title);
      let sid = serverIds.get(server);
      if (sid === undefined) {
        sid = serverNames.length;
        serverIds.set(server, sid);
        serverNames.push(server);
      }
      this.docServer[d] = sid;

      const [first, rest] = splitFirstSentence(description);
      const pNames: string[] = [];
      const pDescs: string[] = [];
      collectParams(doc.inputSchema, pNames, pDescs);

      const texts: string[][] = [[server], [name], [title], [first], [rest], pNames, pDescs];
      const fieldTfs: Map<string, number>[] = [];
      const fieldLens: number[] = [];
      for (let f = 0; f < NUM_FIELDS; f++) {
        const m = new Map<string, number>();
        let len = 0;
        for (const text of texts[f]!) {
          for (const s of analyze(text)) {
            m.set(s, (m.get(s) ?? 0) + 1);
            len++;
          }
        }
        // Whole server / tool name as one token as well ("google-maps" -> "googlemaps").
        if (f === F_SERVER || f === F_NAME) {
          const joined = tokenize(texts[f]![0]!).join("");
          if (joined && !m.has(joined)) {
            this.addSurface(joined);
            m.set(joined, 1);
          }
        }
        fieldTfs.push(m);
        fieldLens.push(len);
        avgLen[f]! += len;
      }
      tfs.push(fieldTfs);
      lens.push(fieldLens);
    }
    for (let f = 0; f < NUM_FIELDS; f++) avgLen[f] = n > 0 ? Math.max(avgLen[f]! / n, 1e-9) : 1;

    // Document frequencies and BM25F scores.
    const df = new Map<string, number>();
    for (const fieldTfs of tfs) {
      const seen = new Set<string>();
      for (const m of fieldTfs) for (const t of m.keys()) seen.add(t);
      for (const t of seen) df.set(t, (df.get(t) ?? 0) + 1);
    }
    // Server boilerplate: words in the descriptions/parameters of most tools of one server
    // ("It takes two arguments", "Error Responses: 400", shared auth parameters) say
    // nothing about what a particular tool does; they are down-weighted in that server.
    const serverSize = new Array<number>(serverNames.length).fill(0);
    const serverTermDocs = serverNames.map(() => new Map<string, number>()); // sid -> term -> docs
    for (let d = 0; d < n; d++) {
      const sid = this.docServer[d]!;
      serverSize[sid]!++;
      const counts = serverTermDocs[sid]!;
      const seen = new Set<string>();
      for (let f = F_TITLE; f < NUM_FIELDS; f++) for (const t of tfs[d]![f]!.keys()) seen.add(t);
      for (const t of seen) counts.set(t, (counts.get(t) ?? 0) + 1);
    }
    const acc = new Map<string, { docs: number[]; scores: number[] }>();
    for (let d = 0; d < n; d++) {
      const fieldTfs = tfs[d]!;
      const fieldLens = lens[d]!;
      const sid = this.docServer[d]!;
      const size = serverSize[sid]!;
      const counts = serverTermDocs[sid]!;
      const pseudo = new Map<string, number>();
      for (let f = 0; f < NUM_FIELDS; f++) {
        const norm = 1 - FIELD_B[f]! + (FIELD_B[f]! * fieldLens[f]!) / avgLen[f]!;
        const weight = FIELD_WEIGHT[f]! / norm;
        for (const [t, tf] of fieldTfs[f]!) {
          let w = tf * weight;
          if (f >= F_TITLE && size >= BOILERPLATE_MIN_TOOLS && counts.get(t)! / size >= BOILERPLATE_FRACTION) {
            w *= BOILERPLATE_WEIGHT;
          }
          pseudo.set(t, (pseudo.get(t) ?? 0) + w);
        }
      }
      for (const [t, tf] of pseudo) {
        // idf is applied at query time (per query word, shared by its synonyms).
        const score = (tf * (K1 + 1)) / (tf + K1);
        let p = acc.get(t);
        if (!p) acc.set(t, (p = { docs: [], scores: [] }));
        p.docs.push(d);
        p.scores.push(score);
      }
    }
    this.df = df;
    for (const [t, p] of acc) this.postings.set(t, { docs: Int32Array.from(p.docs), scores: Float64Array.from(p.scores) });
    // Prefix expansion targets real words only, not whole joined tool names.
    const words = new Set<string>();
    for (const stems of analyzed.values()) for (const t of stems) words.add(t);
    this.sortedStems = [...words].sort();

    // Server-designating terms: the whole server name ("github", "googlemaps") and its
    // first word ("google", "azure"), kept only when distinctive: rarely used by tools
    // of other servers (so "brave-search" does not turn every "search" into a boost).
    const candServers = new Map<string, Set<number>>();
    for (let sid = 0; sid < serverNames.length; sid++) {
      const toks = tokenize(serverNames[sid]!).filter((t) => !STOP_WORDS.has(t));
      if (toks.length === 0) continue;
      const cands = [toks.join(""), stem(toks[0]!)];
      for (const t of cands) {
        if (t.length < 3) continue;
        let set = candServers.get(t);
        if (!set) candServers.set(t, (set = new Set()));
        set.add(sid);
      }
    }
    for (const [t, sids] of candServers) {
      const p = this.postings.get(t);
      let outside = 0;
      if (p) for (const d of p.docs) if (!sids.has(this.docServer[d]!)) outside++;
      let outsideDocs = 0;
      for (const sid of serverIds.values()) if (!sids.has(sid)) outsideDocs += serverSize[sid]!;
      if (outsideDocs > 0 && outside / outsideDocs > SERVER_TERM_MAX_OUTSIDE) continue;
      this.serverTerms.set(t, [...sids].sort((a, b) => a - b));
    }

    // Name tokens for the name-coverage bonus, minus tokens shared by most tools of the
    // same server ("slack_", "browser_", "API-"), which carry no meaning of their own.
    const nameTokCount = new Map<string, number>(); // `${sid} ${stem}` -> tools
    const rawNameStems: string[][] = [];
    for (let d = 0; d < n; d++) {
      const stems = [...new Set(tokenize(this.names[d]!).filter((t) => !STOP_WORDS.has(t)).map(stem))];
      rawNameStems.push(stems);
      const sid = this.docServer[d]!;
      for (const st of stems) nameTokCount.set(`${sid} ${st}`, (nameTokCount.get(`${sid} ${st}`) ?? 0) + 1);
    }
    this.nameStems = rawNameStems.map((stems, d) => {
      const sid = this.docServer[d]!;
      const size = serverSize[sid]!;
      const serverToks = new Set(tokenize(serverNames[sid]!).map(stem));
      const kept = stems.filter((st) => !serverToks.has(st) && !(size >= 4 && nameTokCount.get(`${sid} ${st}`)! / size >= 0.5));
      return kept.length > 0 ? kept : stems;
    });

    // Docs by server (for server-term scoring).
    this.serverDocs = serverNames.map(() => [] as number[]);
    for (let d = 0; d < n; d++) this.serverDocs[this.docServer[d]!]!.push(d);

    // Synonym table keyed by stem.
    for (const group of SYNONYM_GROUPS) {
      const stemmed = group.map((phrase) => tokenize(phrase).map(stem));
      for (const [i, key] of stemmed.entries()) {
        if (key.length !== 1) continue;
        const k = key[0]!;
        let list = this.synonyms.get(k);
        if (!list) this.synonyms.set(k, (list = []));
        for (const [j, other] of stemmed.entries()) if (j !== i) list.push(other);
      }
    }
  }

  private addSurface(tok: string): void {
    if (this.surface.has(tok)) return;
    this.surface.add(tok);
    const bucket = this.wordsByLength[tok.length] ?? (this.wordsByLength[tok.length] = []);
    bucket.push(tok);
    const masks = this.masksByLength[tok.length] ?? (this.masksByLength[tok.length] = []);
    masks.push(letterMask(tok));
  }

  /** The most common vocabulary stems that start with `prefix` (excluding `prefix` itself). */
  private prefixMatches(prefix: string): string[] {
    const arr = this.sortedStems;
    let lo = 0;
    let hi = arr.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (arr[mid]! < prefix) lo = mid + 1;
      else hi = mid;
    }
    const out: string[] = [];
    for (let i = lo; i < arr.length && out.length < 200; i++) {
      const s = arr[i]!;
      if (!s.startsWith(prefix)) break;
      if (s !== prefix) out.push(s);
    }
    if (out.length <= MAX_PREFIX) return out;
    // Keep the most common completions (deterministic: sortedStems is sorted, sort is stable).
    const df = (t: string) => this.df.get(t) ?? 0;
    return out.sort((a, b) => df(b) - df(a)).slice(0, MAX_PREFIX);
  }

  /** Corpus words closest to an unknown word (edit distance 1, or 2 for long words). */
  private fuzzyMatches(word: string, maxDist = 2): { word: string; dist: number }[] {
    if (word.length < 3 || /^\d+$/.test(word)) return [];
    const max = Math.min(maxDist, word.length >= 8 ? 2 : 1);
    let best = max + 1;
    let out: string[] = [];
    const mask = letterMask(word);
    // Three-letter words only match by one missing letter ("lst" -> "list"): substitutions
    // in such short words would hit too many unrelated words.
    const minLen = word.length === 3 ? 4 : word.length - max;
    for (let len = minLen; len <= word.length + max; len++) {
      const bucket = this.wordsByLength[len];
      const masks = this.masksByLength[len];
      if (!bucket || !masks) continue;
      for (let i = 0; i < bucket.length; i++) {
        // Each edit changes at most two bits of the letter-set mask: cheap rejection.
        if (popcount(mask ^ masks[i]!) > 2 * Math.min(best, max)) continue;
        const cand = bucket[i]!;
        const dist = boundedEditDistance(word, cand, Math.min(best, max));
        if (dist < best) {
          best = dist;
          out = [cand];
        } else if (dist === best && dist <= max) {
          out.push(cand);
        }
      }
    }
    if (best > max) return [];
    // Prefer words whose stems are frequent in the corpus, deterministic order.
    const freq = (w: string) => this.postings.get(stem(w))?.docs.length ?? 0;
    out.sort((a, b) => freq(b) - freq(a) || (a < b ? -1 : a > b ? 1 : 0));
    return out.slice(0, MAX_FUZZY).map((w) => ({ word: w, dist: best }));
  }

  /** Turn the query into groups of weighted alternative stems. */
  private isKnown(word: string): boolean {
    const s = stem(word);
    return this.postings.has(s) || this.surface.has(word) || this.synonyms.has(s);
  }

  /** Split an unknown compound ("websearch") into two known words, if possible. */
  private splitCompound(word: string): [string, string] | undefined {
    for (let k = word.length - 3; k >= 3; k--) {
      const a = word.slice(0, k);
      const b = word.slice(k);
      if ((this.df.get(stem(a)) ?? 0) >= 2 && (this.df.get(stem(b)) ?? 0) >= 2) return [a, b];
    }
    return undefined;
  }

  private parseQuery(query: string): Group[] {
    const groups: Group[] = [];
    const tokens: { tok: string; fuzzy?: { word: string; dist: number }[] }[] = [];
    for (const tok of tokenize(query)) {
      if (STOP_WORDS.has(tok)) continue;
      if (tokens.length >= MAX_QUERY_WORDS) break;
      if (this.isKnown(tok)) {
        tokens.push({ tok });
        continue;
      }
      const fuzzy = this.fuzzyMatches(tok);
      const parts = tok.length >= 6 && !fuzzy.some((f) => f.dist === 1) ? this.splitCompound(tok) : undefined;
      if (parts) tokens.push({ tok: parts[0] }, { tok: parts[1] });
      else tokens.push({ tok, fuzzy });
    }
    // Adjacent words that form a known compound ("key vault" -> "keyvault").
    const joined: (string | undefined)[] = [];
    for (let i = 0; i + 1 < tokens.length; i++) {
      const c = tokens[i]!.tok + tokens[i + 1]!.tok;
      const cs = stem(c);
      joined.push(this.postings.has(cs) ? cs : this.postings.has(c) ? c : undefined);
    }

    for (const [i, { tok, fuzzy }] of tokens.entries()) {
      const alts = new Map<string, Alt>();
      const put = (term: string, w: number, fallback = false) => {
        const cur = alts.get(term);
        if (!cur) alts.set(term, { term, w, fallback, idf: 0 });
        else if (w > cur.w) {
          cur.w = w;
          cur.fallback = fallback;
        }
      };
      // Base forms: the word itself if known, otherwise its typo corrections; an unknown
      // word may also be an abbreviation, so its own prefix matches are kept too.
      const bases: { word: string; w: number }[] = [];
      if (!fuzzy) bases.push({ word: tok, w: 1 });
      else {
        for (const c of fuzzy) bases.push({ word: c.word, w: W_FUZZY[c.dist] ?? 0.3 });
        const ts = stem(tok);
        if (ts.length >= MIN_PREFIX) for (const p of this.prefixMatches(ts)) put(p, W_PREFIX, true);
      }

      const extraGroups: Alt[][] = [];
      for (const base of bases) {
        const bs = stem(base.word);
        put(bs, base.w);
        if (base.word !== bs && this.postings.has(base.word)) put(base.word, base.w);
        if (bs.length >= MIN_PREFIX) for (const p of this.prefixMatches(bs)) put(p, base.w * W_PREFIX, true);
        for (const syn of this.synonyms.get(bs) ?? []) {
          put(syn[0]!, base.w * W_SYNONYM);
          // Phrase synonym ("pr" -> "pull request"): the remaining words become optional groups.
          for (const extra of syn.slice(1)) {
            extraGroups.push([{ term: extra, w: base.w * W_SYNONYM, fallback: false, idf: 0 }]);
          }
        }
      }
      const before = i > 0 ? joined[i - 1] : undefined;
      const after = joined[i];
      if (before) put(before, W_COMPOUND);
      if (after) put(after, W_COMPOUND);
      groups.push(this.makeGroup([...alts.values()], false));
      for (const extra of extraGroups) groups.push(this.makeGroup(extra, true));
    }
    return groups;
  }

  private idfOf(df: number): number {
    return df > 0 ? Math.log(1 + (this.size - df + 0.5) / (df + 0.5)) : 0;
  }

  private makeGroup(alts: Alt[], optional: boolean): Group {
    // Synonyms share one idf (like Lucene's SynonymQuery): the idf of the most frequent
    // exact/synonym alternative, so a rare synonym ("make") is not worth more than a
    // common one ("create"). Fallbacks score at most min(own idf, shared idf).
    let maxDf = 0;
    let maxFallbackDf = 0;
    for (const a of alts) {
      const d = this.df.get(a.term) ?? 0;
      if (a.fallback) maxFallbackDf = Math.max(maxFallbackDf, d);
      else maxDf = Math.max(maxDf, d);
    }
    const shared = this.idfOf(maxDf > 0 ? maxDf : maxFallbackDf);
    for (const a of alts) a.idf = a.fallback ? Math.min(shared, this.idfOf(this.df.get(a.term) ?? 0)) : shared;
    return { alts, optional };
  }

  search(query: string, limit: number = DEFAULT_LIMIT): SearchHit[] {
    if (typeof query !== "string" || this.size === 0) return [];
    const lim =
      limit === Number.POSITIVE_INFINITY ? this.size : Math.max(0, Math.floor(Number.isFinite(limit) ? limit : DEFAULT_LIMIT));
    if (lim === 0) return [];
    const groups = this.parseQuery(query);
    if (groups.length === 0) return [];

    const n = this.size;
    const total = new Float64Array(n);
    const matched = new Float64Array(n);
    const groupBest = new Float64Array(n);
    const inGroup = new Uint8Array(n);
    const touched: number[] = [];
    const serverBoost = new Map<number, number>();
    /** Best weight of each stem anywhere in the query (for name coverage). */
    const queryTerms = new Map<string, number>();
    let required = 0;

    for (const group of groups) {
      if (!group.optional) required++;
      touched.length = 0;
      let named: { sids: number[]; w: number; idf: number } | undefined;
      for (const alt of group.alts) {
        const w = alt.w * alt.idf;
        if (alt.w > (queryTerms.get(alt.term) ?? 0)) queryTerms.set(alt.term, alt.w);
        const p = this.postings.get(alt.term);
        if (p) {
          const { docs, scores } = p;
          for (let i = 0; i < docs.length; i++) {
            const d = docs[i]!;
            const sc = scores[i]! * w;
            if (inGroup[d] === 0) {
              inGroup[d] = 1;
              touched.push(d);
            }
            if (sc > groupBest[d]!) groupBest[d] = sc;
          }
        }
        const sids = alt.fallback ? undefined : this.serverTerms.get(alt.term);
        if (sids) {
          for (const sid of sids) serverBoost.set(sid, Math.max(serverBoost.get(sid) ?? 0, alt.w));
          if (!named || alt.w > named.w) named = { sids, w: alt.w, idf: alt.idf };
        }
      }
      if (named) {
        // A word naming a server scores the same for all of that server's tools: a tool
        // repeating "Slack" in its description is not more relevant than its siblings.
        const c = named.w * named.idf * SERVER_FIELD_SAT;
        for (const sid of named.sids) {
          for (const d of this.serverDocs[sid]!) {
            if (inGroup[d] === 0) {
              inGroup[d] = 1;
              touched.push(d);
            }
            groupBest[d] = c;
          }
        }
      }
      for (const d of touched) {
        total[d]! += groupBest[d]!;
        if (!group.optional) matched[d]! += 1;
        groupBest[d] = 0;
        inGroup[d] = 0;
      }
    }

    const cand: number[] = [];
    const final = total; // reuse: final scores in place
    for (let d = 0; d < n; d++) {
      let score = total[d]!;
      if (!(score > 0)) continue;
      if (required > 0) score *= Math.pow(matched[d]! / required, COORD);
      const b = serverBoost.get(this.docServer[d]!);
      if (b !== undefined) score *= 1 + SERVER_BOOST * b;
      const stems = this.nameStems[d]!;
      if (stems.length > 0) {
        let cov = 0;
        for (const st of stems) cov += queryTerms.get(st) ?? 0;
        score *= 1 + (NAME_COVERAGE * cov) / stems.length;
      }
      if (!(score > 0)) continue;
      final[d] = score;
      cand.push(d);
    }
    cand.sort((x, y) => {
      const sx = final[x]!;
      const sy = final[y]!;
      if (sx !== sy) return sy - sx;
      const ax = this.servers[x]!;
      const ay = this.servers[y]!;
      if (ax !== ay) return ax < ay ? -1 : 1;
      const nx = this.names[x]!;
      const ny = this.names[y]!;
      if (nx !== ny) return nx < ny ? -1 : 1;
      return x - y;
    });
    const hits: SearchHit[] = [];
    for (let i = 0; i < cand.length && i < lim; i++) {
      const d = cand[i]!;
      hits.push({ server: this.servers[d]!, name: this.names[d]!, score: final[d]!, summary: this.summaries[d]! });
    }
    return hits;
  }
}

export function createSearchIndex(docs: ToolDoc[]): SearchIndex {
  return new BM25FIndex(Array.isArray(docs) ? docs : []);
}
