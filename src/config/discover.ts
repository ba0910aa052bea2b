/** The MCP servers this bridge offers its sandbox: every client's config, read once per bridge, with what was found logged. */
import type { Logger } from "../log.ts";
import { discoverServers, type Discovery } from "./servers.ts";

export function discoverForBridge(env: Record<string, string | undefined>, home: string, cwd: string, log: Logger): Discovery {
  // Our own binary (compiled) or entry script (from source): an entry launching either is this bridge.
  const selfPaths = [process.execPath, process.argv[1] ?? ""].filter((p) => /mcp-code-exec(\.exe)?$|src[\\/]main\.ts$/.test(p));
  const d = discoverServers({ env, home, cwd, selfPaths });
  for (const p of d.problems) log.warn("MCP config problem", { file: p.file, path: p.path || undefined, problem: p.message });
  for (const s of d.skipped) log.info("MCP server skipped", { name: s.name, source: s.source, reason: s.reason });
  log.info("MCP servers found", { count: d.servers.length, names: d.servers.map((s) => s.name).join(",") });
  return d;
}
