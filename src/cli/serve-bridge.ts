/**
 * The bridge proper, loaded once serve.ts has answered the opening: the SDK server, the session, the
 * upstream pool. Takes the connection from the handshake front with every message received so far.
 */
import { homedir } from "node:os";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { createApp, VERSION } from "../app.ts";
import type { Config } from "../config/env.ts";
import type { Discovery } from "../config/servers.ts";
import type { Logger } from "../log.ts";
import { serverRefusal, type Policy } from "../policy.ts";
import { reapOrphans } from "../reaper.ts";
import { getRenderer } from "../render/render.ts";
import { removeAllContainers, removeAllContainersSync } from "../sandbox/live-containers.ts";
import { createBridgeServer } from "../server/bridge-server.ts";
import type { HandshakeFront } from "../server/handshake-front.ts";
import { type Handshake, handshake } from "../server/handshake.ts";
import { startupReadiness } from "../server/readiness.ts";
import { guardParams } from "../server/wire.ts";
import { PREWARM_SERVERS_MAX, rememberServers } from "../server/opening-names.ts";
import { LOCAL_PRINCIPAL, Sessions } from "../session/sessions.ts";
import type { EarlySession } from "./serve-early.ts";

/** The one connection of a stdio bridge: its default session is the session of every call without `session`. */
const STDIO_CONNECTION = "stdio";

/** How long the handshake may wait for the startup check (engine and image); see readiness.ts for why so short. */
const READINESS_WAIT_MS = 250;

/** How long after start-up the orphan sweep runs (and the startup check, when an earlier one answered). */
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
  /** The first session, made while this loaded (serve-early.ts), if one was; none is made after this is asked. */
  early?: () => Promise<EarlySession> | undefined;
}

export async function startBridge(start: BridgeStart): Promise<RunningBridge> {
  const { config, log, discovery, front } = start;
  const early = await start.early?.()?.catch(() => undefined);
  const app = createApp(process.env, process.cwd(), { config, log, discovery, policy: start.policy, core: early?.core });
  const upstream = app.localSessionDeps();
  early?.bind(upstream);
  // The servers the first call names start now, not once it has reached its session: the servers the
  // user has not approved or the policy refuses are left out, as the call's own checks would.
  const allowed = (early?.servers ?? []).filter((s) => !upstream.serverBlocked?.(s) && !serverRefusal(start.policy, s));
  if (allowed.length) upstream.startServers?.(allowed);
  // Those started as the call arrived were taken by that start; any other is stopped.
  early?.core.earlyUpstreams.discard();
  // Not begun before the first call's sandbox and servers have started, when an earlier check answered.
  const readiness = startupReadiness({ config, engine: app.engine, log, laterMs: ORPHAN_SWEEP_DELAY_MS }, READINESS_WAIT_MS);
  const sessions = new Sessions({
    // The local user's first session may have been made (its sandbox started) while this loaded; never on
    // kubernetes (serve.ts), where a sandbox carries its session's identity.
    make: (principal, handle) =>
      (principal === LOCAL_PRINCIPAL ? early?.take() : undefined) ?? app.newSession({ identity: { principal, handle } }),
    ttlMs: config.sessionTtlSec * 1000,
    maxPerPrincipal: config.maxSessionsPerUser,
    log,
  });
  // A prewarm not begun before this loaded (no early answer: the first start here) begins at
  // `initialize` too, while the startup check below is waited for, rather than at `initialized`.
  const prewarm = () => config.prewarm && !start.shuttingDown() && sessions.prewarm(LOCAL_PRINCIPAL, STDIO_CONNECTION);
  if (front.initializeSeen) prewarm();
  else front.onrequest = (request) => request.method === "initialize" && prewarm();
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
    await early?.close().catch(() => {});
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
    onServersNamed: rememberUsed(config, discovery),
  });
  // The default session the first call will use (or the first new session), made now so its sandbox
  // starts in the background (made already when it began at `initialize`).
  server.oninitialized = () => prewarm();
  await server.connect(guardParams(front.attach()));
  log.info("serving MCP on stdio", { version: VERSION, answeredEarly: front.answered });
  // The sweep lists containers on every engine installed: later, so it does not compete with the first
  // sandbox start (prewarm) or a client's first call for the CPU.
  const sweep = setTimeout(() => void reapOrphans(app.env, log), ORPHAN_SWEEP_DELAY_MS);
  (sweep as { unref?: () => void }).unref?.();
  return { close };
}

/**
 * The servers this session's calls named (configured ones, the latest first), kept for the next session
 * in this folder, which starts them at `initialize` (MCP_BRIDGE_PREWARM_SERVERS). Written when they change.
 */
function rememberUsed(config: Config, discovery: Discovery): (names: readonly string[]) => void {
  const known = new Set(discovery.servers.map((s) => s.name));
  let used: string[] = [];
  return (names) => {
    const named = names.filter((n) => known.has(n));
    const next = [...new Set([...named, ...used])].slice(0, PREWARM_SERVERS_MAX);
    if (next.join("\0") === used.join("\0")) return;
    used = next;
    rememberServers(config.stateDir, process.env.HOME || homedir(), process.cwd(), used);
  };
}
