/**
 * Sentences and summaries of tool descriptions, shared by the signature renderer and the search
 * index: one notion of "first sentence" everywhere.
 */

/** Collapse all whitespace (and strip control characters) to single spaces. */
export function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, " ")
    .replace(/\s+/g, " ")
    .trim();
}

/** The first paragraph (up to a blank line), on one line. */
export function firstParagraph(text: string): string {
  const trimmed = text.replace(/^\s+/, "");
  const para = trimmed.split(/\r?\n[ \t]*\r?\n/)[0] ?? "";
  return oneLine(para);
}

/** Cut at a word boundary and add an ellipsis if longer than `max`. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = text.slice(0, Math.max(1, max - 1));
  const space = cut.lastIndexOf(" ");
  if (space > max * 0.6) cut = cut.slice(0, space);
  else if (/[\ud800-\udbff]$/.test(cut)) cut = cut.slice(0, -1); // never split a surrogate pair
  return cut.replace(/[\s,;:.\-]+$/, "") + "…";
}

const ABBREVIATIONS = new Set([
  "e.g",
  "i.e",
  "etc",
  "vs",
  "approx",
  "incl",
  "esp",
  "cf",
  "ex",
  "eg",
  "ie",
  "mr",
  "mrs",
  "ms",
  "dr",
  "st",
  "no",
  "fig",
  "resp",
  "min",
  "max",
  "avg",
]);

/** Split one-line text into sentences (abbreviation-aware, conservative; 。！？ end sentences too). */
export function sentences(para: string): string[] {
  const out: string[] = [];
  const re = /[.!?](?=\s|$)|[。！？]/g;
  let start = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(para)) !== null) {
    const end = m.index;
    if (m[0] === "." || m[0] === "!" || m[0] === "?") {
      const word = (para.slice(start, end).split(" ").pop() ?? "").replace(/^[("'`\[]+/, "").toLowerCase();
      if (ABBREVIATIONS.has(word)) continue;
      if (/^[a-z]$/i.test(word)) continue; // single-letter initial like "J."
      const rest = para.slice(end + 1).trimStart();
      if (rest !== "" && /^[a-z0-9]/.test(rest)) continue; // "... e.g. foo", "v. 2"
    }
    const s = para.slice(start, end + 1).trim();
    if (s) out.push(s);
    start = end + 1;
  }
  const tail = para.slice(start).trim();
  if (tail) out.push(tail);
  return out;
}

/**
 * First sentence of the first paragraph. A first line with no end punctuation followed by a line
 * that starts a new sentence (a capital letter) is a sentence of its own: a heading or a list item,
 * not a wrapped line.
 */
export function firstSentence(text: string): string {
  const lines = text.replace(/^\s+/, "").split(/\r?\n/);
  const first = oneLine(lines[0] ?? "");
  if (lines.length > 1 && first && !/[.!?:;,。！？]$/.test(first) && /^\s*\p{Lu}/u.test(lines[1] ?? "")) return sentences(first)[0] ?? "";
  return sentences(firstParagraph(text))[0] ?? "";
}

/**
 * Leading sentences of one-line `text`: always the first (truncated to `max`),
 * then following ones while the total stays within `soft`.
 */
export function leadSentences(text: string, soft: number, max: number): string {
  const parts = sentences(text);
  if (parts.length === 0) return "";
  let out = parts[0] ?? "";
  for (const p of parts.slice(1)) {
    if (out.length + 1 + p.length > soft) break;
    out += " " + p;
  }
  return truncate(out, max);
}

/** One-line summary of a tool: its description's first sentence, else its title, at most `max` chars. */
export function summarize(description: unknown, title: unknown, max = 160): string {
  const text = firstSentence(typeof description === "string" ? description : "") || oneLine(typeof title === "string" ? title : "");
  return truncate(text, max);
}
