/**
 * `mcp-code-exec run`: MCP over stdio until the client goes away; never leaves a container behind.
 *
 * A start is two steps. This module loads little (config, the client configs, our stdio transport) and
 * answers the opening, `initialize` and `tools/list`, from what the bridge says about itself
 * (server/handshake-front.ts); then serve-bridge.ts loads the SDK server, the session and the rest, and
 * takes every message from there on. A client is connected in about the time a Bun binary takes to
 * start plus a few milliseconds, and the loading happens while it sends its first call.
 */
import { homedir } from "node:os";
import { discoverForBridge } from "../config/discover.ts";
import type { Discovery } from "../config/servers.ts";
import { type Config, loadConfig } from "../config/env.ts";
import { renderError } from "../errors.ts";
import { IdleCollector } from "../host/memory.ts";
import { createLogger } from "../log.ts";
import { type FrontTimings, HandshakeFront } from "../server/handshake-front.ts";
import { handshake } from "../server/handshake.ts";
import { loadPolicy, type Policy } from "../policy.ts";
import { serveProblem } from "../server/problem-server.ts";
import { lastReadiness, withinMs } from "../server/readiness.ts";
import { ModernEra } from "../server/modern-era.ts";
import { PREWARM_SERVERS_MAX, rememberedNames, rememberedServers, rememberNames, slowToDiscover } from "../server/opening-names.ts";
import { StdioTransport } from "../server/stdio-transport.ts";
import { VERSION } from "../version.ts";
import type { RunningBridge } from "./serve-bridge.ts";
import type { EarlySession } from "./serve-early.ts";

/** Idle this long after the last message out, the bridge collects its garbage (host/memory.ts). */
const IDLE_GC_MS = 2_000;

/**
 * How long the opening may hold back loading the rest: clients send `initialize` as soon as they spawn
 * us and `tools/list` as soon as it is answered, well within these.
 */
const OPENING: FrontTimings = { initializeMs: 100, nextMs: 20 };

export async function serve(): Promise<void> {
  const env = process.env;
  const home = env.HOME || homedir();
  const cwd = process.cwd();
  let config: Config;
  let policy: Policy;
  try {
    config = loadConfig(env, home);
    policy = loadPolicy(env, home);
  } catch (err) {
    // Settings that cannot be read: connect anyway, and say what is wrong to whoever asks (problem-server.ts).
    const problem = renderError(err);
    process.stderr.write(`${problem}\n`);
    const transport = new StdioTransport({ stdin: process.stdin, stdout: process.stdout, maxMessageBytes: 4 * 1024 * 1024 });
    serveProblem(transport, problem, VERSION, env, home);
    // What was asked before the input ended is answered first (each answer is the problem, at once).
    transport.oninputend = () => void withinMs(transport.allAnswered(), 5_000, undefined).then(() => process.exit(1));
    await transport.start();
    return;
  }
  const log = createLogger(config.logLevel, config.logFormat);
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
  // Protocol revision 2026-07-28 is served in front of the SDK server's handshake-based revisions.
  const modern = new ModernEra(transport);
  modern.onmodern = (client, version) =>
    log.info(`the client speaks protocol revision ${version}`, { client: client.name, client_version: client.version });
  const front = new HandshakeFront(modern);

  let bridge: Promise<RunningBridge> | undefined;
  let shuttingDown = false;
  // The first sandbox starts while the rest of the bridge loads (serve-early.ts), once it is sure to be
  // wanted; the bridge takes it when it has loaded, and none is started early after that.
  let early: Promise<EarlySession> | undefined;
  let earlyTaken = false;
  let discovery: Discovery | undefined;
  const shutdown = async (why: string, code = 0) => {
    if (shuttingDown) return;
    shuttingDown = true;
    log.info("shutting down", { why });
    const hardStop = setTimeout(() => process.exit(code), 15_000);
    (hardStop as { unref?: () => void }).unref?.();
    const running = await bridge?.catch(() => undefined);
    await running?.close();
    if (!earlyTaken) await (await early?.catch(() => undefined))?.close();
    process.exit(code);
  };
  for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(sig, () => void shutdown(sig));
  process.on("uncaughtException", (err) => {
    log.error("uncaught exception", { error: String(err?.stack ?? err) });
    void shutdown("crash", 1);
  });
  process.on("unhandledRejection", (err) => log.error("unhandled rejection", { error: renderError(err) }));
  // The client closed its end. A client that wrote its requests first (a shell pipeline, a script)
  // gets their answers before the bridge goes; one that is leaving stops it with SIGTERM meanwhile, as
  // MCP's stdio shutdown has it. A request still running past the longest run allowed is not waited for.
  transport.oninputend = () => {
    if (shuttingDown) return;
    const waiting = transport.unanswered;
    if (waiting) log.info("stdin closed: answering the requests already received, then shutting down", { requests: waiting });
    void withinMs(transport.allAnswered(), (config.maxTimeoutSec + 30) * 1000, undefined).then(() => shutdown("stdin closed"));
  };
  // Nobody reads the answers any more.
  process.stdout.on("error", () => void shutdown("stdout closed"));
  front.onclose = () => void shutdown("transport closed");
  front.onrequest = (request) => {
    // When the first call arrived, in the process's own time: where its milliseconds went (bench/latency.ts).
    if (request.method === "tools/call" && !earlyTaken) log.debug("tools/call arrived", { at_ms: Math.round(performance.now() * 10) / 10 });
    // Not on kubernetes: its sandboxes are pods named for their session (a handle), made by the bridge.
    if (early || earlyTaken || shuttingDown || config.engine === "kubernetes" || !startsEarly(request, config.prewarm)) return;
    // At `initialize`: the servers the last session in this folder used, so they are up before its first call.
    const servers =
      request.method === "initialize"
        ? config.prewarmServers
          ? rememberedServers(config.stateDir, home, cwd).slice(0, PREWARM_SERVERS_MAX)
          : []
        : callServers(request);
    early = import("./serve-early.ts").then((m) =>
      m.startEarly({ config, log, policy }, request.method === "initialize" ? "prewarm" : "call", servers, discovery),
    );
    early.catch((err) => log.warn("the first sandbox could not be started early", { error: renderError(err) }));
  };
  front.ondisagree = (answer) =>
    log.warn("the server refused a request the handshake had answered", { answer: JSON.stringify(answer).slice(0, 300) });

  await transport.start();
  // Only with the last startup check's answer: the first start on a machine waits for the check
  // (serve-bridge.ts), so that a missing image is in the instructions.
  const last = lastReadiness(config);
  const answer = (names: string[]) => (last ? handshake(config, VERSION, names, last.problem) : undefined);
  // A large ~/.claude.json is scanned after the opening when the last start here left its names.
  const slow = slowToDiscover(home);
  const earlier = last && slow ? rememberedNames(config.stateDir, home, cwd) : undefined;
  let said = earlier && answer(earlier);
  if (said) {
    front.answerWith(said);
    await front.opening(OPENING);
  }
  // What the front's handler reads (once found) to start the servers a first call names.
  discovery = discoverForBridge(env, home, cwd, log);
  const names = discovery.servers.map((s) => s.name);
  if (earlier && earlier.join("\0") !== names.join("\0"))
    log.info("the servers changed since the last start here; the instructions already sent named the earlier ones", {
      earlier: earlier.join(","),
      now: names.join(","),
    });
  if (slow && earlier?.join("\0") !== names.join("\0")) rememberNames(config.stateDir, home, cwd, names);
  if (!said) {
    said = answer(names);
    if (said) {
      front.answerWith(said);
      await front.opening(OPENING);
    }
  }
  if (shuttingDown) return;
  // An early sandbox start runs the engine first: loading the rest holds the thread its steps need.
  await (await early?.catch(() => undefined))?.spawned;
  if (shuttingDown) return;
  bridge = import("./serve-bridge.ts").then((m) =>
    m.startBridge({
      config,
      policy,
      log,
      discovery,
      front,
      handshake: said,
      shuttingDown: () => shuttingDown,
      early: () => {
        earlyTaken = true;
        return early;
      },
    }),
  );
  await bridge;
}

/**
 * Whether a request that reached the front makes the first sandbox sure to be wanted: `initialize` when
 * prewarm is on (the prewarm, begun before the rest has loaded), or a run_python call on the default
 * session (the call's own sandbox). A call that names a session or resets gets its sandbox as usual.
 */
function startsEarly(request: { method: string; params?: unknown }, prewarm: boolean): boolean {
  if (request.method === "initialize") return prewarm;
  if (request.method !== "tools/call") return false;
  const params = request.params as { name?: unknown; arguments?: { session?: unknown; reset?: unknown } } | undefined;
  if (params?.name !== "run_python") return false;
  const args = params.arguments;
  return typeof args === "object" && args !== null && (args.session === undefined || args.session === "") && args.reset !== true;
}

/** The servers a run_python call names (strings only; the bridge checks them again when it handles the call). */
function callServers(request: { params?: unknown }): string[] {
  const servers = (request.params as { arguments?: { servers?: unknown } } | undefined)?.arguments?.servers;
  return Array.isArray(servers) ? servers.filter((s): s is string => typeof s === "string").slice(0, 64) : [];
}
