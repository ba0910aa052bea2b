#!/usr/bin/env bun
/**
 * What the approval policy and the audit log cost per proxied call, against the code before them.
 *   bun bench/approvals.ts [--base main] [--calls 10000] [--audit-calls 100000]
 * 1. The handler of sandbox requests (`tools.call`) of this tree and of --base (extracted with
 *    `git archive` into a temp folder), each with its own pool and the same real upstream server
 *    (test/fixtures/interactive-server.ts over stdio), answering N `allow` calls (read_notes: read-only,
 *    so allowed by its annotation) in alternating batches of 100: median and p99 per call, their
 *    differences, and the median of the paired batch differences (robust to the machine's drifting load).
 * 2. The policy + audit path alone (decision, argument digest, one audit line written per call, the
 *    worst case: one write per call): median and p99.
 * 3. Audit log bytes per 100,000 calls.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ROOT } from "../test/support/env.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    base: { type: "string", default: "main" },
    calls: { type: "string", default: "10000" },
    "audit-calls": { type: "string", default: "100000" },
  },
});
const N = Number(values.calls);
const BATCH = 100;
const FIXTURE = join(ROOT, "test", "fixtures", "interactive-server.ts");

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;
const git = (...args: string[]) => execFileSync("git", args, { cwd: ROOT, encoding: "utf8" }).trim();

// The base tree, as it was committed.
const baseRev = git("rev-parse", values.base!);
if (existsBase("src/audit/audit-log.ts")) {
  console.error(`--base ${values.base} (${baseRev.slice(0, 10)}) already has the approval path; pass --base with a commit from before it`);
  process.exit(2);
}
const baseDir = mkdtempSync(join(tmpdir(), "bench-approvals-base-"));
execFileSync("bash", ["-c", `git archive ${baseRev} src adapters entrypoint package.json | tar -x -C ${baseDir}`], { cwd: ROOT });
symlinkSync(join(ROOT, "node_modules"), join(baseDir, "node_modules"));

function existsBase(path: string): boolean {
  try {
    execFileSync("git", ["cat-file", "-e", `${baseRev}:${path}`], { cwd: ROOT, stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

// One user-scope server (trusted), the interactive fixture.
const home = mkdtempSync(join(tmpdir(), "bench-approvals-home-"));
mkdirSync(join(home, ".config", "mcp", "servers"), { recursive: true });
writeFileSync(
  join(home, ".config", "mcp", "servers", "bench.json"),
  JSON.stringify({ mcpServers: { interactive: { command: process.execPath, args: [FIXTURE] } } }),
);
const env = { HOME: home, PATH: process.env.PATH };

type Handler = (frame: Record<string, unknown>, run: Record<string, unknown>) => Promise<unknown>;

async function handlerOf(tree: string, withAudit: boolean): Promise<{ handle: Handler; close: () => Promise<void>; stateDir: string }> {
  const { UpstreamPool } = await import(join(tree, "src/upstream/pool.ts"));
  const { createSandboxRpc } = await import(join(tree, "src/upstream/sandbox-rpc.ts"));
  const { discoverServers } = await import(join(tree, "src/config/servers.ts"));
  const { loadPolicy } = await import(join(tree, "src/policy.ts"));
  const { Metrics } = await import(join(tree, "src/metrics.ts"));
  const { silentLogger } = await import(join(tree, "src/log.ts"));
  const stateDir = mkdtempSync(join(tmpdir(), "bench-approvals-state-"));
  const pool = new UpstreamPool({
    discovery: discoverServers({ env, home, cwd: home, selfPaths: [] }),
    stateDir,
    log: silentLogger,
    version: "bench",
    connectTimeoutMs: 30_000,
  });
  const ctx: Record<string, unknown> = { pool, policy: loadPolicy(env, home), metrics: new Metrics(), toolTimeoutMs: 60_000 };
  let audit: { close(): void } | undefined;
  if (withAudit) {
    const { AuditLog, auditPath } = await import(join(tree, "src/audit/audit-log.ts"));
    audit = new AuditLog({ path: auditPath(stateDir), maxBytes: 10 * 1024 * 1024 });
    ctx.audit = audit;
  }
  return {
    handle: createSandboxRpc(ctx),
    close: async () => {
      audit?.close();
      await pool.close();
    },
    stateDir,
  };
}

async function scopeFor(tree: string, withApprovals: boolean): Promise<Record<string, unknown>> {
  const { silentLogger } = await import(join(tree, "src/log.ts"));
  const scope: Record<string, unknown> = {
    loaded: new Set(["interactive"]),
    signal: new AbortController().signal,
    log: silentLogger,
    countToolCall() {},
  };
  if (withApprovals) {
    const { SessionApprovals } = await import(join(tree, "src/approvals/remembered.ts"));
    Object.assign(scope, { runId: "run-bench-1", approvals: new SessionApprovals(), holdClock: () => () => {} });
  }
  return scope;
}

const frame = (i: number) => ({
  t: "rpc",
  id: `r${i}`,
  run: 1,
  method: "tools.call",
  params: { server: "interactive", tool: "read_notes", args: { page: i % 7, filter: "all" } },
});

const base = await handlerOf(baseDir, false);
const head = await handlerOf(ROOT, true);
const baseScope = await scopeFor(baseDir, false);
const headScope = await scopeFor(ROOT, true);
// Warm both: the servers start, the tool lists are read.
for (let i = 0; i < 300; i++) {
  await base.handle(frame(i), baseScope);
  await head.handle(frame(i), headScope);
}
const times = { base: [] as number[], head: [] as number[] };
const wall = { base: 0, head: 0 };
// Paired batches: the load of this shared machine drifts, so each batch of one side is compared with
// the batch of the other side run right next to it.
const pairDiffs: number[] = [];
for (let b = 0; b < N / BATCH; b++) {
  const medians = { base: 0, head: 0 };
  for (const side of b % 2 ? (["head", "base"] as const) : (["base", "head"] as const)) {
    const h = side === "base" ? base : head;
    const scope = side === "base" ? baseScope : headScope;
    const batch: number[] = [];
    const w0 = performance.now();
    for (let i = 0; i < BATCH; i++) {
      const t0 = performance.now();
      await h.handle(frame(i), scope);
      batch.push(performance.now() - t0);
    }
    wall[side] += performance.now() - w0;
    times[side].push(...batch);
    medians[side] = pct(batch, 50);
  }
  pairDiffs.push(medians.head - medians.base);
}
await base.close();
await head.close();

// The policy + audit path alone.
const { loadPolicy } = await import("../src/policy.ts");
const { toolRule } = await import("../src/approvals/decide.ts");
const { AuditLog } = await import("../src/audit/audit-log.ts");
const policy = loadPolicy(env, home);
const alone: number[] = [];
const soloDir = mkdtempSync(join(tmpdir(), "bench-approvals-solo-"));
const solo = new AuditLog({ path: join(soloDir, "audit.jsonl"), maxBytes: 1 << 30 });
for (let i = 0; i < N; i++) {
  const t0 = performance.now();
  const ts = new Date().toISOString();
  const rule = toolRule(policy, "interactive", "read_notes", { readOnlyHint: true });
  const args = { page: i % 7, filter: "all" };
  solo.write(
    {
      ts,
      run: "run-4242-1-17",
      call: `call-${i}`,
      server: "interactive",
      tool: "read_notes",
      decision: "allow",
      by: rule.by as "annotation",
      outcome: "ok",
      ms: 0.4,
    },
    args,
  );
  solo.flush();
  alone.push(performance.now() - t0);
}
solo.close();

// Audit log size per 100,000 calls: realistic names, ids and a mix of decisions.
const M = Number(values["audit-calls"]);
const sizeDir = mkdtempSync(join(tmpdir(), "bench-approvals-size-"));
const sized = new AuditLog({ path: join(sizeDir, "audit.jsonl"), maxBytes: 1 << 30 });
const tools = [
  ["github", "create_issue"],
  ["github", "list_pull_requests"],
  ["filesystem", "read_text_file"],
  ["memory", "delete_entities"],
] as const;
for (let i = 0; i < M; i++) {
  const [server, tool] = tools[i % tools.length]!;
  const asked = tool === "delete_entities";
  sized.write(
    {
      ts: new Date(Date.UTC(2026, 0, 1) + i * 137).toISOString(),
      run: `run-48213-1-${1 + Math.floor(i / 50)}`,
      call: `call-${i + 1}`,
      server,
      tool,
      decision: "allow",
      by: asked ? "user" : "annotation",
      ...(asked ? { answer: i % 8 === 3 ? "once" : "remembered", wait_ms: i % 8 === 3 ? 2140.3 : 0 } : {}),
      outcome: "ok",
      ms: Math.round(Math.random() * 4000) / 10,
    },
    { i },
  );
  if (i % 1000 === 999) sized.flush();
}
sized.close();
const bytes = statSync(join(sizeDir, "audit.jsonl")).size;

const f = (xs: number[]) => `median ${us(pct(xs, 50))}, p99 ${us(pct(xs, 99))}`;
console.log(
  `base ${values.base} = ${baseRev.slice(0, 10)}, this tree = ${git("rev-parse", "--short=10", "HEAD")}${git("status", "--porcelain", "src").length ? " (+ uncommitted changes)" : ""}; load average ${(await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ")}`,
);
console.log(`${N} allow calls (interactive.read_notes over stdio), handler of sandbox requests, interleaved batches of ${BATCH}:`);
console.log(`  base:          ${f(times.base)}; ${Math.round(N / (wall.base / 1000))} calls/s`);
console.log(`  with policy + audit: ${f(times.head)}; ${Math.round(N / (wall.head / 1000))} calls/s`);
console.log(
  `  difference:    median ${us(pct(times.head, 50) - pct(times.base, 50))}, p99 ${us(pct(times.head, 99) - pct(times.base, 99))}; median of ${pairDiffs.length} paired batch differences ${us(pct(pairDiffs, 50))}`,
);
console.log(`policy + audit path alone (decision, digest, one audit write per call), ${N} calls: ${f(alone)}`);
console.log(
  `audit log: ${M} calls = ${(bytes / 1048576).toFixed(1)} MiB (${Math.round(bytes / M)} bytes per call); rotated at 10 MiB with 3 kept, the log holds the last ~${Math.round((4 * 10 * 1048576) / (bytes / M)).toLocaleString("en")} calls`,
);
for (const d of [baseDir, home, base.stateDir, head.stateDir, soloDir, sizeDir]) rmSync(d, { recursive: true, force: true });
process.exit(0);
