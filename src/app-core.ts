/**
 * What a session's sandbox needs, made before the rest of the app: configuration, logger, the lazy
 * engine, the guards of our containers, the run slots, the package installer. Nothing here loads the
 * MCP SDK or the upstream servers' code (app.ts adds those), so `serve` can start the first sandbox
 * while the rest is still loading (cli/serve-early.ts).
 */
import { join } from "node:path";
import { isGvisor } from "../adapters/oci-flags.ts";
import type { RuntimeAdapter } from "../adapters/types.ts";
import { AuditLog, auditPath } from "./audit/audit-log.ts";
import { loadConfig, type Config } from "./config/env.ts";
import { fileProbeCache } from "./engines/probe-cache.ts";
import { engineEnv, lazyEngine, type EngineSelector } from "./engines/registry.ts";
import { spawnChild } from "./host/process.ts";
import { startWatchdog, UpstreamsFile } from "./host/watchdog.ts";
import { privateFolder, unusableTmpdir, writeProblem } from "./host/private-dir.ts";
import { createLogger, type Logger } from "./log.ts";
import { Metrics } from "./metrics.ts";
import { PackageInstaller } from "./packages/install.ts";
import { loadPolicy, RunSlots, type Policy } from "./policy.ts";
import { seccompProfilePath } from "./sandbox/seccomp.ts";
import { OWNER_LABEL, ownerId } from "./session/container-spec.ts";
import type { SessionDeps } from "./session/session.ts";
import { telemetryFromEnv, type Telemetry } from "./telemetry/telemetry.ts";
import { EarlyUpstreams } from "./upstream/early-upstreams.ts";
import { UpstreamProcesses } from "./upstream/processes.ts";
import { VERSION } from "./version.ts";

/** The deps every session has whoever it serves; app.ts adds the upstream servers' (requests, servers). */
export type CoreSessionDeps = Omit<SessionDeps, "requests" | "startServers" | "serverBlocked" | "discovered">;

export interface AppCore {
  config: Config;
  log: Logger;
  metrics: Metrics;
  telemetry: Telemetry;
  policy: Policy;
  /** The process environment as the app sees it (an unusable TMPDIR left out). */
  processEnv: Record<string, string | undefined>;
  /** The environment engines run with. */
  env: Record<string, string>;
  engine: EngineSelector;
  slots: RunSlots;
  /** The label our containers and upstream processes carry, for the guard that removes them if we are killed. */
  owner: string;
  /** The upstream server processes this bridge started, so that none outlives it (its guard kills them if it is killed). */
  upstreamProcesses: UpstreamProcesses;
  /** Upstream servers started as the first call arrived, for the local user's pool to take (serve-early.ts). */
  earlyUpstreams: EarlyUpstreams;
  /** The guard's list of upstream processes removed (the bridge ended them itself). */
  discardUpstreamsFile(): void;
  audit(): AuditLog;
  installer(): PackageInstaller;
  /** What a session of `log`'s caller needs from the core. */
  sessionDeps(log: Logger): CoreSessionDeps;
  /** The audit log closed, telemetry flushed. */
  close(): Promise<void>;
}

/** What the caller has made already (serve reads config, log and policy before anything else). */
export interface CoreMade {
  config?: Config;
  log?: Logger;
  policy?: Policy;
}

export function createCore(processEnv: Record<string, string | undefined>, home: string, made: CoreMade = {}): AppCore {
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
  // The guard of upstream processes starts with the first of them, and reads their list from this file.
  let upstreamsFile: UpstreamsFile | undefined;
  const upstreamProcesses = new UpstreamProcesses(() => {
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
  const seccompProfile = () =>
    seccompProfilePath(config.stateDir, {
      gvisor: isGvisor(config.ociRuntime),
      onFallback: ({ stateDir, error, path }) =>
        log.warn(
          "the state dir cannot be written: the seccomp profile goes to a temporary folder; caches, the audit log, skills and sign-ins are not kept (set MCP_BRIDGE_STATE_DIR to a writable folder)",
          { stateDir, error, profile: path },
        ),
    });
  return {
    config,
    log,
    metrics,
    telemetry,
    policy,
    processEnv,
    env,
    engine,
    slots,
    owner,
    upstreamProcesses,
    earlyUpstreams: new EarlyUpstreams(log, upstreamProcesses),
    discardUpstreamsFile: () => upstreamsFile?.discard(),
    audit: getAudit,
    installer: getInstaller,
    sessionDeps: (sessionLog) => ({
      config,
      engine,
      refreshEngine: engine.refresh,
      spawn: spawnChild,
      engineEnv: env,
      log: sessionLog,
      installer: getInstaller(),
      metrics,
      policy,
      slots,
      seccompProfile,
      onEngine: guardEngine,
      telemetry,
    }),
    close: async () => {
      audit?.close();
      await telemetry.close();
    },
  };
}
