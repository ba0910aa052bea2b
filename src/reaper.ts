/**
 * Removes containers of ours whose bridge process is gone (a bridge killed with SIGKILL cannot clean up
 * after itself). Runs in the background at startup for every engine installed here; it does not
 * select an engine. Only containers started on this host are considered.
 */
import { hostname } from "node:os";
import type { Logger } from "./log.ts";
import { which } from "./host/process.ts";
import { sweepChannelFolders } from "./host/socket-channel.ts";
import { AUTO_ORDER, loadAdapter } from "./engines/registry.ts";
import { MARK_LABEL, OWNER_LABEL } from "./session/container-spec.ts";

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Returns the names removed. Channel folders left by dead bridges go too (src/host/socket-channel.ts). */
export async function reapOrphans(env: Record<string, string>, log: Logger, engines: string[] = AUTO_ORDER): Promise<string[]> {
  const removed: string[] = [];
  for (const folder of sweepChannelFolders(isProcessAlive)) log.info("removed a folder left by a bridge that is gone", { folder });
  const me = hostname();
  await Promise.all(
    engines.map(async (name) => {
      if (!which(name, env.PATH)) return;
      try {
        const adapter = await loadAdapter(name, { env });
        const containers = await adapter.list(`${MARK_LABEL}=1`);
        for (const c of containers) {
          const owner = c.labels[OWNER_LABEL] ?? "";
          const at = owner.lastIndexOf(":");
          const host = owner.slice(0, at);
          const pid = Number(owner.slice(at + 1));
          if (host !== me || !Number.isInteger(pid) || pid <= 0 || isProcessAlive(pid)) continue;
          log.info("removing orphaned sandbox", { engine: name, name: c.name, owner });
          await adapter.remove(c.name);
          removed.push(c.name);
        }
      } catch (err) {
        log.debug("orphan sweep skipped", { engine: name, error: String(err) });
      }
    }),
  );
  return removed;
}
