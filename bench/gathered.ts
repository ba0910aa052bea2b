#!/usr/bin/env bun
/**
 * Proxied tool calls made at once: `await asyncio.gather(*[mcp_everything.echo(...) for _ in range(N)])`
 * in one run_python call, against @modelcontextprotocol/server-everything, beside the same N calls made
 * at once by a direct SDK client (the floor) and by another build (--before), in alternating rounds so
 * that the machine's load hits each alike.
 *   bun bench/gathered.ts [--engine podman] [--counts 100,1000] [--rounds 7] [--binary PATH] [--before PATH]
 * Prints per N: min / median / p99 of the gather as timed inside the sandbox, the whole call as the MCP
 * client sees it, and the direct client's; each median against the floor and against the other build.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { BINARY } from "../test/support/binary.ts";
import { ROOT } from "../test/support/env.ts";
import { conditions, HEADER, row, startBridge, summarize } from "./support.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    engine: { type: "string", default: "podman" },
    counts: { type: "string", default: "100,1000" },
    rounds: { type: "string", default: "7" },
    binary: { type: "string", default: BINARY },
    before: { type: "string" },
  },
});
const COUNTS = values.counts!.split(",").map(Number);
const ROUNDS = Number(values.rounds);
const EVERYTHING = join(ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
const builds: Array<[string, string]> = [
  ["ours", values.binary!],
  ...(values.before ? [["before", values.before] as [string, string]] : []),
];

const home = mkdtempSync(join(tmpdir(), "bench-gathered-"));
mkdirSync(join(home, ".config", "mcp", "servers"), { recursive: true });
writeFileSync(
  join(home, ".config", "mcp", "servers", "bench.json"),
  JSON.stringify({ mcpServers: { everything: { command: "node", args: [EVERYTHING] } } }),
);

const direct = new Client({ name: "bench", version: "0" });
await direct.connect(new StdioClientTransport({ command: "node", args: [EVERYTHING], stderr: "ignore" }));
const directGather = async (n: number): Promise<number> => {
  const t0 = performance.now();
  await Promise.all(Array.from({ length: n }, () => direct.callTool({ name: "echo", arguments: { message: "x" } })));
  return performance.now() - t0;
};

const bridges = await Promise.all(
  builds.map(async ([name, bin]) => {
    const b = await startBridge(bin, {
      HOME: home,
      MCP_BRIDGE_RUNTIME: values.engine!,
      MCP_BRIDGE_STATE_DIR: mkdtempSync(join(tmpdir(), "bench-state-")),
    });
    return { name, b };
  }),
);
/** N calls at once from sandbox code: the gather's own time (ms, timed inside) and the whole call's. */
const viaBridge = async (b: Awaited<ReturnType<typeof startBridge>>, n: number): Promise<{ inside: number; call: number }> => {
  const t0 = performance.now();
  const r = await b.client.callTool({
    name: "run_python",
    arguments: {
      code: `import asyncio, time\nt0 = time.perf_counter()\nawait asyncio.gather(*[mcp_everything.echo(message='x') for _ in range(${n})])\n(time.perf_counter() - t0) * 1000`,
      servers: ["everything"],
      timeout: 120,
    },
  });
  const call = performance.now() - t0;
  const inside = Number((r.structuredContent as { value?: string } | undefined)?.value);
  if (r.isError || !Number.isFinite(inside)) throw new Error(`the gathered calls failed: ${JSON.stringify(r.content).slice(0, 500)}`);
  return { inside, call };
};

// Warm-up: the upstream started, the tool list known, the JIT of every side past its first calls.
for (const n of COUNTS) {
  await directGather(n);
  for (const { b } of bridges) await viaBridge(b, n);
}
const loadBefore = conditions();
const s: Record<string, number[]> = {};
const add = (k: string, v: number) => (s[k] ??= []).push(v);
for (let round = 0; round < ROUNDS; round++) {
  for (const n of COUNTS) {
    add(`direct ${n}`, await directGather(n));
    // Alternate which build goes first, so neither always follows the other.
    const order = round % 2 ? [...bridges].reverse() : bridges;
    for (const { name, b } of order) {
      const r = await viaBridge(b, n);
      add(`${name} ${n}`, r.inside);
      add(`${name} ${n} call`, r.call);
    }
  }
}
for (const { b } of bridges) await b.close();
await direct.close();

console.log(`[${values.engine}] proxied calls made at once (asyncio.gather), ${ROUNDS} rounds (${loadBefore} → ${conditions()})`);
for (const n of COUNTS) {
  const floor = summarize(s[`direct ${n}`]!);
  console.log(`\n${n} calls\n${HEADER}`);
  console.log(row(`floor: ${n} calls at once from a direct SDK client`, floor));
  for (const { name } of bridges) {
    const x = summarize(s[`${name} ${n}`]!);
    const vsBefore =
      name !== "before" && s[`before ${n}`] ? `; ${(x.median / summarize(s[`before ${n}`]!).median).toFixed(2)}× before` : "";
    console.log(row(`${name}: the gather, timed inside the sandbox`, x, `${(x.median / floor.median).toFixed(2)}× floor${vsBefore}`));
    console.log(row(`${name}: the whole run_python call`, summarize(s[`${name} ${n} call`]!)));
  }
}
process.exit(0);
