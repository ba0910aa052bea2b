/** `mcp-code-exec run`: MCP over stdio until the client goes away; never leaves a container behind. */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { createApp, VERSION } from "../app.ts";
import { renderError } from "../errors.ts";
import { IdleCollector } from "../host/memory.ts";
import { reapOrphans } from "../reaper.ts";
import { getRenderer } from "../render/render.ts";
import { removeAllContainers, removeAllContainersSync } from "../sandbox/live-containers.ts";
import { createBridgeServer } from "../server/bridge-server.ts";
import { startupReadiness } from "../server/readiness.ts";
import { StdioTransport } from "../server/stdio-transport.ts";
import { guardParams } from "../server/wire.ts";

/** How long the handshake may wait for the startup check (engine and image); see readiness.ts for why so short. */
const READINESS_WAIT_MS = 250;

/** Idle this long after the last message out, the bridge collects its garbage (host/memory.ts). */
const IDLE_GC_MS = 2_000;

/** How long after start-up the orphan sweep runs. */
const ORPHAN_SWEEP_DELAY_MS = 5_000;

export async function serve(): Promise<void> {
  const app = createApp();
  const { config, log } = app;
  const readiness = startupReadiness({ config, engine: app.engine, log }, READINESS_WAIT_MS);
  const session = app.newSession();
  const stopStats = app.metrics.persist(config.stateDir);

  let server: Server | undefined;
  let shuttingDown = false;
  const shutdown = async (why: string, code = 0) => {
    if (shuttingDown) return;
    shuttingDown = true;
    log.info("shutting down", { why });
    // The stats file says a bridge is running: gone first, whatever the rest of the shutdown meets.
    stopStats();
    const hardStop = setTimeout(() => process.exit(code), 15_000);
    (hardStop as { unref?: () => void }).unref?.();
    await session.close().catch(() => {});
    await removeAllContainers();
    await app.close().catch(() => {});
    await server?.close().catch(() => {});
    process.exit(code);
  };
  process.on("exit", () => {
    removeAllContainersSync();
    app.killUpstreamsSync();
    stopStats();
  });
  for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(sig, () => void shutdown(sig));
  process.on("uncaughtException", (err) => {
    log.error("uncaught exception", { error: String(err?.stack ?? err) });
    void shutdown("crash", 1);
  });
  process.on("unhandledRejection", (err) => log.error("unhandled rejection", { error: renderError(err) }));
  process.stdin.on("end", () => void shutdown("stdin closed"));
  process.stdin.on("close", () => void shutdown("stdin closed"));

  // Requests wait in the pipe meanwhile (only when the last check did not pass): a missing image is
  // then in the instructions the client gets.
  const { problem } = await readiness;
  if (shuttingDown) return;
  server = createBridgeServer({
    config,
    session,
    render: getRenderer(config.outputMode),
    log,
    version: VERSION,
    pool: app.pool,
    metrics: app.metrics,
    problem,
  });
  // Memory goes back once nothing has happened for a while: after start-up, after each burst of calls.
  const idle = new IdleCollector(IDLE_GC_MS);
  const transport = new StdioTransport({
    onSent: () => idle.touch(),
    stdin: process.stdin,
    stdout: process.stdout,
    maxMessageBytes: config.maxMessageBytes,
    onRefused: ({ reason, bytes, method, answered }) =>
      log.warn("client message refused", { bytes, method, answered, reason: reason.slice(0, 200) }),
  });
  transport.onclose = () => void shutdown("transport closed");
  server.oninitialized = () => {
    if (config.prewarm && !shuttingDown) session.warm();
  };
  await server.connect(guardParams(transport));
  log.info("serving MCP on stdio", { version: VERSION });
  // The sweep lists containers on every engine installed: later, so it does not compete with the first
  // sandbox start (prewarm) or a client's first call for the CPU.
  const sweep = setTimeout(() => void reapOrphans(app.env, log), ORPHAN_SWEEP_DELAY_MS);
  (sweep as { unref?: () => void }).unref?.();
}
