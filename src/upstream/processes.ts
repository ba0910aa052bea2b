/**
 * The upstream server processes this bridge started, so that none outlives it: killed at exit on
 * every path the bridge controls, and by the watchdog (src/host/watchdog.ts) when it is killed outright.
 */
import type { UpstreamsFile } from "../host/watchdog.ts";

export class UpstreamProcesses {
  #live = new Set<number>();
  #file: () => UpstreamsFile | undefined;

  /** `file` is asked for the guard's list when the first process starts (the guard starts then). */
  constructor(file: () => UpstreamsFile | undefined = () => undefined) {
    this.#file = file;
  }

  started(pid: number): void {
    this.#live.add(pid);
    this.#file()?.add(pid);
  }

  ended(pid: number): void {
    if (!this.#live.delete(pid)) return;
    this.#file()?.remove(pid);
  }

  /** Last resort from a synchronous `exit` handler: whatever did not stop when asked is killed. */
  killAllSync(): void {
    for (const pid of this.#live) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
      this.#file()?.remove(pid);
    }
    this.#live.clear();
  }
}
