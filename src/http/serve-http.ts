/**
 * `mcp-code-exec serve --http`: the bridge for a team, over Streamable HTTP at /mcp. The same MCP
 * server as stdio (bridge-server.ts) per connection; Python sessions by handle, bound to the signed-in
 * principal; sign-in by static tokens or an OAuth authorization server's JWTs. Stdio is untouched.
 */
import { homedir } from "node:os";
import { createApp, VERSION } from "../app.ts";
import { ENV_VARS, envSetting, loadConfig, parseSize, type EnvKey, type EnvValue } from "../config/env.ts";
import { BridgeError, renderError } from "../errors.ts";
import { listenHttp } from "../host/http-server.ts";
import { createLogger } from "../log.ts";
import { reapOrphans } from "../reaper.ts";
import { getRenderer } from "../render/render.ts";
import { removeAllContainers, removeAllContainersSync } from "../sandbox/live-containers.ts";
import { createBridgeServer } from "../server/bridge-server.ts";
import { handshake } from "../server/handshake.ts";
import { startupReadiness } from "../server/readiness.ts";
import { Sessions } from "../session/sessions.ts";
import { HttpAuth, parseTokens } from "./auth.ts";
import { HttpEndpoint } from "./endpoint.ts";
import { OAuthCallbacks } from "./oauth-callback.ts";
import { isLoopback, loopbackHosts } from "./origin.ts";
import { CallRate, nodeSandboxes, userSandboxes } from "./quotas.ts";

export interface ServeHttpOptions {
  /** HOST:PORT; overrides MCP_BRIDGE_HTTP_LISTEN. */
  listen?: string;
}

/** The value of an HTTP setting (its default when unset); the schema checked it in loadConfig. */
function setting<K extends EnvKey>(env: Record<string, string | undefined>, key: K): EnvValue<K> | undefined {
  return envSetting(env, key).value;
}

export async function serveHttp(opts: ServeHttpOptions = {}): Promise<void> {
  const env = process.env;
  const home = env.HOME || homedir();
  const config = loadConfig(env, home);
  const log = createLogger(config.logLevel, config.logFormat);
  const listen = opts.listen ?? setting(env, "MCP_BRIDGE_HTTP_LISTEN") ?? ENV_VARS.MCP_BRIDGE_HTTP_LISTEN.default;
  const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(listen);
  if (!m) throw new BridgeError("CONFIG", `--listen ${listen}: expected HOST:PORT`);
  const hostname = m[1]!;
  const port = Number(m[2]);
  const tokens = parseTokens(env.MCP_BRIDGE_HTTP_TOKENS);
  const issuer = setting(env, "MCP_BRIDGE_HTTP_ISSUER");
  if (!isLoopback(hostname) && tokens.size === 0 && !issuer)
    throw new BridgeError("CONFIG", `refusing to serve ${listen} without sign-in: anyone who reaches it could run code`, {
      hint: "set MCP_BRIDGE_HTTP_TOKENS (name=token pairs) or MCP_BRIDGE_HTTP_ISSUER, or listen on 127.0.0.1",
    });

  // A team member's sign-in to an upstream server comes back to this server, not to their machine.
  const callbacks = new OAuthCallbacks();
  const app = createApp(env, process.cwd(), { config, log, loginRedirect: (state, name) => callbacks.receiver(state, name) });
  // Quotas: sessions per user (by count and by memory), sessions on this node, calls per minute.
  const sandboxBytes = parseSize(config.memory);
  const nodeLimit = setting(env, "MCP_BRIDGE_NODE_SANDBOXES");
  const sessions = new Sessions({
    make: (principal, handle) => app.principal(principal).newSession({ identity: { principal, handle } }),
    ttlMs: config.sessionTtlSec * 1000,
    maxPerPrincipal: userSandboxes(config.maxSessionsPerUser, setting(env, "MCP_BRIDGE_USER_MEMORY"), sandboxBytes),
    maxTotal: nodeLimit ? { count: nodeLimit, why: "MCP_BRIDGE_NODE_SANDBOXES" } : nodeSandboxes(sandboxBytes),
    // A one-shot client that left without ending its protocol session gives its slot back.
    reclaim: (principal, canEnd) => endpoint?.reclaim(principal, canEnd) ?? false,
    log,
  });
  const rate = new CallRate(setting(env, "MCP_BRIDGE_USER_CALLS_PER_MINUTE") ?? 120);
  const readiness = startupReadiness({ config, engine: app.engine, log }, 250);
  const said = handshake(
    config,
    VERSION,
    app
      .pool()
      .entries()
      .map((e) => e.name),
    (await readiness).problem,
  );
  const render = getRenderer(config.outputMode);

  let endpoint: HttpEndpoint | undefined;
  let resource = setting(env, "MCP_BRIDGE_HTTP_RESOURCE");
  const server = await listenHttp({
    hostname,
    port,
    maxBodyBytes: config.maxMessageBytes,
    fetch: (req) => endpoint?.fetch(req) ?? new Response("starting", { status: 503 }),
  });
  resource ??= `${server.origin}/mcp`;
  callbacks.setOrigin(new URL(resource).origin);
  const auth = new HttpAuth(
    {
      tokens,
      issuer,
      jwksUrl: setting(env, "MCP_BRIDGE_HTTP_JWKS_URL"),
      resource,
      scopes: (setting(env, "MCP_BRIDGE_HTTP_SCOPES") ?? "").split(/[\s,]+/).filter(Boolean),
      principalClaim: setting(env, "MCP_BRIDGE_HTTP_PRINCIPAL_CLAIM") ?? "sub",
    },
    log,
  );
  if (!auth.required) log.warn("serving without sign-in: only this computer can reach it, and every caller is the same user", { listen });
  endpoint = new HttpEndpoint({
    auth,
    callbacks,
    origins: { origins: setting(env, "MCP_BRIDGE_HTTP_ORIGINS") ?? [], hosts: ownHosts(hostname, server.port, resource) },
    makeServer: (principal, connection) =>
      createBridgeServer({
        config,
        sessions,
        principal: principal.id,
        connection,
        render,
        log: log.child({ principal: principal.id }),
        handshake: said,
        pool: app.principal(principal.id).pool,
        metrics: app.metrics,
        telemetry: app.telemetry,
        admit: () => rate.take(principal.id),
        showSessions: true,
      }),
    onConnectionEnd: (principal, connection) => void sessions.endConnection(principal, connection),
    maxConnectionsPerPrincipal: setting(env, "MCP_BRIDGE_HTTP_MAX_CONNECTIONS") ?? 16,
    idleMs: config.sessionTtlSec * 1000,
    maxBodyBytes: config.maxMessageBytes,
    version: VERSION,
    ready: async () => {
      const r = await startupReadiness({ config, engine: app.engine, log }, 5_000);
      return r.problem ? { ok: false, problem: r.problem } : { ok: true };
    },
    log,
  });

  let stopping = false;
  const shutdown = async (why: string, code = 0) => {
    if (stopping) return;
    stopping = true;
    log.info("shutting down", { why });
    const hardStop = setTimeout(() => process.exit(code), 15_000);
    (hardStop as { unref?: () => void }).unref?.();
    await server.stop().catch(() => {});
    await endpoint?.close().catch(() => {});
    // A replica going away (a rolling update, a scale-down) leaves its sessions' pods to the others.
    await sessions.close({ leave: true }).catch(() => {});
    await removeAllContainers();
    await app.close().catch(() => {});
    process.exit(code);
  };
  process.on("exit", () => {
    removeAllContainersSync();
    app.killUpstreamsSync();
  });
  for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(sig, () => void shutdown(sig));
  process.on("uncaughtException", (err) => {
    log.error("uncaught exception", { error: String(err?.stack ?? err) });
    void shutdown("crash", 1);
  });
  process.on("unhandledRejection", (err) => log.error("unhandled rejection", { error: renderError(err) }));
  const sweep = setTimeout(() => void reapOrphans(app.env, log), 5_000);
  (sweep as { unref?: () => void }).unref?.();
  log.info("serving MCP over HTTP", {
    url: `${server.origin}/mcp`,
    resource,
    version: VERSION,
    sign_in: auth.required ? (issuer ? "oauth" : "tokens") : "none",
  });
  // The last line on stdout says where: scripts and tests read it.
  process.stdout.write(`${server.origin}/mcp\n`);
}

/**
 * The names a loopback listener answers to: its loopback names, and the public one in its resource URL
 * (a reverse proxy in front that passes the client's Host on sends that). Beyond loopback: any.
 */
function ownHosts(hostname: string, port: number, resource: string): string[] {
  const hosts = loopbackHosts(hostname, port);
  const publicHost = new URL(resource).host.toLowerCase();
  return hosts.length && !hosts.includes(publicHost) ? [...hosts, publicHost] : hosts;
}
