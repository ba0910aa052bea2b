/**
 * Checks of a run request that need no sandbox, shared by every way code arrives (run_python over MCP,
 * `mcp-code-exec exec`): a timeout within MCP_BRIDGE_MAX_TIMEOUT, and servers that are configured.
 */
import type { Config } from "../config/env.ts";
import type { UpstreamPool } from "../upstream/pool.ts";

/** What is wrong with the request, in words a model or a person can act on; undefined when nothing. */
export function checkRunRequest(
  req: { timeout?: number; servers?: string[] },
  config: Config,
  pool: () => UpstreamPool,
): string | undefined {
  return checkTimeout(req.timeout, config) ?? unknownServers(req.servers, pool);
}

function checkTimeout(timeout: number | undefined, config: Config): string | undefined {
  if (timeout === undefined) return undefined;
  if (!Number.isFinite(timeout) || timeout <= 0) return `[mcp-code-exec] timeout must be a positive number of seconds; got ${timeout}`;
  if (timeout > config.maxTimeoutSec) {
    return `[mcp-code-exec] timeout ${timeout}s is above the maximum of ${config.maxTimeoutSec}s (MCP_BRIDGE_MAX_TIMEOUT); ask for at most ${config.maxTimeoutSec}, or split the work into several calls (state persists between them)`;
  }
  return undefined;
}

function unknownServers(servers: string[] | undefined, pool: () => UpstreamPool): string | undefined {
  if (!servers?.length) return undefined;
  const names = new Set(
    pool()
      .entries()
      .map((e) => e.name),
  );
  const bad = servers.filter((s) => !names.has(s));
  if (!bad.length) return undefined;
  return `[mcp-code-exec] unknown MCP server(s): ${bad.join(", ")}. Configured: ${[...names].join(", ") || "none (see `mcp-code-exec servers`)"}`;
}
