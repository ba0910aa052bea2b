/**
 * The words of an indexed corpus, for matching query words that are not in it: prefixes
 * ("perms" -> "permissions"), typos ("chanel" -> "channel") and compounds ("websearch").
 */
import { boundedEditDistance, letterMask, popcount } from "./edit-distance.ts";
import { stem } from "./tokenize.ts";

/** Max vocabulary expansions per query word. */
const MAX_PREFIX = 12;
const MAX_FUZZY = 6;

export interface VocabularySnapshot {
  df: [string, number][];
  surface: string[];
  stems: string[];
}

export class Vocabulary {
  /** Stem -> number of docs containing it. */
  readonly df = new Map<string, number>();
  /** Surface words seen in the corpus, bucketed by length (for typo matching). */
  readonly #wordsByLength: string[][] = [];
  readonly #masksByLength: number[][] = [];
  readonly #surface = new Set<string>();
  #sortedStems: string[] = [];

  addSurface(tok: string): void {
    if (this.#surface.has(tok)) return;
    this.#surface.add(tok);
    (this.#wordsByLength[tok.length] ??= []).push(tok);
    (this.#masksByLength[tok.length] ??= []).push(letterMask(tok));
  }

  hasSurface(tok: string): boolean {
    return this.#surface.has(tok);
  }

  /** Every surface word of the corpus. */
  surfaces(): Iterable<string> {
    return this.#surface;
  }

  /** Call once every doc is in: prefix matching needs the stems sorted. */
  seal(stems: Iterable<string>): void {
    this.#sortedStems = [...new Set(stems)].sort();
  }

  snapshot(): VocabularySnapshot {
    return { df: [...this.df], surface: [...this.#surface], stems: this.#sortedStems };
  }

  static restore(snap: VocabularySnapshot): Vocabulary {
    const v = new Vocabulary();
    for (const [t, n] of snap.df) v.df.set(t, n);
    for (const w of snap.surface) v.addSurface(w);
    v.#sortedStems = snap.stems;
    return v;
  }

  /** The most common vocabulary stems that start with `prefix` (excluding `prefix` itself). */
  prefixMatches(prefix: string): string[] {
    const arr = this.#sortedStems;
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
    // Keep the most common completions (deterministic: the list is sorted and sort is stable).
    const df = (t: string) => this.df.get(t) ?? 0;
    return out.sort((a, b) => df(b) - df(a)).slice(0, MAX_PREFIX);
  }

  /** Corpus words closest to an unknown word (edit distance 1, or 2 for words of 8+ letters). */
  fuzzyMatches(word: string, maxDist = 2): { word: string; dist: number }[] {
    if (word.length < 3 || /^\d+$/.test(word)) return [];
    const max = Math.min(maxDist, word.length >= 8 ? 2 : 1);
    let best = max + 1;
    let out: string[] = [];
    const mask = letterMask(word);
    // Three-letter words only match by one missing letter ("lst" -> "list"): substitutions
    // in such short words would hit too many unrelated words.
    const minLen = word.length === 3 ? 4 : word.length - max;
    for (let len = minLen; len <= word.length + max; len++) {
      const bucket = this.#wordsByLength[len];
      const masks = this.#masksByLength[len];
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
    const freq = (w: string) => this.df.get(stem(w)) ?? 0;
    out.sort((a, b) => freq(b) - freq(a) || (a < b ? -1 : a > b ? 1 : 0));
    return out.slice(0, MAX_FUZZY).map((w) => ({ word: w, dist: best }));
  }

  /** Split an unknown compound ("websearch") into two known words, if possible. */
  splitCompound(word: string): [string, string] | undefined {
    for (let k = word.length - 3; k >= 3; k--) {
      const a = word.slice(0, k);
      const b = word.slice(k);
      if ((this.df.get(stem(a)) ?? 0) >= 2 && (this.df.get(stem(b)) ?? 0) >= 2) return [a, b];
    }
    return undefined;
  }
}
