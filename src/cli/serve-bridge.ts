/**
 * The bridge proper, loaded once serve.ts has answered the opening: the SDK server, the session, the
 * upstream pool. Takes the connection from the handshake front with every message received so far.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { createApp, VERSION } from "../app.ts";
import type { Config } from "../config/env.ts";
import type { Discovery } from "../config/servers.ts";
import type { Logger } from "../log.ts";
import type { Policy } from "../policy.ts";
import { reapOrphans } from "../reaper.ts";
import { getRenderer } from "../render/render.ts";
import { removeAllContainers, removeAllContainersSync } from "../sandbox/live-containers.ts";
import { createBridgeServer } from "../server/bridge-server.ts";
import type { HandshakeFront } from "../server/handshake-front.ts";
import { type Handshake, handshake } from "../server/handshake.ts";
import { startupReadiness } from "../server/readiness.ts";
import { guardParams } from "../server/wire.ts";
import { LOCAL_PRINCIPAL, Sessions } from "../session/sessions.ts";

/** The one connection of a stdio bridge: its default session is the session of every call without `session`. */
const STDIO_CONNECTION = "stdio";

/** How long the handshake may wait for the startup check (engine and image); see readiness.ts for why so short. */
const READINESS_WAIT_MS = 250;

/** How long after start-up the orphan sweep runs. */
const ORPHAN_SWEEP_DELAY_MS = 5_000;

export interface RunningBridge {
  /** Remove the stats file, the sandbox and the upstream servers, and stop serving. */
  close(): Promise<void>;
}

export interface BridgeStart {
  config: Config;
  /** The policy serve() read (and found readable) before answering. */
  policy: Policy;
  log: Logger;
  discovery: Discovery;
  front: HandshakeFront;
  /** What the front answered the opening with; undefined when it answered nothing. */
  handshake?: Handshake;
  shuttingDown: () => boolean;
}

export async function startBridge(start: BridgeStart): Promise<RunningBridge> {
  const { config, log, discovery, front } = start;
  const app = createApp(process.env, process.cwd(), { config, log, discovery, policy: start.policy });
  const readiness = startupReadiness({ config, engine: app.engine, log }, READINESS_WAIT_MS);
  const sessions = new Sessions({
    make: (principal, handle) => app.newSession({ identity: { principal, handle } }),
    ttlMs: config.sessionTtlSec * 1000,
    maxPerPrincipal: config.maxSessionsPerUser,
    log,
  });
  const stopStats = app.metrics.persist(config.stateDir);
  process.on("exit", () => {
    removeAllContainersSync();
    app.killUpstreamsSync();
    stopStats();
  });
  let server: Server | undefined;
  const close = async () => {
    // The stats file says a bridge is running: gone first, whatever the rest of the shutdown meets.
    stopStats();
    // A bridge restarted with the same sessions' handles adopts the pods it left (kubernetes).
    await sessions.close({ leave: true }).catch(() => {});
    await removeAllContainers();
    await app.close().catch(() => {});
    await server?.close().catch(() => {});
  };

  // Without an answered opening, requests wait in the pipe for the check (only when no earlier check
  // answered): a missing image is then in the instructions the client gets.
  const said =
    start.handshake ??
    handshake(
      config,
      VERSION,
      discovery.servers.map((s) => s.name),
      (await readiness).problem,
    );
  if (start.shuttingDown()) return { close };
  server = createBridgeServer({
    config,
    sessions,
    principal: LOCAL_PRINCIPAL,
    connection: STDIO_CONNECTION,
    render: getRenderer(config.outputMode),
    log,
    handshake: said,
    pool: app.pool,
    metrics: app.metrics,
    telemetry: app.telemetry,
  });
  server.oninitialized = () => {
    // The default session the first call will use (or the first new session), made now so its sandbox starts in the background.
    if (config.prewarm && !start.shuttingDown()) sessions.prewarm(LOCAL_PRINCIPAL, STDIO_CONNECTION);
  };
  await server.connect(guardParams(front.attach()));
  log.info("serving MCP on stdio", { version: VERSION, answeredEarly: front.answered });
  // The sweep lists containers on every engine installed: later, so it does not compete with the first
  // sandbox start (prewarm) or a client's first call for the CPU.
  const sweep = setTimeout(() => void reapOrphans(app.env, log), ORPHAN_SWEEP_DELAY_MS);
  (sweep as { unref?: () => void }).unref?.();
  return { close };
}
