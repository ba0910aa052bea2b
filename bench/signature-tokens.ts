#!/usr/bin/env bun
// Tokens of `detail="signature"` docs against the tool's JSON definition (name, description,
// inputSchema, outputSchema: what `detail="full"` returns), per server and overall, counted with
// the cl100k_base tokenizer. Target: signature <= 0.5x (test/unit/signature.test.ts checks it).
// Also where the signature tokens go: the `async def` line, the docstring's lead (the tool's
// description), the Args section and the Returns line (each counted on its own, so the parts add
// up to about the total).
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

type Part = "def line" | "docstring lead" | "Args" | "Returns";

/** A rendered signature cut into its parts (each line with the newline before it). */
function parts(sig: string): Record<Part, string> {
  const out: Record<Part, string> = { "def line": "", "docstring lead": "", Args: "", Returns: "" };
  const [def = "", ...doc] = sig.split("\n");
  out["def line"] = def;
  let part: Part = "docstring lead";
  for (const line of doc) {
    const t = line.trim().replace(/^"""/, "");
    if (/^Args\b/.test(t)) part = "Args";
    else if (/^Returns\b/.test(t)) part = "Returns";
    out[part] += `\n${line}`;
  }
  return out;
}

for (const file of files) {
  const catalog = JSON.parse(readFileSync(file, "utf8")) as { server: string; tools: ToolDef[] }[];
  let sigAll = 0;
  let fullAll = 0;
  const byPart: Record<Part, number> = { "def line": 0, "docstring lead": 0, Args: 0, Returns: 0 };
  const rows: string[] = [];
  for (const s of catalog) {
    let sig = 0;
    let full = 0;
    for (const t of s.tools) {
      const doc = renderToolDoc(t, "signature") as string;
      sig += count(doc);
      full += count(JSON.stringify(renderToolDoc(t, "full")));
      for (const [k, v] of Object.entries(parts(doc)) as [Part, string][]) byPart[k] += count(v);
    }
    sigAll += sig;
    fullAll += full;
    rows.push(`| ${s.server} | ${s.tools.length} | ${full} | ${sig} | ${(sig / Math.max(1, full)).toFixed(2)} |`);
  }
  console.log(`\n${path.basename(file)}: signature ${sigAll} tokens / JSON ${fullAll} tokens = ${(sigAll / fullAll).toFixed(3)}x`);
  const split = (Object.entries(byPart) as [Part, number][]).map(([k, v]) => `${k} ${v} (${((100 * v) / sigAll).toFixed(0)}%)`);
  console.log(`signature tokens by part: ${split.join(", ")}`);
  console.log("| server | tools | JSON tokens | signature tokens | ratio |\n|---|---|---|---|---|");
  for (const r of rows) console.log(r);
}
