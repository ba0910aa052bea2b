/**
 * Everyday words and the words APIs use for the same thing ("a popup came up": dialog; "pause for 3
 * seconds": wait; "how much cash": balance; "xhr": network request), from a thesaurus of software
 * requests (src/docs/semantic/thesaurus.txt, written for this project from general knowledge: one group of
 * interchangeable words or phrases per line).
 *
 * A phrase of the thesaurus found in a request (longest first, by stems, stop words included: "get rid
 * of", "on my plate") stands also for the other phrases of its groups; query.ts adds them as weaker
 * alternatives of the request's word.
 */
import THESAURUS_TEXT from "../semantic/thesaurus.txt" with { type: "text" };
import { STOP_WORDS, stem, tokenize } from "./tokenize.ts";

export interface ThesaurusMatch {
  /** The matched phrase: request tokens [start, end). */
  start: number;
  end: number;
  /** The other phrases of its groups, each as its words (lower case), stop words left out. */
  others: string[][];
}

/** Particles of phrasal verbs that are not stop words. */
const PARTICLES = new Set("off out down over back away around through along".split(" "));
/** The longest phrase, in words. */
const MAX_PHRASE = 6;

export class Thesaurus {
  /** A phrase's stems joined by spaces -> the groups it belongs to. */
  readonly #phrases = new Map<string, number[]>();
  /** Each group: its phrases, as words without stop words, the head word last (and the phrase's key). */
  readonly #groups: { key: string; words: string[] }[][] = [];
  /** Longest phrase (in words) starting with each stem. */
  readonly #longest = new Map<string, number>();

  constructor(text: string) {
    for (const line of text.split("\n")) {
      if (line.trim() === "" || line.startsWith("#")) continue;
      const group: { key: string; words: string[]; first: string; length: number }[] = [];
      for (const phrase of line.split(",")) {
        const toks = tokenize(phrase);
        const words = toks.filter((t) => !STOP_WORDS.has(t));
        if (words.length === 0 || toks.length > MAX_PHRASE) continue;
        // A verb with its particle ("sign off", "spin up") is headed by the verb: last, as a noun phrase's head is.
        if (words.length > 1 && PARTICLES.has(words[words.length - 1]!)) words.push(words.shift()!);
        const stems = toks.map(stem);
        const key = stems.join(" ");
        if (!group.some((p) => p.key === key)) group.push({ key, words, first: stems[0]!, length: stems.length });
      }
      if (group.length < 2) continue;
      const g = this.#groups.length;
      this.#groups.push(group.map(({ key, words }) => ({ key, words })));
      for (const { key, first, length } of group) {
        const groups = this.#phrases.get(key);
        if (!groups) this.#phrases.set(key, [g]);
        else if (!groups.includes(g)) groups.push(g);
        this.#longest.set(first, Math.max(this.#longest.get(first) ?? 0, length));
      }
    }
  }

  /** Number of groups. */
  get size(): number {
    return this.#groups.length;
  }

  /**
   * The thesaurus's phrases in a request's tokens (lower case): at each word, the longest phrase starting
   * there ("confirmation popup", then "popup").
   */
  matches(tokens: readonly string[]): ThesaurusMatch[] {
    const stems = tokens.map(stem);
    const out: ThesaurusMatch[] = [];
    for (let i = 0; i < stems.length; i++) {
      for (let n = Math.min(this.#longest.get(stems[i]!) ?? 0, stems.length - i); n >= 1; n--) {
        const key = stems.slice(i, i + n).join(" ");
        const groups = this.#phrases.get(key);
        if (!groups) continue;
        const others: string[][] = [];
        const seen = new Set<string>([key]);
        for (const g of groups)
          for (const p of this.#groups[g]!)
            if (!seen.has(p.key)) {
              seen.add(p.key);
              others.push(p.words);
            }
        out.push({ start: i, end: i + n, others });
        break;
      }
    }
    return out;
  }
}

let built: Thesaurus | undefined;

/** The built-in thesaurus, parsed on first use (~1,200 groups: ~50 ms on a 2-core machine, most of it code running the first time). */
export function thesaurus(): Thesaurus {
  built ??= new Thesaurus(THESAURUS_TEXT);
  return built;
}
