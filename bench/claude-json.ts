#!/usr/bin/env bun
/**
 * A heavy Claude Code user's ~/.claude.json (its `projects` keep every project's history: users report
 * 65, 101 and 238 MB files) and what it costs the bridge at start. For each size, one run:
 *   - the floor: reading the file's bytes (256 KiB at a time) and nothing else;
 *   - parsing it whole with JSON.parse, and server discovery as the bridge runs it (servers.ts);
 *   - the compiled bridge: spawn to the `initialize` answer and its peak RSS then (VmHWM), against the
 *     same with a ~/.claude.json holding only the parts the readers use ("empty"): the targets are
 *     at most 1.5x its time and 20 MiB over its peak;
 *   - beside it, the same source built with the walk turned off (every JSON file parsed whole, as
 *     before the walk), and with `--before NAME=BINARY` (repeatable) any other build.
 * Each measurement runs in a process of its own, so its peak RSS is its own; the kinds take turns in
 * every round. The bridges share a state folder whose startup check was done once first, as on a
 * user's machine after the first start. Linux only (peak RSS from /proc).
 *   bun bench/claude-json.ts [--sizes 1,20,100,250] [--rounds 5] [--binary PATH] [--before NAME=PATH]...
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { bridgeEnv } from "../test/support/env.ts";
import { generateClaudeJson } from "./claude-json-file.ts";
import { conditions, fmt, HEADER, row, summarize } from "./support.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    sizes: { type: "string", default: "1,20,100,250" },
    rounds: { type: "string", default: "5" },
    binary: { type: "string" },
    before: { type: "string", multiple: true, default: [] },
    child: { type: "string" },
    file: { type: "string" },
    home: { type: "string" },
    cwd: { type: "string" },
  },
});

type Sample = { ms: number; peakMiB: number };

// ---- one measurement, in a child process: prints {ms, peakMiB} ------------------------------------
if (values.child) {
  const file = values.file!;
  const { discoverServers } = await import("../src/config/servers.ts");
  const fs = await import("node:fs");
  const t0 = performance.now();
  if (values.child === "read") {
    const fd = fs.openSync(file, "r");
    const buf = new Uint8Array(1 << 18);
    while (fs.readSync(fd, buf, 0, buf.length, null) > 0);
    fs.closeSync(fd);
  } else if (values.child === "json") JSON.parse(readFileSync(file, "utf8"));
  else if (values.child === "discover") {
    const d = discoverServers({ env: {}, home: values.home!, cwd: values.cwd!, platform: "linux" });
    if (!d.servers.some((s) => s.name === "mine")) throw new Error(`the project's own server was not found: ${JSON.stringify(d.problems)}`);
  }
  const ms = performance.now() - t0;
  console.log(JSON.stringify({ ms, peakMiB: peakMiB("self") }));
  process.exit(0);
}

/** VmHWM of a process (Linux), in MiB. */
function peakMiB(pid: number | "self"): number {
  const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(hwm?.[1] ?? Number.NaN) / 1024;
}

async function child(kind: string, args: string[]): Promise<Sample> {
  const p = Bun.spawn(["bun", import.meta.path, "--child", kind, ...args], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`${kind}: ${err.slice(-500)}`);
  return JSON.parse(out.trim().split("\n").at(-1)!);
}

const dir = mkdtempSync(join(tmpdir(), "bench-claude-json-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
const stateDir = join(dir, "state");

/** Spawn to the `initialize` answer, and the process's peak RSS at that moment. */
async function bridgeStart(binary: string, home: string, cwd: string, stayUntil?: () => boolean): Promise<Sample> {
  const env = bridgeEnv({ HOME: home, MCP_BRIDGE_STATE_DIR: stateDir, MCP_BRIDGE_PREWARM: "0" });
  const t0 = performance.now();
  const p = Bun.spawn([binary], { stdin: "pipe", stdout: "pipe", stderr: "ignore", env, cwd });
  p.stdin.write(
    `${JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "0" } } })}\n`,
  );
  await p.stdin.flush();
  const reader = p.stdout.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${binary} exited before answering initialize`);
    text += decoder.decode(value, { stream: true });
  }
  const ms = performance.now() - t0;
  const peak = peakMiB(p.pid);
  for (const end = Date.now() + 30_000; stayUntil && !stayUntil() && Date.now() < end; ) await Bun.sleep(20);
  p.kill();
  await p.exited;
  if (!text.includes('"result"')) throw new Error(`initialize answered ${text.slice(0, 200)}`);
  if (!text.includes("mine")) throw new Error(`the instructions do not name the project's own server: ${text.slice(0, 600)}`);
  return { ms, peakMiB: peak };
}

/**
 * This source compiled as scripts/build.ts does, with the walk turned off: every JSON config parsed
 * whole (JSON.parse, then the selection applied), once per start. What the bridge did before the walk,
 * less its second parse and jsonc-parser.
 */
async function buildFullParse(): Promise<string> {
  const outfile = join(dir, "full-parse-bridge");
  const r = await Bun.build({
    entrypoints: [join(import.meta.dir, "..", "src", "main.ts")],
    compile: { outfile },
    bytecode: true,
    format: "esm",
    minify: true,
    plugins: [
      {
        name: "walk-off",
        setup(b) {
          b.onLoad({ filter: /src[\\/]config[\\/]config-file\.ts$/ }, async (args) => {
            const text = await Bun.file(args.path).text();
            const off = text.replace(/export const PRUNED_READ_FROM_BYTES = [^;]+;/, "export const PRUNED_READ_FROM_BYTES = Infinity;");
            if (off === text) throw new Error("PRUNED_READ_FROM_BYTES not found in config-file.ts: update bench/claude-json.ts");
            return { contents: off, loader: "ts" };
          });
        },
      },
    ],
  });
  if (!r.success) throw new Error(`building the full-parse bridge failed: ${r.logs.join("\n")}`);
  return outfile;
}

let binary = values.binary;
if (!binary) binary = (await import("../test/support/binary.ts")).BINARY; // builds dist/mcp-code-exec
const bridges: Array<[string, string]> = [
  ["bridge (this build)", binary],
  ["bridge, whole file parsed (walk off)", await buildFullParse()],
  ...values.before.map((b): [string, string] => {
    const [name, path] = b.includes("=") ? [b.slice(0, b.indexOf("=")), b.slice(b.indexOf("=") + 1)] : ["--before", b];
    return [`bridge ${name}`, path];
  }),
];

const rounds = Number(values.rounds);
const sizes = values.sizes.split(",").map(Number);

function home(mb: number): { home: string; cwd: string; file: string } {
  const h = join(dir, `home-${mb}`);
  const cwd = join(h, "work", "target");
  mkdirSync(cwd, { recursive: true });
  return { home: h, cwd, file: generateClaudeJson(mb, h, cwd) };
}

// The startup check, once, for every bridge: as on a user's machine after the first start.
const empty = home(0);
for (const [, b] of bridges) {
  rmSync(join(stateDir, "readiness.json"), { force: true });
  await bridgeStart(b, empty.home, empty.cwd, () => existsSync(join(stateDir, "readiness.json")));
  if (!existsSync(join(stateDir, "readiness.json"))) throw new Error(`${b} did not finish its startup check within 30 s`);
}

console.log(`~/.claude.json at start-up (${conditions()})`);
console.log("targets at every size: this build's spawn to initialize <= 1.5x its empty-file time, peak RSS <= +20 MiB over it");
const emptyRuns = new Map<string, { ms: number; peak: number }>();
for (const mb of [0, ...sizes]) {
  const h = mb === 0 ? empty : home(mb);
  const bytes = statSync(h.file).size;
  const what = mb === 0 ? "empty (only the parts the readers use)" : `${(bytes / 1048576).toFixed(1)} MiB`;
  console.log(`\n~/.claude.json ${what}, ${bytes} bytes (${rounds} rounds; min / median / p99 ms; peak RSS median)`);
  console.log(HEADER);
  const kinds: Array<[string, () => Promise<Sample>]> = [
    ["floor: read the bytes", () => child("read", ["--file", h.file])],
    ["parse whole, JSON.parse", () => child("json", ["--file", h.file])],
    ["discovery (servers.ts, in process)", () => child("discover", ["--file", h.file, "--home", h.home, "--cwd", h.cwd])],
    ...bridges.map(([label, b]): [string, () => Promise<Sample>] => [`${label}: spawn to initialize`, () => bridgeStart(b, h.home, h.cwd)]),
  ];
  const samples = kinds.map(() => ({ ms: [] as number[], peaks: [] as number[] }));
  for (let i = 0; i < rounds; i++)
    for (const [k, [, run]] of kinds.entries()) {
      const r = await run();
      samples[k]!.ms.push(r.ms);
      samples[k]!.peaks.push(r.peakMiB);
    }
  for (const [k, [label]] of kinds.entries()) {
    const s = summarize(samples[k]!.ms);
    const peak = summarize(samples[k]!.peaks).median;
    const base = emptyRuns.get(label);
    if (mb === 0 && label.startsWith("bridge")) emptyRuns.set(label, { ms: s.median, peak });
    const against = base
      ? `  ${(s.median / base.ms).toFixed(2)}x empty  ${peak - base.peak >= 0 ? "+" : ""}${fmt(peak - base.peak)} MiB`
      : "";
    console.log(row(label, s, `peak ${fmt(peak)} MiB${against}`));
  }
  if (mb > 0) {
    const self = samples[3]!;
    const base = emptyRuns.get(kinds[3]![0])!;
    const ratio = summarize(self.ms).median / base.ms;
    const over = summarize(self.peaks).median - base.peak;
    console.log(
      `  this build: ${ratio.toFixed(2)}x the empty-file time (target 1.5x: ${ratio <= 1.5 ? "met" : "not met"}), ` +
        `+${fmt(over)} MiB peak (target 20: ${over <= 20 ? "met" : "not met"})`,
    );
  }
}
