/**
 * What one user of a shared bridge may take, so no one starves the others: run_python calls per
 * minute (a token bucket: bursts up to the minute's allowance), and sandboxes, bounded by a count and
 * by the memory they may hold together. The node's own limit (sandboxes per core and per GiB of its
 * memory) protects everyone. Past a limit the call gets a clear error saying when to retry.
 */
import { cpus, totalmem } from "node:os";

export class CallRate {
  readonly #perMinute: number;
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  constructor(perMinute: number) {
    this.#perMinute = perMinute;
  }

  /** undefined when `principal` may call now; else why not, and when to retry. */
  take(principal: string, now = performance.now()): string | undefined {
    const b = this.#buckets.get(principal) ?? { tokens: this.#perMinute, at: now };
    b.tokens = Math.min(this.#perMinute, b.tokens + ((now - b.at) / 60_000) * this.#perMinute);
    b.at = now;
    this.#buckets.set(principal, b);
    if (b.tokens >= 1) {
      b.tokens--;
      return undefined;
    }
    const wait = Math.ceil(((1 - b.tokens) / this.#perMinute) * 60);
    return `you made ${this.#perMinute} run_python calls in the last minute, the most one user may (MCP_BRIDGE_USER_CALLS_PER_MINUTE); retry in ${wait} s`;
  }
}

/** How many sandboxes one user may hold: the count, and what the user's memory allows. */
export function userSandboxes(maxSessions: number, userMemoryBytes: number | undefined, sandboxMemoryBytes: number): number {
  if (!userMemoryBytes || !(sandboxMemoryBytes > 0)) return maxSessions;
  return Math.max(1, Math.min(maxSessions, Math.floor(userMemoryBytes / sandboxMemoryBytes)));
}

/** The node's limit: sandboxes per core and per GiB (what its memory holds at the sandbox limit, with room for the rest). */
export function nodeSandboxes(sandboxMemoryBytes: number, perCore = 8): { count: number; why: string } {
  const byCpu = cpus().length * perCore;
  const byMemory = sandboxMemoryBytes > 0 ? Math.floor((totalmem() * 0.8) / sandboxMemoryBytes) : byCpu;
  const count = Math.max(1, Math.min(byCpu, byMemory));
  return {
    count,
    why:
      byMemory < byCpu
        ? `the node's memory holds ${byMemory} sandboxes of ${Math.round(sandboxMemoryBytes / 1048576)} MiB (MCP_BRIDGE_NODE_SANDBOXES sets another limit)`
        : `${perCore} per core on ${cpus().length} cores (MCP_BRIDGE_NODE_SANDBOXES sets another limit)`,
  };
}
