/**
 * Containers this bridge process has started and not yet seen exit. On any exit path (stdin closed,
 * SIGTERM, SIGINT, crash) they are removed by name: killing the engine client does not stop them.
 */
import type { RuntimeAdapter } from "../../adapters/types.ts";

const LIVE = new Map<string, RuntimeAdapter>();

export function rememberContainer(adapter: RuntimeAdapter, name: string): void {
  LIVE.set(name, adapter);
}

export function forgetContainer(name: string): void {
  LIVE.delete(name);
}

/** Remove every live container, concurrently; resolves when all removals finished. */
export async function removeAllContainers(): Promise<void> {
  const all = [...LIVE.entries()].filter(([, adapter]) => !adapter.keepsSandboxesOnExit);
  await Promise.all(all.map(([name, adapter]) => adapter.remove(name).catch(() => {})));
  for (const [name] of all) LIVE.delete(name);
}

/** Last resort from a synchronous `exit` handler. */
export function removeAllContainersSync(): void {
  for (const [name, adapter] of LIVE) if (!adapter.keepsSandboxesOnExit) adapter.removeSync(name);
  LIVE.clear();
}
