/** `mcp-code-exec stats`: the counters of every bridge running for this user (from their state dir snapshots). */
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createApp } from "../app.ts";
import { isProcessAlive } from "../reaper.ts";

export async function stats(opts: { json?: boolean }): Promise<number> {
  const app = createApp({ ...process.env, MCP_BRIDGE_LOG_LEVEL: process.env.MCP_BRIDGE_LOG_LEVEL ?? "ERROR" });
  const dir = join(app.config.stateDir, "stats");
  const live: Array<Record<string, unknown>> = [];
  let names: string[] = [];
  try {
    names = readdirSync(dir).filter((n) => /^\d+\.json$/.test(n));
  } catch {
    // no bridge has run yet
  }
  for (const name of names) {
    const pid = Number(name.slice(0, -5));
    if (!isProcessAlive(pid)) {
      rmSync(join(dir, name), { force: true }); // a bridge that died without cleaning up
      continue;
    }
    try {
      live.push(JSON.parse(readFileSync(join(dir, name), "utf8")) as Record<string, unknown>);
    } catch {
      // being rewritten; skip
    }
  }
  if (opts.json) {
    process.stdout.write(`${JSON.stringify({ bridges: live }, null, 2)}\n`);
    return 0;
  }
  if (!live.length) {
    process.stdout.write(`No running bridge found (state dir ${app.config.stateDir}).\n`);
    return 0;
  }
  for (const s of live) {
    const lat = s.proxied_latency_ms as { mean: number | null; p50: number | null; p99: number | null };
    process.stdout.write(
      [
        `bridge pid ${s.pid}, up since ${s.started_at}`,
        `  runs ${s.runs} (errors ${s.run_errors}, timeouts ${s.timeouts}, cancelled ${s.cancellations}, session resets ${s.session_resets}, policy refusals ${s.policy_refusals})`,
        `  container starts ${s.container_starts}, upstream restarts ${s.upstream_restarts}`,
        `  proxied calls ${s.proxied_calls} (errors ${s.proxied_errors}), latency ms mean ${lat.mean ?? "-"} p50 ${lat.p50 ?? "-"} p99 ${lat.p99 ?? "-"}`,
        "",
      ].join("\n"),
    );
  }
  return 0;
}
