/**
 * The bridge under floods, from both sides.
 *
 * From its sandbox: after a run returns, a thread in the sandbox writes `line` to the protocol fd
 * without pause. Prints, per binary: ping latency while it goes on, the bridge's CPU share, and how
 * long until the sandbox was stopped; the floor is the same pings with no flood, measured in the same
 * run. The budget is FRAME_BUDGET in src/sandbox/frame-budget.ts.
 *
 * From an upstream server (test/fixtures/hostile-upstream.ts): one call during which the server sends
 * 1e6 log notifications, and 10,000 ordinary calls made at once from sandbox code. Prints the bridge's
 * ping p50/p99 while it goes on (goal p99 ≤ 100 ms), its peak RSS (goal ≤ 150 MiB), and the calls'
 * own completion beside a direct SDK client making the same calls to the same server.
 *
 *   bun bench/flood.ts [--binaries dist/mcp-code-exec,/tmp/old-bridge] [--engine podman] [--seconds 4] [--only sandbox|upstream]
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { FRAME_BUDGET } from "../src/sandbox/frame-budget.ts";
import { fill, floodAfterRun } from "../test/security/attacks.ts";
import { bridgeEnv, ROOT } from "../test/support/env.ts";
import { cpuMs } from "./support.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    binaries: { type: "string", default: `${ROOT}/dist/mcp-code-exec` },
    engine: { type: "string", default: "podman" },
    seconds: { type: "string", default: "4" },
    only: { type: "string" },
  },
});
const SECONDS = Number(values.seconds);
const FLOODS: Record<string, string> = {
  "tiny frames": "x\n",
  "empty lines": "\n",
  "forged ready": '{"t":"ready","protocol":1,"python":"3"}\n',
};

/** The attack suite's flood (test/security/attacks.ts). */
const floodCode = (line: string) => fill(floodAfterRun(line), { canary: "", hostHome: "", bridgePid: 0 });

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? Number.NaN;

async function measure(binary: string, line: string | undefined) {
  const transport = new StdioClientTransport({
    command: binary,
    args: [],
    env: bridgeEnv({ MCP_BRIDGE_RUNTIME: values.engine!, MCP_BRIDGE_LOG_LEVEL: "ERROR" }),
    stderr: "ignore",
  });
  const client = new Client({ name: "bench-flood", version: "0" });
  await client.connect(transport);
  const pid = transport.pid!;
  await client.callTool({ name: "run_python", arguments: { code: "1" } });
  if (line !== undefined) await client.callTool({ name: "run_python", arguments: { code: floodCode(line) } });
  const t0 = performance.now();
  const cpu0 = cpuMs(pid);
  const pings: number[] = [];
  let timeouts = 0;
  while (performance.now() - t0 < SECONDS * 1000) {
    const p0 = performance.now();
    const answered = await Promise.race([client.ping().then(() => true), Bun.sleep(2000).then(() => false)]);
    if (answered) pings.push(performance.now() - p0);
    else timeouts++;
    await Bun.sleep(20);
  }
  const cpu = (cpuMs(pid) - cpu0) / (performance.now() - t0);
  const next = (await Promise.race([
    client.callTool({ name: "run_python", arguments: { code: "'next'" } }),
    Bun.sleep(60_000).then(() => undefined),
  ])) as { content?: Array<{ text?: string }> } | undefined;
  const told = next?.content?.[0]?.text?.includes("so it was stopped") ?? false;
  process.kill(pid, "SIGKILL");
  await client.close().catch(() => {});
  return { p50: pct(pings, 0.5), p99: pct(pings, 0.99), max: Math.max(...pings), timeouts, cpu, told };
}

async function sandboxFloods() {
  console.log(
    `flood from the sandbox, ${SECONDS}s each, engine ${values.engine}; budget: ${FRAME_BUDGET.framesPerSecond} frames, ${FRAME_BUDGET.bytesPerSecond / 1048576} MiB, ${FRAME_BUDGET.cpuMsPerSecond} ms CPU per second, ${FRAME_BUDGET.malformedFrames} malformed frames`,
  );
  console.log("binary | flood | ping p50 ms | p99 ms | max ms | pings over 2 s | bridge CPU (cores) | stopped and told");
  for (const binary of values.binaries!.split(",")) {
    for (const [name, line] of [["none (floor)", undefined] as const, ...Object.entries(FLOODS)]) {
      const r = await measure(binary, line);
      console.log(
        `${binary} | ${name} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.max.toFixed(1)} | ${r.timeouts} | ${r.cpu.toFixed(2)} | ${line === undefined ? "-" : r.told ? "yes" : "no"}`,
      );
    }
  }
}

// ---- floods from an upstream server ----------------------------------------------------------------

const HOSTILE = `${ROOT}/test/fixtures/hostile-upstream.ts`;
const UPSTREAM_CASES = [
  {
    name: "1e6 log notifications in one call",
    code: "await mcp_hostile.log_flood(n=1_000_000)",
    direct: { tool: "log_flood", args: { n: 1_000_000 }, count: 1 },
  },
  {
    name: "10,000 concurrent calls",
    code: "import asyncio\nlen(await asyncio.gather(*[mcp_hostile.echo(x=i) for i in range(10_000)]))",
    direct: { tool: "echo", args: { x: 1 }, count: 10_000 },
  },
];

/** Peak RSS (VmHWM) of a process, MiB. */
const peakMiB = (pid: number): number => {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : Number.NaN;
};

/** The same calls from an SDK client straight to the server: the floor for the calls' completion. */
async function direct(c: (typeof UPSTREAM_CASES)[number]["direct"]): Promise<number> {
  const client = new Client({ name: "bench-direct", version: "0" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [HOSTILE], stderr: "ignore" }));
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: c.count }, () => client.callTool({ name: c.tool, arguments: c.args }, undefined, { timeout: 600_000 })),
  );
  const ms = performance.now() - t0;
  await client.close();
  return ms;
}

async function upstreamFlood(binary: string, code: string | undefined) {
  const home = mkdtempSync(join(tmpdir(), "bench-flood-"));
  mkdirSync(join(home, ".config", "mcp", "servers"), { recursive: true });
  writeFileSync(
    join(home, ".config", "mcp", "servers", "hostile.json"),
    JSON.stringify({ mcpServers: { hostile: { command: process.execPath, args: [HOSTILE] } } }),
  );
  const transport = new StdioClientTransport({
    command: binary,
    args: [],
    env: bridgeEnv({
      HOME: home,
      MCP_BRIDGE_STATE_DIR: join(home, "state"),
      MCP_BRIDGE_RUNTIME: values.engine!,
      MCP_BRIDGE_LOG_LEVEL: "ERROR",
    }),
    stderr: "ignore",
  });
  const client = new Client({ name: "bench-flood", version: "0" });
  await client.connect(transport);
  const pid = transport.pid!;
  await client.callTool({ name: "run_python", arguments: { code: "await mcp_hostile.echo(x=0)", servers: ["hostile"] } });
  const pings: number[] = [];
  let timeouts = 0;
  let done = false;
  let ms = Number.NaN;
  let outcome = "-";
  const t0 = performance.now();
  const call =
    code === undefined
      ? Bun.sleep(SECONDS * 1000).then(() => {
          done = true;
        })
      : client
          .callTool({ name: "run_python", arguments: { code, timeout: 120 } }, undefined, { timeout: 600_000 })
          .then((r) => {
            ms = performance.now() - t0;
            const text = (r.content as Array<{ text?: string }>)[0]?.text ?? "";
            outcome = r.isError ? `error: ${text.replace(/\s+/g, " ").slice(-160)}` : "ok";
          })
          .catch((e) => {
            outcome = `failed: ${String(e).slice(0, 80)}`;
          })
          .finally(() => {
            done = true;
          });
  while (!done) {
    const p0 = performance.now();
    const answered = await Promise.race([client.ping().then(() => true), Bun.sleep(2000).then(() => false)]);
    if (answered) pings.push(performance.now() - p0);
    else timeouts++;
    await Bun.sleep(20);
  }
  await call;
  const peak = peakMiB(pid);
  process.kill(pid, "SIGKILL");
  await client.close().catch(() => {});
  rmSync(home, { recursive: true, force: true });
  return { p50: pct(pings, 0.5), p99: pct(pings, 0.99), max: Math.max(...pings), timeouts, peak, ms, outcome };
}

async function upstreamFloods() {
  console.log(
    `\nflood from an upstream server (test/fixtures/hostile-upstream.ts), engine ${values.engine}; goals: ping p99 ≤ 100 ms, peak RSS ≤ 150 MiB`,
  );
  console.log(
    "binary | flood | ping p50 ms | p99 ms | max ms | pings over 2 s | bridge peak RSS MiB | run ms | direct client ms | outcome",
  );
  const floors = new Map<string, number>();
  for (const c of UPSTREAM_CASES) floors.set(c.name, await direct(c.direct));
  for (const binary of values.binaries!.split(",")) {
    for (const c of [{ name: "none (floor)", code: undefined, direct: undefined }, ...UPSTREAM_CASES]) {
      const r = await upstreamFlood(binary, c.code);
      const floor = floors.get(c.name);
      console.log(
        `${binary} | ${c.name} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.max.toFixed(1)} | ${r.timeouts} | ${r.peak.toFixed(1)} | ${Number.isNaN(r.ms) ? "-" : r.ms.toFixed(0)} | ${floor === undefined ? "-" : floor.toFixed(0)} | ${r.outcome}`,
      );
    }
  }
}

if (values.only !== "upstream") await sandboxFloods();
if (values.only !== "sandbox") await upstreamFloods();
process.exit(0);
