#!/usr/bin/env bun
/**
 * Proxied tool calls: sandbox -> bridge -> upstream -> back, against @modelcontextprotocol/server-everything.
 *   bun bench/proxy.ts [--engine podman] [--calls 2000] [--binary PATH] [--before PATH]
 * The same upstream call made directly with the SDK client (the upstream's own time, the floor) and
 * from sandbox code through the bridge are measured in alternating blocks of 200, so load hits both
 * alike; then the direct calls again, spaced as the sandbox spaces them (the paced floor: an idle
 * upstream wakes slower than a busy one), and one echo of 1, 4 and 8 MiB each way (large results; the
 * upstream reads at most 10 MiB). Prints min/median/p99 of each, the bridge's overhead (median minus
 * median), the CPU time per sequential call of the sandbox's interpreter and of the bridge, throughput
 * of concurrent calls with asyncio.gather, and tokens of tools/list's tool definitions (o200k) with 0, 3 and
 * 25 servers, with the default settings and with MCP_BRIDGE_STRUCTURED_CONTENT=1.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { getEncoding } from "js-tiktoken";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { BINARY } from "../test/support/binary.ts";
import { ROOT } from "../test/support/env.ts";
import { conditions, cpuMs, fmt, HEADER, row, startBridge, summarize } from "./support.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    engine: { type: "string", default: "podman" },
    calls: { type: "string", default: "2000" },
    binary: { type: "string", default: BINARY },
    before: { type: "string" },
  },
});
const N = Number(values.calls);
const BLOCK = 200;
const EVERYTHING = join(ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
const builds: Array<[string, string]> = [
  ["ours", values.binary!],
  ...(values.before ? [["before", values.before] as [string, string]] : []),
];

function homeWith(count: number): string {
  const home = mkdtempSync(join(tmpdir(), `bench-${count}-`));
  const servers = Object.fromEntries(
    Array.from({ length: count }, (_, i) => [i === 0 ? "everything" : `server-${i}`, { command: "node", args: [EVERYTHING] }]),
  );
  mkdirSync(join(home, ".config", "mcp", "servers"), { recursive: true });
  writeFileSync(join(home, ".config", "mcp", "servers", "bench.json"), JSON.stringify({ mcpServers: servers }));
  return home;
}

/** `n` sequential echo calls timed from sandbox code, as one run_python call; and the interpreter's CPU time (all its threads). */
const SEQ = (n: number) => `
import time, json
seq = []
c0 = time.process_time()
for _ in range(${n}):
    t0 = time.perf_counter()
    await mcp_everything.echo(message='x')
    seq.append((time.perf_counter() - t0) * 1000)
print(json.dumps({"ms": seq, "cpu": (time.process_time() - c0) * 1000}))`;

/** Per build: CPU ms the sandbox's interpreter and the bridge spent over the sequential calls. */
const cpu: Record<string, { sandbox: number; bridge: number; calls: number }> = {};

const direct = new Client({ name: "bench", version: "0" });
await direct.connect(new StdioClientTransport({ command: "node", args: [EVERYTHING], stderr: "ignore" }));
const home = homeWith(1);
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
const viaBridge = async (b: Awaited<ReturnType<typeof startBridge>>, n: number, name?: string): Promise<number[]> => {
  const bridge0 = cpuMs(b.pid);
  const r = (await b.client.callTool({ name: "run_python", arguments: { code: SEQ(n), servers: ["everything"], timeout: 120 } })) as {
    isError?: boolean;
    structuredContent?: { stdout?: string };
    content: Array<{ text?: string }>;
  };
  if (r.isError) throw new Error(r.content[0]?.text);
  const out = JSON.parse(String(r.structuredContent?.stdout)) as { ms: number[]; cpu: number };
  if (name) {
    const c = (cpu[name] ??= { sandbox: 0, bridge: 0, calls: 0 });
    c.sandbox += out.cpu;
    c.bridge += cpuMs(b.pid) - bridge0;
    c.calls += n;
  }
  return out.ms;
};
for (let i = 0; i < 100; i++) await direct.callTool({ name: "echo", arguments: { message: "x" } });
for (const { b } of bridges) await viaBridge(b, 100);

const loadBefore = conditions();
const s: Record<string, number[]> = { direct: [] };
for (let done = 0; done < N; done += BLOCK) {
  for (let i = 0; i < BLOCK; i++) {
    const t0 = performance.now();
    await direct.callTool({ name: "echo", arguments: { message: "x" } });
    s.direct!.push(performance.now() - t0);
  }
  for (const { name, b } of bridges) (s[name] ??= []).push(...(await viaBridge(b, BLOCK, name)));
}
// The same upstream calls spaced as a sandbox spaces them (its own code runs between two calls): an
// idle upstream and client wake up slower than a busy pair, and that is part of any proxied call.
const gap = Math.max(0, summarize(s[bridges[0]!.name]!).median - summarize(s.direct!).median);
s.paced = [];
for (let i = 0; i < Math.min(N, 2000); i++) {
  const until = performance.now() + gap;
  while (performance.now() < until);
  const t0 = performance.now();
  await direct.callTool({ name: "echo", arguments: { message: "x" } });
  s.paced.push(performance.now() - t0);
}
/** Large results: one echo of SIZE MiB each way, timed from sandbox code (the request is as large). */
const LARGE_MIB = [1, 4, 8];
const large: Record<string, string[]> = {};
for (const { name, b } of bridges) {
  const r = await b.client.callTool({
    name: "run_python",
    arguments: {
      code: `import time, json
out = {}
for mib in ${JSON.stringify(LARGE_MIB)}:
    msg = 'x' * (mib << 20)
    ts = []
    for _ in range(3):
        t0 = time.perf_counter()
        r = await mcp_everything.echo(message=msg)
        ts.append((time.perf_counter() - t0) * 1000)
    out[mib] = sorted(ts)[1]
print(json.dumps(out))`,
      servers: ["everything"],
      timeout: 120,
    },
  });
  const sc = r.structuredContent as { stdout?: string } | undefined;
  if (r.isError || !sc?.stdout) throw new Error(`the large calls failed: ${JSON.stringify(r.content).slice(0, 500)}`);
  const ms = JSON.parse(sc.stdout) as Record<string, number>;
  large[name] = LARGE_MIB.map((m) => `${m} MiB ${Math.round(ms[m]!)} ms`);
}
const conc: Record<string, number> = {};
/** One run may make at most policy.maxToolCallsPerRun proxied calls (10,000 by default). */
const GATHER = Math.min(N, 10_000);
for (const { name, b } of bridges) {
  const r = await b.client.callTool({
    name: "run_python",
    arguments: {
      code: `import asyncio, time\nt0 = time.perf_counter()\nawait asyncio.gather(*[mcp_everything.echo(message='x') for _ in range(${GATHER})])\ntime.perf_counter() - t0`,
      servers: ["everything"],
      timeout: 120,
    },
  });
  conc[name] = Number((r.structuredContent as { value?: string }).value);
  if (!Number.isFinite(conc[name])) throw new Error(`the concurrent calls failed: ${JSON.stringify(r.content).slice(0, 500)}`);
  await b.close();
}
await direct.close();

const enc = getEncoding("o200k_base");
const tokens: string[] = [];
// The tool definitions a client puts in the model's context: with the default settings, and with
// MCP_BRIDGE_STRUCTURED_CONTENT=1 (which adds the outputSchema; the test environment's setting).
for (const [structured, label] of [
  ["0", "default"],
  ["1", "structuredContent on"],
] as const) {
  const counts: string[] = [];
  for (const count of [0, 3, 25]) {
    const h = homeWith(count);
    const b = await startBridge(values.binary!, { HOME: h, MCP_BRIDGE_PREWARM: "0", MCP_BRIDGE_STRUCTURED_CONTENT: structured });
    const list = await b.client.listTools();
    counts.push(`${count} servers: ${enc.encode(JSON.stringify(list.tools)).length}`);
    await b.close();
  }
  tokens.push(`${label}: ${counts.join(", ")}`);
}

const floor = summarize(s.direct!);
console.log(
  `[${values.engine}] ${N} sequential calls of everything.echo in blocks of ${BLOCK} (${loadBefore} → ${conditions()})\n${HEADER}`,
);
console.log(row("floor: the upstream alone (SDK client, direct)", floor));
const paced = summarize(s.paced!);
console.log(row(`floor: the same, calls ${fmt(gap)} ms apart (a sandbox's pace)`, paced));
for (const { name } of bridges) {
  const x = summarize(s[name]!);
  console.log(
    row(
      `${name}: sandbox -> bridge -> upstream -> sandbox`,
      x,
      `overhead ${fmt(x.median - floor.median)} ms (median - median); ${fmt(x.median - paced.median)} ms over the paced floor`,
    ),
  );
}
for (const { name } of bridges) {
  const c = cpu[name]!;
  console.log(
    `  ${name}: CPU per call (user + system, all threads): sandbox interpreter ${fmt(c.sandbox / c.calls)} ms, bridge ${fmt(c.bridge / c.calls)} ms`,
  );
}
for (const { name } of bridges) console.log(`  ${name}: one echo each way, median of 3: ${large[name]!.join(", ")}`);
for (const { name } of bridges)
  console.log(
    `  ${name}: ${GATHER} concurrent calls (asyncio.gather): ${conc[name]!.toFixed(3)} s = ${Math.round(GATHER / conc[name]!)} calls/s`,
  );
console.log(`tools/list tool definitions, tokens (o200k): ${tokens.join("; ")}`);
process.exit(0);
