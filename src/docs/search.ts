/**
 * Tool-doc search: ranks the tools of many MCP servers against a free-text request ("open a bug
 * report in a github repo", "how high above sea level is this point", "slak chanel histroy").
 *
 * Two scores, fused (see MEANING_WEIGHT):
 *  - words (search/bm25f.ts, search/query.ts): BM25F over the tool's fields, with typo, prefix,
 *    compound and abbreviation matching;
 *  - meaning (search/semantic.ts): built-in static word vectors distilled from a sentence encoder,
 *    so a request whose words the tools do not use still finds them; it weighs in more the more
 *    the request has words the tools do not use.
 * Sentences that give the model orders ("STOP and use this tool NOW") are not indexed
 * (search/directives.ts). Without the word vectors loaded the index is words-only.
 * Pure TypeScript, no runtime-specific APIs.
 */
import type { WordVectors } from "./semantic/word-vectors-format.ts";
import { loadedWordVectors } from "./semantic/word-vectors.ts";
import { Bm25fIndex, type Bm25fSnapshot } from "./search/bm25f.ts";
import { docFields } from "./search/fields.ts";
import { loadedForeignWords } from "./search/foreign.ts";
import { type HanLexicon, loadedHanLexicon } from "./search/han-lexicon.ts";
import { parseQuery } from "./search/query.ts";
import { SemanticIndex, type SemanticSnapshot } from "./search/semantic.ts";
import { summarize } from "./text.ts";

export { loadWordVectors } from "./semantic/word-vectors.ts";
export { loadForeignWords } from "./search/foreign.ts";
export { hasHan, loadHanLexicon } from "./search/han-lexicon.ts";
export { stem, tokenize } from "./search/tokenize.ts";

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
  /** First sentence of the description (or the title), at most 160 chars. */
  summary: string;
}

export interface SearchIndex {
  search(query: string, limit?: number): SearchHit[];
  readonly size: number;
  /** The built index as JSON, for restoreSearchIndex() (the pool keeps it on disk). */
  snapshot(): string;
}

/** Bump when the analysis changes: older snapshots are rebuilt. */
const SNAPSHOT_FORMAT = 9;

interface Snapshot {
  format: number;
  bm25: Bm25fSnapshot;
  semantic?: SemanticSnapshot;
}

export interface SearchIndexOptions {
  /** General word knowledge; default: the built-in vectors if already loaded (loadWordVectors()). `null`: words only. */
  wordVectors?: WordVectors | null;
  /**
   * The Chinese-English word list, for tools described in Chinese; default: the list if already loaded
   * (loadHanLexicon(): load it first when a doc has Chinese text). `null`: their Chinese words only.
   */
  han?: HanLexicon | null;
}

const DEFAULT_LIMIT = 10;
/**
 * Score fusion: a tool's word score relative to the best one (1 for the best), plus MEANING_WEIGHT
 * for each standard deviation its cosine to the request stands above the mean cosine over all tools
 * (only above the mean). The weight grows with the share of the request's words the tools do not
 * use: from MEANING_WEIGHT * MEANING_FLOOR when word matching places every word to MEANING_WEIGHT
 * when it places none. Chosen on the development files (held-out files never tuned on); it replaced
 * weighted reciprocal rank fusion, which discarded how far apart the scores are. With the vectors
 * distilled from all-MiniLM-L6-v2 the meaning counts for more than it did with Universal Sentence
 * Encoder lite's (0.125, floor 0.6): development files 0.752 / 0.906 top-1 / recall@5 against 0.744 /
 * 0.901 at the old weights (0.745 / 0.891 with the old vectors); 0.18-0.35 and floors 0.3-0.5 alike.
 */
const MEANING_WEIGHT = 0.3;
const MEANING_FLOOR = 0.3;
/**
 * A whole word of the word vectors whose smooth-inverse-frequency weight is below this is a common
 * word of the language (roughly the 19,000 most frequent English words): query.ts does not take it
 * for a typo. Chosen on the development files (0.99-0.997 alike).
 */
const COMMON_WORD_WEIGHT = 0.995;

class FusedIndex implements SearchIndex {
  readonly size: number;
  readonly #bm25: Bm25fIndex;
  readonly #semantic: SemanticIndex | undefined;
  readonly #servers: string[];
  readonly #names: string[];
  readonly #summaries: string[];
  readonly #isWord: ((word: string) => boolean) | undefined;

  constructor(docs: ToolDoc[], wordVectors: WordVectors | undefined, snap?: Snapshot, han?: HanLexicon) {
    const str = (x: unknown) => (typeof x === "string" ? x : "");
    this.size = docs.length;
    this.#servers = docs.map((d) => str(d?.server));
    this.#names = docs.map((d) => str(d?.name));
    this.#summaries = docs.map((d) => summarize(d?.description, d?.title));
    const fields = snap ? [] : docs.map((d) => docFields((d ?? {}) as ToolDoc, han));
    this.#bm25 = new Bm25fIndex(fields, snap?.bm25);
    this.#semantic = wordVectors ? new SemanticIndex(wordVectors, fields, snap?.semantic) : undefined;
    this.#isWord = wordVectors ? (w) => isCommonWord(wordVectors, w) : undefined;
  }

  snapshot(): string {
    const snap: Snapshot = { format: SNAPSHOT_FORMAT, bm25: this.#bm25.snapshot(), semantic: this.#semantic?.snapshot() };
    return JSON.stringify(snap);
  }

  search(query: string, limit: number = DEFAULT_LIMIT): SearchHit[] {
    if (typeof query !== "string" || this.size === 0) return [];
    const lim = limit === Number.POSITIVE_INFINITY ? this.size : Math.max(0, Math.floor(Number.isFinite(limit) ? limit : DEFAULT_LIMIT));
    if (lim === 0) return [];
    const { groups, words, unmatched, intent, valueParams } = parseQuery(
      query,
      this.#bm25,
      this.#isWord,
      loadedHanLexicon(),
      loadedForeignWords(),
    );
    if (groups.length === 0) return [];
    const lexical = this.#bm25.score(groups, intent, valueParams);
    const meaningWeight = MEANING_WEIGHT * (MEANING_FLOOR + (1 - MEANING_FLOOR) * unmatched);
    const meaning = meaningWeight > 0 ? this.#semantic?.score(words) : undefined;
    const fused = new Float64Array(this.size);
    const cand: number[] = [];
    if (meaning) {
      let best = 0;
      let mean = 0;
      for (let d = 0; d < this.size; d++) {
        if (lexical[d]! > best) best = lexical[d]!;
        mean += meaning[d]!;
      }
      mean /= this.size;
      let variance = 0;
      for (let d = 0; d < this.size; d++) variance += (meaning[d]! - mean) ** 2;
      const sd = Math.sqrt(variance / this.size) || 1;
      const semRank = ranks(meaning, () => true);
      for (let d = 0; d < this.size; d++) {
        fused[d] = (best > 0 ? lexical[d]! / best : 0) + meaningWeight * Math.max(0, (meaning[d]! - mean) / sd);
        // Tools no word matched come in only when the meaning ranks them among the first `lim`.
        if (lexical[d]! > 0 || semRank[d]! <= lim) cand.push(d);
      }
    } else {
      for (let d = 0; d < this.size; d++)
        if (lexical[d]! > 0) {
          fused[d] = lexical[d]!;
          cand.push(d);
        }
    }
    cand.sort((x, y) => fused[y]! - fused[x]! || this.#order(x, y));
    return cand
      .slice(0, lim)
      .map((d) => ({ server: this.#servers[d]!, name: this.#names[d]!, score: fused[d]!, summary: this.#summaries[d]! }));
  }

  /** Deterministic tie-break: server, then tool name. */
  #order(x: number, y: number): number {
    const ax = this.#servers[x]!;
    const ay = this.#servers[y]!;
    if (ax !== ay) return ax < ay ? -1 : 1;
    const nx = this.#names[x]!;
    const ny = this.#names[y]!;
    if (nx !== ny) return nx < ny ? -1 : 1;
    return x - y;
  }
}

function isCommonWord(wv: WordVectors, word: string): boolean {
  const i = wv.index.get(word);
  return i !== undefined && Number.isNaN(wv.logp[i]!) && wv.weights[i]! < COMMON_WORD_WEIGHT;
}

/** 1-based rank of each doc by descending score among docs passing `keep` (0 for the others); ties share no rank (deterministic by index). */
function ranks(scores: ArrayLike<number>, keep: (d: number) => boolean): Int32Array {
  const idx: number[] = [];
  for (let d = 0; d < scores.length; d++) if (keep(d)) idx.push(d);
  idx.sort((a, b) => scores[b]! - scores[a]! || a - b);
  const out = new Int32Array(scores.length);
  for (let r = 0; r < idx.length; r++) out[idx[r]!] = r + 1;
  return out;
}

/**
 * An index from snapshot() of an index over the same docs (in the same order), or undefined when
 * the snapshot is unreadable, of another format or of other docs: then build one.
 */
export function restoreSearchIndex(docs: ToolDoc[], json: string, opts: SearchIndexOptions = {}): SearchIndex | undefined {
  try {
    const snap = JSON.parse(json) as Snapshot;
    if (snap?.format !== SNAPSHOT_FORMAT || snap.bm25?.size !== docs.length) return undefined;
    const wv = opts.wordVectors === null ? undefined : (opts.wordVectors ?? loadedWordVectors());
    if (
      wv &&
      (!snap.semantic || snap.semantic.dims !== wv.dims || snap.semantic.n !== docs.length || typeof snap.semantic.docs !== "string")
    )
      return undefined;
    return new FusedIndex(docs, wv, snap);
  } catch {
    return undefined;
  }
}

export function createSearchIndex(docs: ToolDoc[], opts: SearchIndexOptions = {}): SearchIndex {
  const wv = opts.wordVectors === null ? undefined : (opts.wordVectors ?? loadedWordVectors());
  const han = opts.han === null ? undefined : (opts.han ?? loadedHanLexicon());
  return new FusedIndex(Array.isArray(docs) ? docs : [], wv, undefined, han);
}
