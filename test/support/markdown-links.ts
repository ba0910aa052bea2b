/**
 * What test/unit/docs-links.test.ts reads out of Markdown: the links a file makes (outside code) and
 * the anchors its headings get, slugged the way GitHub slugs them (github-slugger: lower case, every
 * character but letters, marks, digits, connector punctuation, spaces and hyphens dropped, spaces to
 * hyphens, a repeated slug numbered -1, -2, ...). Explicit `<a id="...">`/`<a name="...">` count too.
 */

export interface Link {
  line: number;
  target: string;
}

/** The file's lines with fenced code blocks blanked (line numbers kept). */
function withoutFences(text: string): string[] {
  let fence: string | undefined;
  return text.split("\n").map((line) => {
    const m = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fence === undefined && m) {
      fence = m[1]![0]!.repeat(m[1]!.length);
      return "";
    }
    if (fence !== undefined) {
      if (line.trim().startsWith(fence)) fence = undefined;
      return "";
    }
    return line;
  });
}

/** Inline code spans removed (their text is not a link), keeping the rest of the line. */
function withoutCodeSpans(line: string): string {
  return line.replace(/(`+)[\s\S]*?\1/g, "");
}

/** Every inline link, image and reference definition outside code. */
export function linksOf(text: string): Link[] {
  const links: Link[] = [];
  withoutFences(text).forEach((raw, i) => {
    const line = withoutCodeSpans(raw);
    // [text](target "title"), whose text may hold an image (a badge), and ![alt](target).
    const target = String.raw`\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`;
    for (const re of [
      new RegExp(String.raw`(?<!!)\[(?:[^[\]]|\[[^\]]*\])*\]${target}`, "g"),
      new RegExp(String.raw`!\[[^\]]*\]${target}`, "g"),
    ]) {
      for (const m of line.matchAll(re)) links.push({ line: i + 1, target: m[1]! });
    }
    const def = /^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(\s|$)/.exec(line);
    if (def) links.push({ line: i + 1, target: def[1]! });
  });
  return links;
}

/** GitHub's slug of a heading's text. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // a link's text
    .replace(/<[^>]+>/g, "") // inline HTML
    .replace(/`/g, "");
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** Every anchor a file defines: its headings' slugs (numbered when repeated) and explicit ids. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutFences(text)) {
    const h = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (h) {
      const base = slug(h[1]!);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
  }
  return anchors;
}
