/**
 * Counters a person can read: runs, errors, timeouts, container starts, upstream restarts, proxied-call
 * latency. Exposed as the MCP resource resource://mcp-code-exec/stats and by `mcp-code-exec stats`, which
 * reads the snapshot each running bridge keeps in its state dir.
 */
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { removeQuietly } from "./host/private-dir.ts";

const LATENCY_SAMPLES = 2048;

export class Metrics {
  readonly startedAt = new Date().toISOString();
  runs = 0;
  runErrors = 0;
  timeouts = 0;
  cancellations = 0;
  sessionResets = 0;
  containerStarts = 0;
  policyRefusals = 0;
  proxiedCalls = 0;
  proxiedErrors = 0;
  /** Upstream restarts are counted by the servers; the pool reports them here. */
  upstreamRestarts: () => number = () => 0;
  #latency: number[] = [];
  #latencyAt = 0;
  #latencySum = 0;
  #dirty = false;

  /** Count one finished run_python call (undefined: the bridge itself failed). */
  countRun(outcome: { error?: { type: string }; timedOut?: boolean; cancelled?: boolean; sessionReset?: string } | undefined): void {
    this.runs++;
    if (!outcome || outcome.error) this.runErrors++;
    if (outcome?.timedOut) this.timeouts++;
    if (outcome?.cancelled) this.cancellations++;
    if (outcome?.sessionReset) this.sessionResets++;
    if (outcome?.error?.type === "PolicyRefusal") this.policyRefusals++;
    this.#dirty = true;
  }

  recordProxiedCall(ms: number, ok: boolean): void {
    this.proxiedCalls++;
    if (!ok) this.proxiedErrors++;
    this.#latencySum += ms;
    // A ring of recent samples keeps percentiles honest without growing.
    if (this.#latency.length < LATENCY_SAMPLES) this.#latency.push(ms);
    else this.#latency[this.#latencyAt++ % LATENCY_SAMPLES] = ms;
    this.#dirty = true;
  }

  snapshot(): Record<string, unknown> {
    const sorted = [...this.#latency].sort((a, b) => a - b);
    const pct = (p: number) => (sorted.length ? round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!) : null);
    return {
      pid: process.pid,
      started_at: this.startedAt,
      runs: this.runs,
      run_errors: this.runErrors,
      timeouts: this.timeouts,
      cancellations: this.cancellations,
      session_resets: this.sessionResets,
      container_starts: this.containerStarts,
      policy_refusals: this.policyRefusals,
      upstream_restarts: this.upstreamRestarts(),
      proxied_calls: this.proxiedCalls,
      proxied_errors: this.proxiedErrors,
      proxied_latency_ms: {
        mean: this.proxiedCalls ? round(this.#latencySum / this.proxiedCalls) : null,
        p50: pct(0.5),
        p99: pct(0.99),
        samples: sorted.length,
      },
    };
  }

  /** Keep stats/<pid>.json in the state dir current (checked every `everyMs`); removed on stop. */
  persist(stateDir: string, everyMs = 2000): () => void {
    const dir = join(stateDir, "stats");
    const file = join(dir, `${process.pid}.json`);
    const write = () => {
      try {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        writeFileSync(`${file}.tmp`, JSON.stringify(this.snapshot()));
        renameSync(`${file}.tmp`, file);
      } catch {
        // stats are best effort
      }
    };
    write();
    const timer = setInterval(() => {
      if (!this.#dirty) return;
      this.#dirty = false;
      write();
    }, everyMs);
    (timer as { unref?: () => void }).unref?.();
    return () => {
      clearInterval(timer);
      removeQuietly(file);
    };
  }
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
