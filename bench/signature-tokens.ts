#!/usr/bin/env bun
// Tokens of `detail="signature"` docs against the tool's JSON definition (name, description,
// inputSchema, outputSchema: what `detail="full"` returns), per server and overall, counted with
// the cl100k_base tokenizer. Target: signature <= 0.5x.
// usage: bun bench/signature-tokens.ts [CATALOG.json ...]   (default: the shared catalog and the real one)
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { getEncoding } from "js-tiktoken";
import { renderToolDoc, type ToolDef } from "../src/docs/signature.ts";

const here = import.meta.dir;
const shared = [path.join(here, "search-data", "shared", "tool-catalog.json")].find(existsSync);
const files = process.argv.slice(2).length
  ? process.argv.slice(2)
  : [shared, path.join(here, "search-data", "real-servers.catalog.json")].filter((f): f is string => !!f);
const enc = getEncoding("cl100k_base");
const count = (s: string) => enc.encode(s).length;

for (const file of files) {
  const catalog = JSON.parse(readFileSync(file, "utf8")) as { server: string; tools: ToolDef[] }[];
  let sigAll = 0;
  let fullAll = 0;
  const rows: string[] = [];
  for (const s of catalog) {
    let sig = 0;
    let full = 0;
    for (const t of s.tools) {
      sig += count(renderToolDoc(t, "signature") as string);
      full += count(JSON.stringify(renderToolDoc(t, "full")));
    }
    sigAll += sig;
    fullAll += full;
    rows.push(`| ${s.server} | ${s.tools.length} | ${full} | ${sig} | ${(sig / Math.max(1, full)).toFixed(2)} |`);
  }
  console.log(`\n${path.basename(file)}: signature ${sigAll} tokens / JSON ${fullAll} tokens = ${(sigAll / fullAll).toFixed(2)}x`);
  console.log("| server | tools | JSON tokens | signature tokens | ratio |\n|---|---|---|---|---|");
  for (const r of rows) console.log(r);
}
