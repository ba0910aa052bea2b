/**
 * The first sandbox, started before the rest of the bridge has loaded. Loading the MCP SDK's server,
 * the upstream servers' code and the rest takes tens of milliseconds after the opening; a sandbox
 * needs none of it (app-core.ts). So `serve` makes the local user's first session here and starts its
 * sandbox as soon as it is sure to be wanted: at `initialize` when prewarm is on, at the first
 * run_python call that uses the default session otherwise. The bridge (serve-bridge.ts) then takes
 * that session as the connection's default, and gives it what it gets from the upstream servers;
 * until then the session has none to give (no run can reach it before the bridge has loaded).
 * The sandbox's life is the session's, as for every other session (session/sandbox-life.ts).
 *
 * The servers that call names start here too, before its sandbox, when they would start unasked
 * (upstream/early-upstreams.ts): the bridge's pool takes their processes when it has loaded. A prewarm
 * starts the servers the last session in this folder named (server/opening-names.ts), the same way.
 */
import { homedir } from "node:os";
import { createCore, type AppCore, type CoreMade } from "../app-core.ts";
import { type Discovery, startsUnasked } from "../config/servers.ts";
import { serverRefusal } from "../policy.ts";
import type { UpstreamSessionDeps } from "../app.ts";
import { removeAllContainersSync } from "../sandbox/live-containers.ts";
import { Session } from "../session/session.ts";

export interface EarlySession {
  /** The core the app is made with: one engine selector, one set of guards and slots. */
  readonly core: AppCore;
  /**
   * Settles once the engine was run for the sandbox (or its start failed first, or it took too long):
   * loading the rest of the bridge holds the one JavaScript thread for tens of milliseconds, and the
   * start's own steps before the engine runs would wait behind it.
   */
  readonly spawned: Promise<void>;
  /** The servers the call that started it names: the bridge starts them as soon as it can (once allowed). */
  readonly servers: readonly string[];
  /** The session, once (the connection's default takes it); undefined after. */
  take(): Session | undefined;
  /** What the session gets from the upstream servers, now that the app has them. */
  bind(deps: UpstreamSessionDeps): void;
  /** The session closed (a taken one is the bridge's to close, which is harmless twice). */
  close(): Promise<void>;
}

/** How long the rest of the bridge waits for the early start to run the engine, at most. */
const SPAWN_WAIT_MS = 150;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref?.());

/** Make the local user's first session and start its sandbox in the background. */
export function startEarly(
  made: Required<CoreMade>,
  why: "prewarm" | "call",
  servers: readonly string[] = [],
  discovery?: Discovery,
): EarlySession {
  const core = createCore(process.env, process.env.HOME || homedir(), made);
  // Exit paths before the bridge has loaded (a client gone at once) still leave no container or server.
  process.on("exit", () => {
    removeAllContainersSync();
    core.upstreamProcesses.killAllSync();
  });
  // The servers first: on a machine with few cores their start is what such a first call waits for.
  const starting = earlyServers(servers, discovery, made);
  if (why === "prewarm" && starting.length)
    core.log.info("starting the servers the last session in this folder used (MCP_BRIDGE_PREWARM_SERVERS=0 turns this off)", {
      servers: starting.map((e) => e.name).join(","),
    });
  for (const entry of starting) core.earlyUpstreams.start(entry);
  core.log.debug("starting the first sandbox while the bridge loads", { why });
  let late: UpstreamSessionDeps | undefined;
  let spawned!: () => void;
  const engineRan = new Promise<void>((resolve) => (spawned = resolve));
  const coreDeps = core.sessionDeps(core.log);
  const notYet = () => new Error("the bridge is still starting");
  const session = new Session({
    ...coreDeps,
    spawn: (command, args, options) => {
      try {
        return coreDeps.spawn(command, args, options);
      } finally {
        spawned();
      }
    },
    requests: (frame, run) => (late?.requests ? late.requests(frame, run) : Promise.reject(notYet())),
    startServers: (names) => late?.startServers?.(names),
    serverBlocked: (name) => late?.serverBlocked?.(name),
    discovered: () => late?.discovered?.() ?? [],
  });
  const warmed = session.warm();
  let taken = false;
  return {
    core,
    servers,
    spawned: Promise.race([engineRan, warmed, sleep(SPAWN_WAIT_MS)]),
    take() {
      if (taken) return undefined;
      taken = true;
      return session;
    },
    bind(deps) {
      late = deps;
    },
    close: async () => {
      core.earlyUpstreams.discard();
      await session.close();
    },
  };
}

/**
 * The servers named that start now: stdio servers that would start unasked and that the policy lets
 * run; not those an HTTP bridge shares between its users (never started early: serve is stdio).
 */
function earlyServers(names: readonly string[], discovery: Discovery | undefined, made: Required<CoreMade>) {
  if (!discovery) return [];
  const shared = new Set(made.config.sharedServers);
  return names.flatMap((name) => {
    const entry = discovery.servers.find((s) => s.name === name);
    if (!entry || entry.transport.type !== "stdio" || shared.has(name)) return [];
    return startsUnasked(entry) && !serverRefusal(made.policy, name) ? [entry] : [];
  });
}
