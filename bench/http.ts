/**
 * `serve --http` beside stdio, in one run, on one engine:
 *   1. warm `print(1)`: stdio (SDK client), HTTP 2025-11-25 (SDK client, a protocol session) and HTTP
 *      2026-07-28 (bare POSTs): min / median / p99, and the HTTP overhead over stdio (goal ≤ 0.5 ms);
 *   2. 50 users, each in their own session, calling at once: requests per second, p50 / p99;
 *   3. a soak: 50 signed-in users, 20 of them running 1-s jobs back to back for --soak seconds (300 by
 *      default): errors (goal 0), and the bridge's memory per idle session.
 *
 *   bun bench/http.ts [--engine podman] [--calls 200] [--soak 300] [--only warm|users|soak]
 */
import { parseArgs } from "node:util";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { bridgeEnv, ROOT } from "../test/support/env.ts";
import { legacyClient, modernRun, startHttpBridge } from "../test/support/http-bridge.ts";
import { conditions, fmt, HEADER, row, rssMiB, summarize } from "./support.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    engine: { type: "string", default: "podman" },
    calls: { type: "string", default: "200" },
    soak: { type: "string", default: "300" },
    users: { type: "string", default: "50" },
    active: { type: "string", default: "20" },
    only: { type: "string" },
  },
});
const BINARY = join(ROOT, "dist", "mcp-code-exec");
const CALLS = Number(values.calls);
const USERS = Number(values.users);
const ACTIVE = Number(values.active);
const home = mkdtempSync(join(tmpdir(), "bench-http-"));
const tokens = Array.from({ length: USERS }, (_, i) => [`user${i}`, `tok-${i}-${crypto.randomUUID()}`] as const);
const env = {
  HOME: home,
  MCP_BRIDGE_STATE_DIR: join(home, "state"),
  MCP_BRIDGE_RUNTIME: values.engine!,
  MCP_BRIDGE_LOG_LEVEL: "ERROR",
  MCP_BRIDGE_STRUCTURED_CONTENT: "1",
  MCP_BRIDGE_HTTP_TOKENS: tokens.map(([n, t]) => `${n}=${t}`).join(","),
  MCP_BRIDGE_NODE_SANDBOXES: String(USERS + 10),
  MCP_BRIDGE_MAX_CONCURRENT_RUNS: String(USERS + 10),
  MCP_BRIDGE_USER_CALLS_PER_MINUTE: "100000",
  MCP_BRIDGE_MEMORY: "256m",
};
const [, ALICE] = tokens[0]!;

console.log(`serve --http beside stdio, engine ${values.engine}; ${conditions()}`);

async function timed(n: number, call: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < 10; i++) await call(); // warm
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await call();
    ms.push(performance.now() - t0);
  }
  return ms;
}

if (!values.only || values.only === "warm") {
  const stdio = new Client({ name: "bench-stdio", version: "0" });
  const transport = new StdioClientTransport({ command: BINARY, args: [], env: bridgeEnv(env), stderr: "ignore" });
  await stdio.connect(transport);
  const b = await startHttpBridge(env);
  const legacy = await legacyClient(b.url, ALICE);
  const print1 = { name: "run_python", arguments: { code: "print(1)" } };
  const s = summarize(await timed(CALLS, () => stdio.callTool(print1)));
  const l = summarize(await timed(CALLS, () => legacy.client.callTool(print1)));
  const m = summarize(await timed(CALLS, () => modernRun(b.url, ALICE, "print(1)")));
  console.log(`\n1. warm print(1), ${CALLS} calls each (ms)`);
  console.log(HEADER);
  console.log(row("stdio (SDK client)", s));
  console.log(row("HTTP 2025-11-25 (SDK client, a protocol session)", l, `+${fmt(l.median - s.median)} ms p50 over stdio`));
  console.log(row("HTTP 2026-07-28 (bare POSTs, no session)", m, `+${fmt(m.median - s.median)} ms p50 over stdio`));
  console.log(`  goal: p50 overhead over stdio ≤ 0.5 ms`);
  await legacy.close();
  await stdio.close();
  await b.close();
}

if (!values.only || values.only === "users") {
  const b = await startHttpBridge(env);
  // Each user's session (and sandbox) made first: what is measured is calls, not sandbox starts.
  await Promise.all(tokens.map(([, t]) => modernRun(b.url, t, "x = 1")));
  const perUser = 20;
  const ms: number[] = [];
  let errors = 0;
  const t0 = performance.now();
  await Promise.all(
    tokens.map(async ([, t]) => {
      for (let i = 0; i < perUser; i++) {
        const c0 = performance.now();
        const r = await modernRun(b.url, t, "print(1)");
        ms.push(performance.now() - c0);
        if (r.status !== 200 || r.result?.isError) errors++;
      }
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  console.log(`\n2. ${USERS} users at once, each in their own session, ${perUser} calls each (ms)`);
  console.log(HEADER);
  console.log(row(`print(1), ${USERS} users concurrently`, summarize(ms), `${(ms.length / wall).toFixed(0)} requests/s, ${errors} errors`));
  await b.close();
}

if (!values.only || values.only === "soak") {
  const seconds = Number(values.soak);
  const b = await startHttpBridge(env);
  const before = rssMiB(b.pid);
  // Every user signs in and has a session; ACTIVE of them then run 1-s jobs back to back.
  await Promise.all(tokens.map(([, t]) => modernRun(b.url, t, "x = 1")));
  const idle = rssMiB(b.pid);
  let jobs = 0;
  let errors = 0;
  const samples: string[] = [];
  const end = performance.now() + seconds * 1000;
  const ms: number[] = [];
  await Promise.all(
    tokens.slice(0, ACTIVE).map(async ([, t]) => {
      while (performance.now() < end) {
        const c0 = performance.now();
        const r = await modernRun(b.url, t, "import time\ntime.sleep(1)\nx += 1\nx", { timeout: 60 }).catch((e) => ({
          status: 0,
          result: undefined,
          error: e,
        }));
        ms.push(performance.now() - c0);
        jobs++;
        if (r.status !== 200 || !r.result || r.result.isError) {
          errors++;
          if (samples.length < 3) samples.push(JSON.stringify(r).slice(0, 300));
        }
      }
    }),
  );
  console.log(`\n3. soak: ${USERS} signed-in users, ${ACTIVE} running 1-s jobs for ${seconds} s`);
  console.log(HEADER);
  console.log(row("one 1-s job, end to end", summarize(ms), `${jobs} jobs, ${errors} errors (goal 0)`));
  for (const s of samples) console.log(`  error: ${s}`);
  console.log(
    `  bridge RSS: ${before.toFixed(1)} MiB before any session, ${idle.toFixed(1)} MiB with ${USERS} idle sessions: ${((idle - before) / USERS).toFixed(2)} MiB per idle session (their sandboxes are the engine's: ${values.engine} stats)`,
  );
  await b.close();
}
process.exit(0);
