#!/usr/bin/env bun
/**
 * A heavy Claude Code user's ~/.claude.json (its `projects` keep every project's history: users report
 * 65, 101 and 238 MB files) and what it costs the bridge. For each size, from one run:
 *   - the floor: reading the file's bytes and nothing else;
 *   - parsing it whole, with jsonc-parser (what each of the two readings at start did before) and with
 *     JSON.parse (the engine's own parser);
 *   - server discovery as the bridge runs it (src/config/servers.ts), which reads only the parts it uses;
 *   - the compiled bridge: spawn to the `initialize` answer and its peak RSS then (VmHWM), with
 *     `--before BINARY` the same for another build.
 * Each measurement runs in a process of its own, so its peak RSS is its own.
 * Linux only (peak RSS from /proc).
 *   bun bench/claude-json.ts [--sizes 1,20,200] [--rounds 5] [--binary PATH] [--before PATH]
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { BINARY } from "../test/support/binary.ts";
import { bridgeEnv } from "../test/support/env.ts";
import { conditions, fmt, HEADER, row, summarize } from "./support.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    sizes: { type: "string", default: "1,20,200" },
    rounds: { type: "string", default: "5" },
    binary: { type: "string", default: BINARY },
    before: { type: "string" },
    child: { type: "string" },
    file: { type: "string" },
    home: { type: "string" },
    cwd: { type: "string" },
  },
});

// ---- one measurement, in a child process: prints {ms, peakMiB} ------------------------------------
if (values.child) {
  const file = values.file!;
  const { parse } = await import("jsonc-parser");
  const { discoverServers } = await import("../src/config/servers.ts");
  const t0 = performance.now();
  if (values.child === "read") readFileSync(file);
  else if (values.child === "jsonc") parse(readFileSync(file, "utf8"), [], { allowTrailingComma: true });
  else if (values.child === "json") JSON.parse(readFileSync(file, "utf8"));
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

const rounds = Number(values.rounds);
const sizes = values.sizes.split(",").map(Number);
const dir = mkdtempSync(join(tmpdir(), "bench-claude-json-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

/** A deterministic file shaped like Claude Code's: many projects with long histories, one of them the cwd. */
function generate(mb: number, home: string, cwd: string): string {
  let seed = 42;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const words = 'fix the parser bug in "src/app.ts" path\\to\\file ünïcødé 日本語 🎉 tab\tand\nnewline run tests please refactor'.split(
    " ",
  );
  const sentence = (n: number) => Array.from({ length: n }, () => words[rnd(words.length)]).join(" ");
  const projects: Record<string, unknown> = {};
  let size = 0;
  for (let i = 0; size < mb * 1e6; i++) {
    const p = {
      allowedTools: [],
      history: Array.from({ length: 100 }, () => ({
        display: sentence(20 + rnd(200)),
        pastedContents: rnd(5) === 0 ? { "1": { id: 1, type: "text", content: sentence(500) } } : {},
      })),
      mcpServers: i % 7 === 0 ? { old: { type: "stdio", command: "node", args: ["x.js"], env: {} } } : {},
      hasTrustDialogAccepted: i % 2 === 0,
      lastSessionId: `session-${i}`,
    };
    projects[`/home/user/work/project-${i}`] = p;
    size += JSON.stringify(p).length;
  }
  projects[cwd] = {
    history: [],
    mcpServers: { mine: { type: "stdio", command: "node", args: ["mine.js"] } },
    hasTrustDialogAccepted: true,
  };
  const doc = {
    numStartups: 412,
    mcpServers: { fs: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", home] } },
    projects,
    cachedChangelog: sentence(5000),
  };
  const file = join(home, ".claude.json");
  writeFileSync(file, JSON.stringify(doc, null, 2));
  return file;
}

async function child(kind: string, args: string[]): Promise<{ ms: number; peakMiB: number }> {
  const p = Bun.spawn(["bun", import.meta.path, "--child", kind, ...args], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`${kind}: ${err.slice(-500)}`);
  return JSON.parse(out.trim().split("\n").at(-1)!);
}

/** Spawn to the `initialize` answer, and the process's peak RSS at that moment. */
async function bridgeStart(binary: string, home: string, cwd: string): Promise<{ ms: number; peakMiB: number }> {
  const env = bridgeEnv({ HOME: home, MCP_BRIDGE_STATE_DIR: join(home, "state"), MCP_BRIDGE_PREWARM: "0" });
  const t0 = performance.now();
  const p = Bun.spawn([binary], { stdin: "pipe", stdout: "pipe", stderr: "ignore", env, cwd });
  p.stdin.write(
    `${JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "0" } } })}\n`,
  );
  await p.stdin.flush();
  const reader = p.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${binary} exited before answering initialize`);
    text += new TextDecoder().decode(value);
  }
  const ms = performance.now() - t0;
  const peak = peakMiB(p.pid);
  p.kill();
  await p.exited;
  if (!text.includes('"result"')) throw new Error(`initialize answered ${text.slice(0, 200)}`);
  return { ms, peakMiB: peak };
}

console.log(`~/.claude.json at start-up (${conditions()})`);
for (const mb of sizes) {
  const home = join(dir, `home-${mb}`);
  const cwd = join(home, "work", "target");
  mkdirSync(cwd, { recursive: true });
  const file = generate(mb, home, cwd);
  const bytes = readFileSync(file).length;
  console.log(`\n${(bytes / 1048576).toFixed(1)} MiB file (${rounds} rounds; min / median / p99 ms; peak RSS median)`);
  console.log(HEADER);
  const kinds: Array<[string, () => Promise<{ ms: number; peakMiB: number }>]> = [
    ["floor: read the bytes", () => child("read", ["--file", file])],
    ["parse whole, jsonc-parser (before: twice per start)", () => child("jsonc", ["--file", file])],
    ["parse whole, JSON.parse", () => child("json", ["--file", file])],
    ["discovery now (reads only the parts used)", () => child("discover", ["--file", file, "--home", home, "--cwd", cwd])],
    ["bridge: spawn to initialize answer", () => bridgeStart(values.binary, home, cwd)],
  ];
  if (values.before) kinds.push(["bridge --before: spawn to initialize answer", () => bridgeStart(values.before!, home, cwd)]);
  let floor = Number.NaN;
  for (const [label, run] of kinds) {
    const ms: number[] = [];
    const peaks: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const r = await run();
      ms.push(r.ms);
      peaks.push(r.peakMiB);
    }
    const s = summarize(ms);
    if (Number.isNaN(floor)) floor = s.median;
    console.log(row(label, s, `${(s.median / floor).toFixed(1)}x floor  peak ${fmt(summarize(peaks).median)} MiB`));
  }
}
