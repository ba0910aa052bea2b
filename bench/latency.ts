#!/usr/bin/env bun
/**
 * Latency and footprint of the compiled bridge through a real MCP client (the SDK's stdio client).
 *   bun bench/latency.ts [--engines podman,docker] [--warm 200]
 * Prints: binary size; startup to the initialize answer; cold first call with prewarm off and on;
 * warm `print(1)` round trip median/p99; bridge RSS when idle.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { statSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { BINARY } from "../test/support/binary.ts";
import { bridgeEnv, IMAGE } from "../test/support/env.ts";

const { values } = parseArgs({ args: Bun.argv.slice(2), options: { engines: { type: "string", default: "podman,docker" }, warm: { type: "string", default: "200" } } });
const engines = values.engines!.split(",");
const WARM = Number(values.warm);

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const median = (xs: number[]) => pct(xs, 50);
const ms = (x: number) => `${x.toFixed(1)} ms`;

async function connect(env: Record<string, string>) {
  const t0 = performance.now();
  const transport = new StdioClientTransport({ command: BINARY, args: [], env: bridgeEnv(env), stderr: "ignore" });
  const client = new Client({ name: "bench", version: "0" });
  await client.connect(transport);
  return { client, transport, initMs: performance.now() - t0 };
}

async function call(client: Client, code: string): Promise<number> {
  const t0 = performance.now();
  const r = (await client.callTool({ name: "run_python", arguments: { code } })) as { isError?: boolean; content: Array<{ text?: string }> };
  if (r.isError) throw new Error(`call failed: ${r.content[0]?.text}`);
  return performance.now() - t0;
}

function rssKiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) : Number.NaN;
}

console.log(`binary: ${BINARY} ${(statSync(BINARY).size / 1024 / 1024).toFixed(1)} MiB; image ${IMAGE}`);

const inits: number[] = [];
for (let i = 0; i < 10; i++) {
  const { client, initMs } = await connect({ MCP_BRIDGE_PREWARM: "0" });
  inits.push(initMs);
  await client.close();
}
console.log(`startup to initialize answer (spawn + initialize, 10 runs): median ${ms(median(inits))}, max ${ms(Math.max(...inits))}`);

for (const engine of engines) {
  const lazy = await connect({ MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_PREWARM: "0" });
  const coldLazy = await call(lazy.client, "print(1)");
  await lazy.client.close();

  const warm = await connect({ MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_PREWARM: "1" });
  const coldPrewarmImmediate = await call(warm.client, "print(1)");
  await warm.client.close();

  const pre = await connect({ MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_PREWARM: "1" });
  await Bun.sleep(3000);
  const coldPrewarmed = await call(pre.client, "print(1)");
  const samples: number[] = [];
  for (let i = 0; i < WARM; i++) samples.push(await call(pre.client, "print(1)"));
  await Bun.sleep(2000);
  const rss = rssKiB(pre.transport.pid!);
  await pre.client.close();

  console.log(`[${engine}] cold first call, prewarm off: ${ms(coldLazy)}`);
  console.log(`[${engine}] first call right after initialize, prewarm on: ${ms(coldPrewarmImmediate)}`);
  console.log(`[${engine}] first call 3 s after initialize, prewarm on: ${ms(coldPrewarmed)}`);
  console.log(`[${engine}] warm print(1) round trip x${WARM}: median ${ms(median(samples))}, p99 ${ms(pct(samples, 99))}`);
  console.log(`[${engine}] bridge RSS idle after ${WARM} calls: ${(rss / 1024).toFixed(1)} MiB`);
}
process.exit(0);
