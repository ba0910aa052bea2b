/**
 * The meaning channel: each tool and each query becomes the weighted mean of the built-in static
 * word vectors (see scripts/build-word-vectors.ts: a sentence encoder distilled to one vector per
 * word or word piece), weighted by smooth inverse frequency (Arora et al. 2017, "A simple but
 * tough-to-beat baseline for sentence embeddings"), with the corpus's common direction removed;
 * tools rank by cosine. It relates "altitude" to "elevation" without any table of phrasings.
 */
import { spell } from "../semantic/pieces.ts";
import type { WordVectors } from "../semantic/word-vectors-format.ts";
import { type DocFields, NUM_FIELDS } from "./fields.ts";
import { STOP_WORDS, tokens } from "./tokenize.ts";

/** How much each field contributes to a tool's vector: server, name, title, first sentence, rest, parameter names, parameter descriptions. */
const FIELD_WEIGHT = [0.5, 2, 1, 1, 0.5, 0.5, 0.25];

const SPELLINGS = new WeakMap<WordVectors, Map<string, { id: number; share: number }[]>>();

/** Spellings of words in entries, shared by every index over the same vectors. */
function spellings(wv: WordVectors): Map<string, { id: number; share: number }[]> {
  let m = SPELLINGS.get(wv);
  if (!m) SPELLINGS.set(wv, (m = new Map()));
  return m;
}

export interface SemanticSnapshot {
  dims: number;
  /** Number of tools. */
  n: number;
  /** The tools' vectors: float32, little-endian, base64 (a JSON array of 256,000 numbers took 35 ms more to read). */
  docs: string;
  common: number[];
}

export class SemanticIndex {
  readonly #wv: WordVectors;
  readonly #dims: number;
  readonly #docs: Float32Array;
  readonly #n: number;
  readonly #common: Float32Array;
  readonly #wordCache: Map<string, { id: number; share: number }[]>;

  constructor(wv: WordVectors, fields: DocFields[], snapshot?: SemanticSnapshot) {
    this.#wv = wv;
    this.#wordCache = spellings(wv);
    const dims = (this.#dims = wv.dims);
    if (snapshot && snapshot.dims === dims) {
      this.#n = snapshot.n;
      this.#docs = fromBase64(snapshot.docs);
      this.#common = Float32Array.from(snapshot.common);
      // restoreSearchIndex() reads this as "build anew".
      if (this.#docs.length !== this.#n * dims || this.#common.length !== dims) throw new Error("semantic snapshot of another size");
      return;
    }
    const n = (this.#n = fields.length);
    this.#docs = new Float32Array(n * dims);
    const tmp = new Float32Array(dims);
    for (let d = 0; d < n; d++) {
      tmp.fill(0);
      const f = fields[d]!;
      for (let fi = 0; fi < NUM_FIELDS; fi++) {
        const seen = new Set<string>();
        for (const text of f.texts[fi]!) {
          for (const tok of tokens(text)) {
            // Each distinct word once per field: repetition says little about meaning.
            if (STOP_WORDS.has(tok) || seen.has(tok)) continue;
            seen.add(tok);
            this.#add(tmp, tok, FIELD_WEIGHT[fi]!);
          }
        }
      }
      this.#docs.set(tmp, d * dims);
    }
    // Remove the first principal direction shared by all tools (SIF's common component).
    const common = firstPrincipal(this.#docs, n, dims);
    for (let d = 0; d < n; d++) {
      const v = this.#docs.subarray(d * dims, (d + 1) * dims);
      removeAndNormalise(v, common);
    }
    // Rounded as snapshot() rounds them, so a restored index scores exactly like this one.
    for (let i = 0; i < this.#docs.length; i++) this.#docs[i] = round(this.#docs[i]!);
    this.#common = common.map(round);
  }

  /** Adds w * weight(word) * vector(word) to acc (spelled from pieces if need be); false when unknown. */
  #add(acc: Float32Array, word: string, w: number): boolean {
    const wv = this.#wv;
    let parts = this.#wordCache.get(word);
    if (parts === undefined) {
      parts = spell(wv, word);
      if (this.#wordCache.size < 100_000) this.#wordCache.set(word, parts);
    }
    if (parts.length === 0) return false;
    const comps = wv.components;
    for (const { id, share } of parts) {
      const scale = wv.scales[id]! * wv.weights[id]! * w * share;
      const base = id * this.#dims;
      for (let k = 0; k < this.#dims; k++) acc[k]! += comps[base + k]! * scale;
    }
    return true;
  }

  snapshot(): SemanticSnapshot {
    return { dims: this.#dims, n: this.#n, docs: toBase64(this.#docs), common: [...this.#common].map(round) };
  }

  /** Cosine similarity of every tool to the query words; undefined when no word is known. */
  score(words: { word: string; w: number }[]): Float32Array | undefined {
    const q = new Float32Array(this.#dims);
    let known = 0;
    for (const { word, w } of words) if (this.#add(q, word, w)) known++;
    if (known === 0) return undefined;
    removeAndNormalise(q, this.#common);
    const out = new Float32Array(this.#n);
    const docs = this.#docs;
    const dims = this.#dims;
    for (let d = 0, base = 0; d < this.#n; d++, base += dims) {
      let s = 0;
      for (let k = 0; k < dims; k++) s += docs[base + k]! * q[k]!;
      out[d] = s;
    }
    return out;
  }
}

function removeAndNormalise(v: Float32Array, u: Float32Array): void {
  let dot = 0;
  for (let k = 0; k < v.length; k++) dot += v[k]! * u[k]!;
  let norm = 0;
  for (let k = 0; k < v.length; k++) {
    v[k]! -= dot * u[k]!;
    norm += v[k]! * v[k]!;
  }
  norm = Math.sqrt(norm);
  if (norm > 0) for (let k = 0; k < v.length; k++) v[k]! /= norm;
}

/**
 * First principal direction of n row vectors (power iteration on X^T X, unit length), stopped once
 * an iteration moves it by less than 1e-4 (in 5-8 iterations on the catalogs: the tools share one
 * strong direction, so the iteration converges fast).
 */
function firstPrincipal(x: Float32Array, n: number, dims: number): Float32Array {
  const u = new Float32Array(dims).fill(1 / Math.sqrt(dims));
  const next = new Float64Array(dims);
  let moved = 1;
  for (let iter = 0; iter < 20 && n > 0 && moved > 1e-4; iter++) {
    next.fill(0);
    for (let d = 0, base = 0; d < n; d++, base += dims) {
      let dot = 0;
      for (let k = 0; k < dims; k++) dot += x[base + k]! * u[k]!;
      for (let k = 0; k < dims; k++) next[k]! += dot * x[base + k]!;
    }
    let norm = 0;
    for (let k = 0; k < dims; k++) norm += next[k]! * next[k]!;
    norm = Math.sqrt(norm);
    if (!(norm > 0)) break;
    moved = 0;
    for (let k = 0; k < dims; k++) {
      const v = next[k]! / norm;
      moved = Math.max(moved, Math.abs(v - u[k]!));
      u[k] = v;
    }
  }
  return u;
}

function toBase64(f: Float32Array): string {
  const bytes = new Uint8Array(f.buffer, f.byteOffset, f.byteLength);
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

/** The vectors of toBase64(); a string of the wrong length gives an empty array (the constructor checks the size). */
function fromBase64(s: string): Float32Array {
  const bin = atob(s);
  if (bin.length % 4 !== 0) return new Float32Array(0);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return new Float32Array(bytes.buffer);
}

function round(x: number): number {
  return Math.round(x * 1e5) / 1e5;
}
