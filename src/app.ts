/** Wiring shared by every command: configuration, logger, lazy engine, upstream servers, sessions. */
import { homedir } from "node:os";
import { join } from "node:path";
import { loadConfig, type Config } from "./config/env.ts";
import { discoverForBridge } from "./config/discover.ts";
import type { Discovery } from "./config/servers.ts";
import { spawnChild } from "./host/process.ts";
import { createLogger, type Logger } from "./log.ts";
import { Metrics } from "./metrics.ts";
import { loadPolicy, RunSlots, type Policy } from "./policy.ts";
import { fileProbeCache } from "./engines/probe-cache.ts";
import { engineEnv, lazyEngine, type EngineSelector } from "./engines/registry.ts";
import { isGvisor } from "../adapters/oci-flags.ts";
import { seccompProfilePath } from "./sandbox/seccomp.ts";
import { privateFolder, unusableTmpdir, writeProblem } from "./host/private-dir.ts";
import { Session, type SessionDeps } from "./session/session.ts";
import { OWNER_LABEL, ownerId } from "./session/container-spec.ts";
import { startWatchdog, UpstreamsFile } from "./host/watchdog.ts";
import { UpstreamProcesses } from "./upstream/processes.ts";
import type { RuntimeAdapter } from "../adapters/types.ts";
import { UpstreamPool } from "./upstream/pool.ts";
import { createTokenStore, type TokenStore } from "./auth/token-store.ts";
import { sha256Hex } from "./host/hash.ts";
import { createUpstreamAuth } from "./auth/upstream-auth.ts";
import { createSandboxRpc } from "./upstream/sandbox-rpc.ts";
import { AuditLog, auditPath } from "./audit/audit-log.ts";
import { helperHeaders } from "./auth/headers-helper.ts";
import { beginLogin, type LoginOptions, type LoginStart } from "./auth/login.ts";
import { VERSION } from "./version.ts";
import { telemetryFromEnv, type Telemetry } from "./telemetry/telemetry.ts";
import { PackageInstaller } from "./packages/install.ts";

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
  /** Where a sign-in's browser comes back (a bridge serving HTTP receives it itself); default: loopback. */
  loginRedirect?: LoginOptions["redirect"];
}

export function createApp(processEnv: Record<string, string | undefined> = process.env, cwd = process.cwd(), made: Made = {}): App {
  const home = processEnv.HOME || homedir();
  const config = made.config ?? loadConfig(processEnv, home);
  const log = made.log ?? createLogger(config.logLevel, config.logFormat);
  const metrics = new Metrics();
  const telemetry = telemetryFromEnv(processEnv, VERSION, (why) => log.warn("telemetry not exported", { why }));
  // A TMPDIR that is no usable folder: the system's temporary folder instead, for us and the engines.
  const badTmp = unusableTmpdir(processEnv);
  if (badTmp) {
    log.warn("TMPDIR is not a folder this user can write: using the system's temporary folder instead", {
      TMPDIR: processEnv.TMPDIR,
      error: badTmp,
    });
    if (processEnv === process.env) delete process.env.TMPDIR;
    processEnv = { ...processEnv, TMPDIR: undefined };
  }
  const env = engineEnv(processEnv);
  // MCP_BRIDGE_ADAPTER, when set, is the configured engine: no built-in is tried.
  // What an earlier bridge's probe learned is reused while the engine's binary is unchanged.
  const engine = lazyEngine(config.adapter ?? config.engine, { env, log, probeCache: fileProbeCache(config.stateDir, VERSION) });
  const policy = made.policy ?? loadPolicy(processEnv, home);
  const slots = new RunSlots(policy.maxConcurrentRuns);
  // What this bridge starts (containers, upstream servers) is removed by a guard if the bridge is killed.
  const owner = `${OWNER_LABEL}=${ownerId()}`;
  let upstreamsFile: UpstreamsFile | undefined;
  const processes = new UpstreamProcesses(() => {
    if (!upstreamsFile) {
      // In the state dir; where it cannot be written, in this process's own folder: the guard must find it.
      const run = join(config.stateDir, "run");
      upstreamsFile = new UpstreamsFile(join(writeProblem(run) === undefined ? run : privateFolder(), `${process.pid}.upstreams`));
      startWatchdog(owner, [], env, upstreamsFile.path);
    }
    return upstreamsFile;
  });
  const guardedEngines = new WeakSet<object>();
  const guardEngine = (adapter: RuntimeAdapter) => {
    if (guardedEngines.has(adapter)) return;
    guardedEngines.add(adapter);
    const argv = adapter.cliArgv?.() ?? [];
    if (argv.length) startWatchdog(owner, argv, env);
  };
  let audit: AuditLog | undefined;
  const getAudit = () => (audit ??= new AuditLog({ path: auditPath(config.stateDir), maxBytes: config.auditMaxBytes, log }));
  let installer: PackageInstaller | undefined;
  const getInstaller = () =>
    (installer ??= new PackageInstaller({
      settings: config.packages,
      stateDir: config.stateDir,
      env: processEnv,
      log,
      audit: getAudit(),
      askTimeoutMs: (policy.askTimeout ?? 120) * 1000,
    }));
  let discovery: Discovery | undefined = made.discovery;
  const getDiscovery = () => (discovery ??= discoverForBridge(processEnv, home, cwd, log));
  const pools: UpstreamPool[] = [];
  /** A pool with its own sign-ins under `stateDir`; `shared` serves the servers every principal shares. */
  const makePool = (stateDir: string, shared?: UpstreamPool): UpstreamPool => {
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
      ...(shared ? { shared: { names: new Set(config.sharedServers), pool: shared } } : {}),
      signIn: (name): Promise<LoginStart> => signIn(pool, tokenStore, name),
    });
    pools.push(pool);
    return pool;
  };
  let pool: UpstreamPool | undefined;
  const getPool = () => {
    pool ??= makePool(config.stateDir);
    metrics.upstreamRestarts = () => pools.reduce((n, p) => n + p.restarts(), 0);
    return pool;
  };
  const sessionFor =
    (scope: { id: string; pool: () => UpstreamPool }) =>
    (extra: Partial<SessionDeps> = {}) =>
      new Session({
        config,
        engine,
        refreshEngine: engine.refresh,
        spawn: spawnChild,
        engineEnv: env,
        log: scope.id === LOCAL ? log : log.child({ principal: scope.id }),
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
        installer: getInstaller(),
        startServers: (names) => scope.pool().warm(names),
        metrics,
        policy,
        serverBlocked: (name) => scope.pool().blocked(name)?.message,
        slots,
        discovered: () =>
          scope
            .pool()
            .entries()
            .map((e) => ({ name: e.name, alias: e.alias })),
        seccompProfile: () =>
          seccompProfilePath(config.stateDir, {
            gvisor: isGvisor(config.ociRuntime),
            onFallback: ({ stateDir, error, path }) =>
              log.warn(
                "the state dir cannot be written: the seccomp profile goes to a temporary folder; caches, the audit log, skills and sign-ins are not kept (set MCP_BRIDGE_STATE_DIR to a writable folder)",
                { stateDir, error, profile: path },
              ),
          }),
        onEngine: guardEngine,
        telemetry,
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
    principal: principalScope,
    close: async () => {
      await Promise.all(pools.map((p) => p.close()));
      audit?.close();
      await telemetry.close();
    },
    telemetry,
    killUpstreamsSync: () => {
      processes.killAllSync();
      upstreamsFile?.discard();
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
