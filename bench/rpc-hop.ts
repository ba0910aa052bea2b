#!/usr/bin/env bun
/**
 * The sandbox -> bridge -> sandbox hop alone: a request the bridge answers from memory
 * (runtime.list_servers), timed in sandbox code, the three ways code makes one:
 *   awaited in async code (the event loop reads the reply), the _sync helper at top level (the reader
 *   thread reads it), and the _sync helper inside async code (the loop is blocked: the thread reads it).
 *   bun bench/rpc-hop.ts [--engine podman] [--calls 6000] [--rounds 2] [--binary PATH] [--before PATH]
 * Builds alternate round by round; the first quarter of each run's calls is left out (warm-up).
 */
import { parseArgs } from "node:util";
import { BINARY } from "../test/support/binary.ts";
import { conditions, startBridge, summarize } from "./support.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    engine: { type: "string", default: "podman" },
    calls: { type: "string", default: "6000" },
    rounds: { type: "string", default: "2" },
    binary: { type: "string", default: BINARY },
    before: { type: "string" },
  },
});
const N = Number(values.calls);
const builds: Array<[string, string]> = [
  ["ours", values.binary!],
  ...(values.before ? [["before", values.before] as [string, string]] : []),
];

const timed = (call: string, asyncCell: boolean) => `
import time, json
from mcp import runtime
${asyncCell ? "import asyncio\nawait asyncio.sleep(0)  # the cell runs on the event loop" : ""}
ts = []
for _ in range(${N}):
    t0 = time.perf_counter()
    ${call}
    ts.append((time.perf_counter() - t0) * 1e6)
print(json.dumps([round(t, 1) for t in ts[${Math.floor(N / 4)}:]]))`;

const WAYS: Array<[string, string]> = [
  ["await runtime.list_servers()", timed("await runtime.list_servers()", true)],
  ["runtime.list_servers_sync(), top level", timed("runtime.list_servers_sync()", false)],
  ["runtime.list_servers_sync() inside async code", timed("runtime.list_servers_sync()", true)],
];

const samples: Record<string, number[]> = {};
const before = conditions();
for (let round = 0; round < Number(values.rounds); round++) {
  for (const [name, bin] of builds) {
    const b = await startBridge(bin, { MCP_BRIDGE_RUNTIME: values.engine!, MCP_BRIDGE_PREWARM: "0" });
    try {
      for (const [way, code] of WAYS) {
        const r = (await b.client.callTool({ name: "run_python", arguments: { code, timeout: 120 } })) as {
          isError?: boolean;
          content: Array<{ text?: string }>;
        };
        const text = r.content[0]?.text ?? "";
        if (r.isError) throw new Error(`${way} failed: ${text}`);
        (samples[`${name}\t${way}`] ??= []).push(...(JSON.parse(text) as number[]));
      }
    } finally {
      await b.close();
    }
  }
}
console.log(`[${values.engine}] a no-op request from sandbox code, µs (${before} → ${conditions()})`);
console.log(`  ${"".padEnd(58)} ${"p50".padStart(7)} ${"p90".padStart(7)} ${"p99".padStart(7)} ${"n".padStart(7)}`);
for (const [key, xs] of Object.entries(samples)) {
  const [name, way] = key.split("\t");
  const label = `${name}: ${way}`.padEnd(58);
  const { median, p90, p99 } = summarize(xs);
  console.log(`  ${label} ${[median, p90, p99].map((v) => v.toFixed(0).padStart(7)).join(" ")} ${String(xs.length).padStart(7)}`);
}
