/** Words of queries and tool docs: splitting, stop words and stems. */
import { stemmer } from "stemmer";

export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "a an the this that these those of in on at to for from by with into onto about " +
    "and or but if then than so as is are be been being was were am do does did " +
    "i me my mine we us our you your it its they them their he she his her " +
    "can could should would will shall may might must please " +
    "some any each every there here what which how where when why " +
    "want need like just up via also too very much such have has had " +
    // What an apostrophe leaves of a contraction: "what's", "don't", "we'll", "they're", "I've", "I'd", "I'm".
    "s t ll re ve d m"
  ).split(" "),
);

const RE_UPPER = /\p{Lu}/u;
const RE_LOWER = /\p{L}/u; // any other letter counts as lowercase
const RE_DIGIT = /\p{N}/u;
/** Han, Hiragana, Katakana, Hangul: no spaces between words, so each character is a token. */
const RE_CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/** 0 = separator, 1 = lowercase letter, 2 = uppercase letter, 3 = digit, 4 = CJK character. */
function charClass(c: number, text: string, i: number): number {
  if (c >= 97 && c <= 122) return 1;
  if (c >= 65 && c <= 90) return 2;
  if (c >= 48 && c <= 57) return 3;
  if (c < 128) return 0;
  if (c >= 0xd800 && c <= 0xdfff) return 0; // astral chars (emoji etc.) separate words
  const ch = text[i]!;
  if (RE_CJK.test(ch)) return 4;
  if (RE_UPPER.test(ch)) return 2;
  if (RE_LOWER.test(ch)) return 1;
  if (RE_DIGIT.test(ch)) return 3;
  return 0;
}

/**
 * Split into lowercase word tokens; camelCase, snake_case, kebab-case and punctuation all separate
 * words. Runs of CJK characters become overlapping character pairs ("地理编码" -> 地理 理编 编码),
 * the usual way to index text written without spaces.
 */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  if (typeof text !== "string") return out;
  const n = text.length;
  let start = -1;
  let prev = 0;
  for (let i = 0; i <= n; i++) {
    const cls = i < n ? charClass(text.charCodeAt(i), text, i) : 0;
    if (cls === 4) {
      if (start >= 0) pushToken(out, text, start, i);
      start = -1;
      let j = i + 1;
      while (j < n && charClass(text.charCodeAt(j), text, j) === 4) j++;
      if (j - i === 1) out.push(text[i]!);
      for (let k = i; k + 1 < j; k++) out.push(text.slice(k, k + 2));
      i = j - 1;
      prev = 0;
      continue;
    }
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

const tokenCache = new Map<string, readonly string[]>();

/** tokenize(), remembered for texts seen before (tool docs repeat across index builds). */
export function tokens(text: string): readonly string[] {
  let t = tokenCache.get(text);
  if (!t) {
    t = tokenize(text);
    if (tokenCache.size > 50_000) tokenCache.clear();
    tokenCache.set(text, t);
  }
  return t;
}

function pushToken(out: string[], text: string, start: number, end: number): void {
  if (end - start > 40) return;
  out.push(text.slice(start, end).toLowerCase());
}

const stemCache = new Map<string, string>();

/** Porter stem of a lowercase word (the `stemmer` package), cached. */
export function stem(word: string): string {
  let s = stemCache.get(word);
  if (s === undefined) {
    s = /^[a-z]+$/.test(word) ? stemmer(word) : word;
    if (stemCache.size < 50_000) stemCache.set(word, s);
  }
  return s;
}
