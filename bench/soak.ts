#!/usr/bin/env bun
/**
 * Soak: 10,000 run_python calls and 100,000 proxied tool calls through one bridge, sampling the host's
 * process count, the bridge's open fds and RSS, and our container count before, during and after.
 * Nothing may grow without bound, and idle RSS after the calls is compared with idle RSS before them.
 *   bun bench/soak.ts [--engine podman] [--runs 10000] [--calls 100000] [--binary OTHER_BUILD]
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startBridge } from "../test/support/bridge.ts";
import { listOurContainers } from "../test/support/engines.ts";
import { ROOT } from "../test/support/env.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    engine: { type: "string", default: "podman" },
    binary: { type: "string" },
    runs: { type: "string", default: "10000" },
    calls: { type: "string", default: "100000" },
  },
});
const RUNS = Number(values.runs);
const CALLS = Number(values.calls);
const engine = values.engine!;

const home = mkdtempSync(join(tmpdir(), "soak-"));
mkdirSync(join(home, ".config", "mcp", "servers"), { recursive: true });
const EVERYTHING = join(ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
writeFileSync(
  join(home, ".config", "mcp", "servers", "s.json"),
  JSON.stringify({ mcpServers: { everything: { command: "node", args: [EVERYTHING] } } }),
);

const bridge = await startBridge(
  { HOME: home, MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_STATE_DIR: join(home, "state"), MCP_BRIDGE_LOG_LEVEL: "WARNING" },
  { cwd: home, wrap: values.binary ? (argv) => [values.binary!, ...argv.slice(1)] : undefined },
);
const pid = bridge.pid;

async function sample(label: string) {
  const procs = readdirSync("/proc").filter((p) => /^\d+$/.test(p)).length;
  const fds = readdirSync(`/proc/${pid}/fd`).length;
  const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
  const containers = (await listOurContainers(engine)).filter((c) => c.owner.endsWith(`:${pid}`)).length;
  console.log(
    `${label.padEnd(26)} host processes ${String(procs).padStart(4)}  bridge fds ${String(fds).padStart(4)}  bridge RSS ${rss.toFixed(1).padStart(6)} MiB  containers ${containers}`,
  );
}

await bridge.run("1", { servers: ["everything"] });
await bridge.run("await mcp_everything.echo(message='warm')");
// The bridge collects its garbage 2 s after its last message (src/host/memory.ts): compare idle with idle.
await Bun.sleep(3000);
await sample("before, 3 s idle");
let t0 = performance.now();
for (let i = 1; i <= RUNS; i++) {
  const r = await bridge.run(`x = ${i}`);
  if (r.isError) throw new Error(`run ${i} failed: ${r.text}`);
  if (i % (RUNS / 5) === 0) await sample(`after ${i} runs`);
}
const runSecs = (performance.now() - t0) / 1000;
const BATCH = 1000;
t0 = performance.now();
for (let done = 0; done < CALLS; done += BATCH) {
  const r = await bridge.run(
    `import asyncio\nrs = await asyncio.gather(*[mcp_everything.echo(message='s') for _ in range(${BATCH})])\nlen(rs)`,
    { timeout: 120 },
  );
  if (r.structured.value !== String(BATCH)) throw new Error(`batch at ${done} failed: ${r.text}`);
  if ((done + BATCH) % (CALLS / 5) === 0) await sample(`after ${done + BATCH} calls`);
}
const callSecs = (performance.now() - t0) / 1000;
await Bun.sleep(3000);
await sample("after, 3 s idle");
await Bun.sleep(5000);
await sample("after, 8 s idle");
const stats = JSON.parse(
  ((await bridge.client.readResource({ uri: "resource://mcp-code-exec/stats" })).contents[0] as { text: string }).text,
);
await bridge.close();
await Bun.sleep(2000);
const left = (await listOurContainers(engine)).filter((c) => c.owner.endsWith(`:${pid}`)).length;
console.log(
  `${RUNS} runs in ${runSecs.toFixed(1)} s (${(RUNS / runSecs).toFixed(0)}/s); ${CALLS} proxied calls in ${callSecs.toFixed(1)} s (${(CALLS / callSecs).toFixed(0)}/s)`,
);
console.log(
  `bridge counters: runs ${stats.runs}, errors ${stats.run_errors}, container starts ${stats.container_starts}, proxied ${stats.proxied_calls} (errors ${stats.proxied_errors}), latency p50 ${stats.proxied_latency_ms.p50} ms p99 ${stats.proxied_latency_ms.p99} ms`,
);
console.log(
  `after the bridge closed: our containers left ${left}, host processes ${readdirSync("/proc").filter((p) => /^\d+$/.test(p)).length}`,
);
process.exit(0);
