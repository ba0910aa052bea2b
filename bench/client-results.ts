#!/usr/bin/env bun
/**
 * What the model receives, client by client: each real client (Claude Code, Gemini CLI, Codex, mcporter, opencode)
 * drives a bridge binary through its own config, with a scripted stand-in for its model API on loopback,
 * through the same scenario (test/clients/scenario.ts). For each result: o200k tokens of the text the
 * model got, whether an image came with it, and whether the content that matters arrived.
 *   bun bench/client-results.ts [--binary before=/path/old --binary after=dist/mcp-code-exec] [--clients claude,codex] [--engine docker] [--details]
 */
import { getEncoding } from "js-tiktoken";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { CLIENTS, type ClientName } from "../test/clients/clients.ts";
import { STEPS, type Seen } from "../test/clients/scenario.ts";
import { ROOT } from "../test/support/env.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    binary: { type: "string", multiple: true },
    clients: { type: "string", default: "claude,gemini,codex,mcporter,opencode" },
    engine: { type: "string", default: process.env.MCP_TEST_ENGINES?.split(",")[0] ?? "docker" },
    details: { type: "boolean", default: false },
  },
});
const binaries = (values.binary?.length ? values.binary : [`current=${join(ROOT, "dist", "mcp-code-exec")}`]).map((b) => {
  const i = b.indexOf("=");
  return i > 0 ? { label: b.slice(0, i), path: resolve(b.slice(i + 1)) } : { label: b, path: resolve(b) };
});
const enc = getEncoding("o200k_base");

/** Columns: the scenario step, and what must reach the model for the result to be of use. */
const COLUMNS: Array<{ name: string; step: string; ok: (s: Seen) => boolean; note?: (s: Seen) => string }> = [
  { name: "text", step: "text", ok: (s) => s.text.includes("42") },
  {
    name: "error",
    step: "error",
    ok: (s) => s.text.includes("ZeroDivisionError"),
    note: (s) => (count(s.text, "Traceback (most recent") > 1 ? "traceback x2" : ""),
  },
  { name: "image", step: "image", ok: (s) => s.images.length > 0, note: (s) => (s.images.length ? "PNG" : "no image") },
  { name: "table", step: "table", ok: (s) => s.text.includes("rain_mm") && s.text.includes("1000 rows") },
  {
    name: "file",
    step: "file",
    ok: (s) => s.text.includes("Oslo,4.5"),
    note: (s) => (s.text.includes("Oslo,4.5") ? "content" : "name only"),
  },
  { name: "proxied call", step: "proxied", ok: (s) => s.text.includes("Ada") },
  { name: "lost-state note", step: "kill", ok: (s) => /gone|fresh (session|interpreter)/.test(s.text) },
];

function count(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

function cell(s: Seen | undefined, col: (typeof COLUMNS)[number]): string {
  if (!s) return "not reached";
  const tokens = enc.encode(s.text).length;
  const extra = col.note?.(s) ?? "";
  return `${col.ok(s) ? "ok" : "MISSING"} ${tokens} tok${extra ? `, ${extra}` : ""}`;
}

const rows: string[][] = [];
const details: string[] = [];
for (const b of binaries) {
  for (const name of values.clients!.split(",") as ClientName[]) {
    const t0 = performance.now();
    const run = await CLIENTS[name]({ binary: b.path, steps: STEPS, engine: values.engine! });
    const byLabel = new Map(run.seen.map((s) => [s.label, s]));
    rows.push([b.label, name, ...COLUMNS.map((c) => cell(byLabel.get(c.step), c))]);
    console.error(
      `${b.label} ${name}: ${run.seen.length}/${STEPS.length} results in ${((performance.now() - t0) / 1000).toFixed(1)} s (exit ${run.code})`,
    );
    if (values.details)
      for (const s of run.seen)
        details.push(
          `### ${b.label} / ${name} / ${s.label}${s.images.length ? ` (+ ${s.images.join(", ")})` : ""}\n\`\`\`\n${s.text}\n\`\`\``,
        );
  }
}

const header = ["binary", "client", ...COLUMNS.map((c) => c.name)];
console.log(`| ${header.join(" | ")} |\n| ${header.map(() => "---").join(" | ")} |`);
for (const r of rows) console.log(`| ${r.join(" | ")} |`);
console.log("\nok/MISSING: whether what matters reached the model; tok: o200k tokens of the text the model got (images not counted).");
if (details.length) console.log(`\n${details.join("\n\n")}`);
process.exit(0);
