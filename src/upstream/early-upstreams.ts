/**
 * Upstream servers started as the first call that names them arrives, before the rest of the bridge
 * (the SDK, the pool) has loaded: a server such as `npx some-server` takes a few hundred milliseconds
 * to answer, and its start then overlaps its sandbox's and the bridge's loading from the call's first
 * millisecond. Only servers that would start unasked are started here: a stdio server the user trusts
 * (config/servers.ts startsUnasked), that the policy does not refuse and that is not shared between the
 * users of an HTTP bridge. The pool's first start of that server takes the process (claim); one that no
 * start takes is stopped when the bridge has loaded (discard), or killed at exit with the bridge's other
 * upstream processes (processes.ts).
 */
import type { ServerEntry } from "../config/servers.ts";
import type { Logger } from "../log.ts";
import type { UpstreamProcesses } from "./processes.ts";
import { launchWith, type StdioLaunch, stdioLaunch, StdioProcess } from "./stdio-client.ts";

export interface EarlyStart {
  launch: StdioLaunch;
  process: StdioProcess;
}

export class EarlyUpstreams {
  readonly #starts = new Map<string, Promise<EarlyStart>>();
  readonly #log: Logger;
  readonly #processes: UpstreamProcesses;

  /**
   * `processes`: the bridge's list of its upstream processes, told of each one from its spawn, so it is
   * killed at exit, or by the guard if the bridge is killed, before the pool has taken it.
   */
  constructor(log: Logger, processes: UpstreamProcesses) {
    this.#log = log;
    this.#processes = processes;
  }

  /** Start `entry`'s server now (a stdio server; the caller has decided it may start). */
  start(entry: ServerEntry): void {
    const t = entry.transport;
    if (t.type !== "stdio" || this.#starts.has(entry.name)) return;
    this.#log.debug("starting upstream server", { server: entry.name, early: true });
    const spawn = (launch: StdioLaunch): EarlyStart => {
      const process = new StdioProcess(launch);
      const pid = process.pid;
      if (pid !== null) {
        this.#processes.started(pid);
        process.child.once("close", () => this.#processes.ended(pid));
      }
      return { launch, process };
    };
    // Spawned at once unless an envFile pipe must be read first (which may wait for a person).
    let started: Promise<EarlyStart>;
    try {
      started = t.envPipe ? stdioLaunch(t).then(spawn) : Promise.resolve(spawn(launchWith(t, {})));
    } catch (err) {
      started = Promise.reject(err);
    }
    // A failure is the claimer's to hear (the same error its own start would have given).
    started.catch(() => {});
    this.#starts.set(entry.name, started);
  }

  /** The early start of this server, once: the pool's first start of it takes it. */
  claim(name: string): Promise<EarlyStart> | undefined {
    const started = this.#starts.get(name);
    this.#starts.delete(name);
    return started;
  }

  /** Stop the starts nobody took (the bridge has loaded and started what it wants). */
  discard(): void {
    for (const [name, started] of this.#starts) {
      this.#starts.delete(name);
      this.#log.debug("an upstream server started early was not used: stopped", { server: name });
      void started.then(({ process }) => process.stop()).catch(() => {});
    }
  }
}
