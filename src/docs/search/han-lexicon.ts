/**
 * Chinese requests for tools described in English: the words of a run of Han characters, found by longest
 * match in a Chinese-English word list (src/docs/semantic/han-lexicon.txt, from CC-CEDICT, CC BY-SA 4.0;
 * scripts/build-han-lexicon.ts), each with the English words of its senses.
 *
 * The list is read only when a request has Han characters (`loadHanLexicon`, awaited by the caller), and is
 * kept as its text with an index of line starts: a lookup is a binary search, ~4 MB held, nothing parsed.
 */
import { readFile } from "node:fs/promises";
import { JS_HOST } from "../../host/process.ts";

export const HAN_RUN = /\p{Script=Han}+/gu;
const HAS_HAN = /\p{Script=Han}/u;
/** The longest word of the list, in characters. */
const MAX_WORD = 4;

export interface HanWord {
  /** The Chinese word as it appears in the request. */
  word: string;
  /** English words of each sense, the first sense first. */
  senses: string[][];
}

export class HanLexicon {
  readonly #text: string;
  readonly #starts: Int32Array;

  constructor(text: string) {
    this.#text = text;
    const starts: number[] = [];
    for (let i = 0; i < text.length; ) {
      starts.push(i);
      const nl = text.indexOf("\n", i);
      if (nl < 0) break;
      i = nl + 1;
    }
    this.#starts = Int32Array.from(starts);
  }

  get size(): number {
    return this.#starts.length;
  }

  /** The senses of exactly this word, or undefined. */
  lookup(word: string): string[][] | undefined {
    const text = this.#text;
    let lo = 0;
    let hi = this.#starts.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const start = this.#starts[mid]!;
      const tab = text.indexOf("\t", start);
      const key = text.slice(start, tab);
      if (key === word) {
        const end = text.indexOf("\n", tab);
        return text
          .slice(tab + 1, end < 0 ? undefined : end)
          .split("|")
          .map((s) => s.split(" "));
      }
      if (key < word) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }

  /** The words of a request's Han runs, longest match first, left to right; characters not in the list are skipped. */
  words(query: string): HanWord[] {
    const out: HanWord[] = [];
    for (const m of query.matchAll(HAN_RUN)) {
      const chars = [...m[0]];
      let i = 0;
      while (i < chars.length) {
        let n = Math.min(MAX_WORD, chars.length - i);
        for (; n >= 1; n--) {
          const word = chars.slice(i, i + n).join("");
          const senses = this.lookup(word);
          if (senses) {
            out.push({ word, senses });
            break;
          }
        }
        i += Math.max(n, 1);
      }
    }
    return out;
  }
}

export function hasHan(text: string): boolean {
  return HAS_HAN.test(text);
}

let cached: HanLexicon | undefined;

/** The word list (read once, on the first request with Han characters). */
export async function loadHanLexicon(): Promise<HanLexicon> {
  if (cached) return cached;
  // As word-vectors.ts: a file import makes `bun build --compile` embed the file; Deno reads it beside this module.
  const file =
    JS_HOST === "deno"
      ? new URL("../semantic/han-lexicon.txt", import.meta.url)
      : (await import("../semantic/han-lexicon.txt", { with: { type: "file" } })).default;
  cached ??= new HanLexicon(await readFile(file, "utf8"));
  return cached;
}

/** The word list if already read. */
export function loadedHanLexicon(): HanLexicon | undefined {
  return cached;
}
