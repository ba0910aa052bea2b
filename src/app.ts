/** Wiring shared by every command: the core (app-core.ts: configuration, logger, lazy engine, guards), upstream servers, sessions. */
import { homedir } from "node:os";
import { join } from "node:path";
import { createCore, type AppCore } from "./app-core.ts";
import type { Config } from "./config/env.ts";
import { discoverForBridge } from "./config/discover.ts";
import type { Discovery } from "./config/servers.ts";
import type { Logger } from "./log.ts";
import type { Metrics } from "./metrics.ts";
import type { Policy } from "./policy.ts";
import type { EngineSelector } from "./engines/registry.ts";
import { Session, type SessionDeps } from "./session/session.ts";
import { UpstreamPool } from "./upstream/pool.ts";
import { createTokenStore, type TokenStore } from "./auth/token-store.ts";
import { sha256Hex } from "./host/hash.ts";
import { createUpstreamAuth } from "./auth/upstream-auth.ts";
import type { EarlyUpstreams } from "./upstream/early-upstreams.ts";
import { createSandboxRpc } from "./upstream/sandbox-rpc.ts";
import { helperHeaders } from "./auth/headers-helper.ts";
import { beginLogin, type LoginOptions, type LoginStart } from "./auth/login.ts";
import { VERSION } from "./version.ts";
import type { Telemetry } from "./telemetry/telemetry.ts";

export { VERSION };

/** The principal of a bridge that serves one user (stdio, `exec`, HTTP without sign-in). */
const LOCAL = "local";

export interface App {
  config: Config;
  policy: Policy;
  metrics: Metrics;
  log: Logger;
  env: Record<string, string>;
  engine: EngineSelector;
  /** Configured upstream MCP servers (files are read once, at first use). */
  pool(): UpstreamPool;
  newSession(extra?: Partial<SessionDeps>): Session;
  /** What the local user's sessions get from the upstream servers (a session made before the app gets them late). */
  localSessionDeps(): UpstreamSessionDeps;
  /**
   * One principal of an HTTP bridge: its own upstream processes and connections, sign-ins, skills and
   * caches (under `<state dir>/users/<id hash>`), except the servers the admin shares
   * (MCP_BRIDGE_SHARED_SERVERS); its calls are audited under its name. `local` is the bridge's own user.
   */
  principal(id: string): PrincipalScope;
  close(): Promise<void>;
  /** From a synchronous exit handler: kill upstream servers that did not stop when asked. */
  killUpstreamsSync(): void;
  /** OpenTelemetry (a no-op unless OTEL_EXPORTER_OTLP_ENDPOINT is set). */
  telemetry: Telemetry;
}

/** The deps a session gets from its principal's upstream servers. */
export type UpstreamSessionDeps = Pick<SessionDeps, "requests" | "startServers" | "serverBlocked" | "discovered">;

export interface PrincipalScope {
  readonly id: string;
  pool(): UpstreamPool;
  newSession(extra?: Partial<SessionDeps>): Session;
}

/** What `serve` has already made before loading the rest (handshake-front.ts): used, not made again. */
export interface Made {
  config?: Config;
  log?: Logger;
  discovery?: Discovery;
  policy?: Policy;
  /** The core made ahead of the app (serve-early.ts): its engine, guards and slots are the app's. */
  core?: AppCore;
  /** Where a sign-in's browser comes back (a bridge serving HTTP receives it itself); default: loopback. */
  loginRedirect?: LoginOptions["redirect"];
}

export function createApp(processEnv: Record<string, string | undefined> = process.env, cwd = process.cwd(), made: Made = {}): App {
  const home = processEnv.HOME || homedir();
  const core = made.core ?? createCore(processEnv, home, made);
  const { config, log, metrics, telemetry, policy, env, engine, owner } = core;
  processEnv = core.processEnv;
  const processes = core.upstreamProcesses;
  const getAudit = core.audit;
  const getInstaller = core.installer;
  let discovery: Discovery | undefined = made.discovery;
  const getDiscovery = () => (discovery ??= discoverForBridge(processEnv, home, cwd, log));
  const pools: UpstreamPool[] = [];
  /** A pool with its own sign-ins under `stateDir`; `shared` serves the servers every principal shares. */
  const makePool = (stateDir: string, shared?: UpstreamPool, early?: EarlyUpstreams): UpstreamPool => {
    const tokenStore = createTokenStore(stateDir);
    const pool: UpstreamPool = new UpstreamPool({
      discovery: getDiscovery(),
      stateDir,
      log,
      version: VERSION,
      connectTimeoutMs: config.upstreamStartTimeoutSec * 1000,
      // Only servers the user trusts start (pool.blocked), so only theirs may run a headersHelper.
      auth: createUpstreamAuth({ store: tokenStore, version: VERSION, env: processEnv, cwd }),
      processes,
      early,
      ...(shared ? { shared: { names: new Set(config.sharedServers), pool: shared } } : {}),
      signIn: (name): Promise<LoginStart> => signIn(pool, tokenStore, name),
    });
    pools.push(pool);
    return pool;
  };
  let pool: UpstreamPool | undefined;
  const getPool = () => {
    // The local user's pool takes the servers started as the first call arrived (serve-early.ts).
    pool ??= makePool(config.stateDir, undefined, core.earlyUpstreams);
    metrics.upstreamRestarts = () => pools.reduce((n, p) => n + p.restarts(), 0);
    return pool;
  };
  /** What a session of `scope` needs from its upstream servers: answers to its code's requests, and their state. */
  const upstreamDeps = (scope: { id: string; pool: () => UpstreamPool }): UpstreamSessionDeps => ({
    requests: createSandboxRpc({
      pool: scope.pool(),
      toolTimeoutMs: config.toolTimeoutSec * 1000,
      policy,
      metrics,
      audit: getAudit(),
      telemetry,
      signIn: (name) => scope.pool().signIn(name),
      ...(scope.id === LOCAL ? {} : { principal: scope.id }),
      installer: getInstaller(),
    }),
    startServers: (names) => scope.pool().warm(names),
    serverBlocked: (name) => scope.pool().blocked(name)?.message,
    discovered: () =>
      scope
        .pool()
        .entries()
        .map((e) => ({ name: e.name, alias: e.alias })),
  });
  const sessionFor =
    (scope: { id: string; pool: () => UpstreamPool }) =>
    (extra: Partial<SessionDeps> = {}) =>
      new Session({
        ...core.sessionDeps(scope.id === LOCAL ? log : log.child({ principal: scope.id })),
        ...upstreamDeps(scope),
        ...extra,
      });
  const scopes = new Map<string, PrincipalScope>();
  const principalScope = (id: string): PrincipalScope => {
    if (id === LOCAL) return { id, pool: getPool, newSession: sessionFor({ id, pool: getPool }) };
    let scope = scopes.get(id);
    if (!scope) {
      let own: UpstreamPool | undefined;
      const ownPool = () => (own ??= makePool(join(config.stateDir, "users", sha256Hex(id).slice(0, 24)), getPool()));
      scope = { id, pool: ownPool, newSession: sessionFor({ id, pool: ownPool }) };
      scopes.set(id, scope);
    }
    return scope;
  };
  return {
    config,
    policy,
    metrics,
    log,
    env,
    engine,
    pool: getPool,
    newSession: sessionFor({ id: LOCAL, pool: getPool }),
    localSessionDeps: () => upstreamDeps({ id: LOCAL, pool: getPool }),
    principal: principalScope,
    close: async () => {
      await Promise.all(pools.map((p) => p.close()));
      await core.close();
    },
    telemetry,
    killUpstreamsSync: () => {
      processes.killAllSync();
      core.discardUpstreamsFile();
    },
  };

  /** A sign-in started from a call (URL-mode elicitation), as `auth login` starts one; src/upstream/sign-in.ts. */
  async function signIn(p: UpstreamPool, store: TokenStore, name: string): Promise<LoginStart> {
    const entry = p.entry(name);
    const t = entry?.transport;
    if (!entry || !t || t.type === "stdio") throw new Error(`server ${name} is not a remote server`);
    let headers = t.headers;
    if (t.headersHelper) headers = { ...headers, ...(await helperHeaders(entry, { env: processEnv, cwd }).catch(() => ({}))) };
    return beginLogin(
      { name, url: t.url, type: t.type, oauth: t.oauth, headers },
      { store, version: VERSION, redirect: made.loginRedirect },
    );
  }
}
