#!/usr/bin/env bun
/**
 * Proxied tool calls: sandbox -> bridge -> upstream -> back, against @modelcontextprotocol/server-everything.
 *   bun bench/proxy.ts [--engine podman] [--calls 1000]
 * Prints: sequential round trip median/p99 seen from sandbox code; the same upstream call made directly
 * with the SDK client (the upstream's own time); the difference (the bridge's overhead); throughput of
 * N concurrent calls with asyncio.gather; tokens of tools/list (o200k) with 0, 3 and 25 servers.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { getEncoding } from "js-tiktoken";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startBridge } from "../test/support/bridge.ts";
import { ROOT } from "../test/support/env.ts";

const { values } = parseArgs({ args: Bun.argv.slice(2), options: { engine: { type: "string", default: "podman" }, calls: { type: "string", default: "1000" } } });
const N = Number(values.calls);
const EVERYTHING = join(ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

function homeWith(count: number): string {
  const home = mkdtempSync(join(tmpdir(), `bench-${count}-`));
  const servers = Object.fromEntries(Array.from({ length: count }, (_, i) => [i === 0 ? "everything" : `server-${i}`, { command: "node", args: [EVERYTHING] }]));
  mkdirSync(join(home, ".config", "mcp", "servers"), { recursive: true });
  writeFileSync(join(home, ".config", "mcp", "servers", "bench.json"), JSON.stringify({ mcpServers: servers }));
  return home;
}

// The upstream's own time: the same call, made directly with the SDK client.
const direct = new Client({ name: "bench", version: "0" });
await direct.connect(new StdioClientTransport({ command: "node", args: [EVERYTHING], stderr: "ignore" }));
for (let i = 0; i < 50; i++) await direct.callTool({ name: "echo", arguments: { message: "x" } });
const directMs: number[] = [];
for (let i = 0; i < N; i++) {
  const t0 = performance.now();
  await direct.callTool({ name: "echo", arguments: { message: "x" } });
  directMs.push(performance.now() - t0);
}
await direct.close();

const home = homeWith(1);
const bridge = await startBridge({ HOME: home, MCP_BRIDGE_RUNTIME: values.engine!, MCP_BRIDGE_STATE_DIR: mkdtempSync(join(tmpdir(), "bench-state-")) }, { cwd: home });
const code = `
import time, asyncio, json
for _ in range(50):
    await mcp_everything.echo(message='x')
seq = []
for _ in range(${N}):
    t0 = time.perf_counter()
    await mcp_everything.echo(message='x')
    seq.append((time.perf_counter() - t0) * 1000)
t0 = time.perf_counter()
await asyncio.gather(*[mcp_everything.echo(message='x') for _ in range(${N})])
conc = time.perf_counter() - t0
print(json.dumps({'seq': seq, 'conc_s': conc}))
`;
const r = await bridge.run(code, { servers: ["everything"], timeout: 120 });
if (r.isError) throw new Error(r.text);
const { seq, conc_s } = JSON.parse(String(r.structured.stdout)) as { seq: number[]; conc_s: number };
await bridge.close();

const enc = getEncoding("o200k_base");
const tokens: string[] = [];
for (const count of [0, 3, 25]) {
  const h = homeWith(count);
  const b = await startBridge({ HOME: h, MCP_BRIDGE_PREWARM: "0" }, { cwd: h });
  const list = await b.client.listTools();
  tokens.push(`${count} servers: ${enc.encode(JSON.stringify(list)).length}`);
  await b.close();
}

const f = (x: number) => x.toFixed(3);
console.log(`engine ${values.engine}, ${N} calls of everything.echo`);
console.log(`sandbox -> upstream -> sandbox, sequential: median ${f(pct(seq, 50))} ms, p99 ${f(pct(seq, 99))} ms`);
console.log(`upstream alone (SDK client, direct):        median ${f(pct(directMs, 50))} ms, p99 ${f(pct(directMs, 99))} ms`);
console.log(`bridge overhead per call:                   median ${f(pct(seq, 50) - pct(directMs, 50))} ms, p99 ${f(pct(seq, 99) - pct(directMs, 99))} ms`);
console.log(`${N} concurrent calls (asyncio.gather):     ${conc_s.toFixed(3)} s = ${Math.round(N / conc_s)} calls/s`);
console.log(`tools/list tokens (o200k): ${tokens.join(", ")}`);
process.exit(0);
