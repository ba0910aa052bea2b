/**
 * The container-engine plugin interface. One file per engine exports a factory returning a
 * RuntimeAdapter; creating one touches nothing, the first real call probes the engine.
 * docs/engines.md states each member's contract and how to load an adapter from outside the binary.
 */
import type { BridgeError, EngineUnavailableError } from "../src/errors.ts";
import type { ChildProcess } from "../src/host/process.ts";

/** Everything needed to start one sandbox container. Engines turn it into their own flags. */
export interface ContainerSpec {
  /** Unique name we can kill the container by. */
  name: string;
  image: string;
  labels: Record<string, string>;
  /** Numeric uid:gid, never root. */
  user: string;
  /** Engine memory size, e.g. "512m"; swap is disabled by setting memory-swap to the same value. */
  memory: string;
  pids: number;
  cpus: number;
  tmpfsSize: string;
  shmSize: string;
  ulimits: { nofile: number; nproc: number };
  /** The container's whole environment (built from an allow-list, never from the bridge's own). */
  env: Record<string, string>;
  /** OCI runtime name or path (e.g. runsc for gVisor); engine default when absent. */
  ociRuntime?: string;
  /** Seccomp profile JSON file on the engine's host; engine default when absent. */
  seccompProfile?: string;
  /** The command run inside the container (argv). */
  command: string[];
  /**
   * The protocol runs over this fd, a socket the bridge hands the container (podman's --preserve-fds),
   * instead of the engine's stdin/stdout relay; absent: stdin/stdout. Only set for adapters with
   * passesFds.
   */
  channelFd?: number;
  /**
   * The protocol runs over a unix socket at this path inside the container, in a host folder listed in
   * `mounts` (read-only) where the bridge listens; absent: channelFd or stdin/stdout. Only set for
   * adapters whose sharesHostSockets says the engine sees the bridge's folders.
   */
  channelSocket?: string;
  /** Host folders the user chose to share (the workspace); none by default. */
  mounts?: Array<{ source: string; target: string; readonly: boolean }>;
}

export interface EngineInfo {
  engine: string;
  /** Absolute path of the CLI binary. */
  binary: string;
  version: string;
  /** Free-form facts for `doctor` (cgroup version, OCI runtime, rootless, ...). */
  details: Record<string, string>;
  /** This answer came from AdapterOptions.probeCache (an earlier bridge's probe), not from the engine now. */
  cached?: boolean;
}

export interface ContainerSummary {
  name: string;
  labels: Record<string, string>;
  running: boolean;
}

/** What the session needs from an engine. Optional members are capabilities only some engines have. */
export interface RuntimeAdapter {
  readonly name: string;
  /** Find the CLI and check the engine answers. Memoised. Throws EngineUnavailableError when not here. */
  probe(): Promise<EngineInfo>;
  /** The argv that starts `spec` attached to stdin/stdout (the binary is argv[0]). */
  runArgv(spec: ContainerSpec): Promise<string[]>;
  imageExists(image: string): Promise<boolean>;
  /** Force-remove a container by name; missing containers are not an error. */
  remove(name: string): Promise<void>;
  /** Synchronous force-remove for exit handlers. */
  removeSync(name: string): void;
  /** Containers carrying `label` (key=value), running or not. */
  list(label: string): Promise<ContainerSummary[]>;
  /** How a user fixes a missing image for this engine. */
  imageHint(image: string): string;
  /**
   * Fetch `image` from its registry into the engine, calling `onLine` with each line of progress the
   * engine prints. Rejects with a BridgeError (code IMAGE_PULL) that carries the engine's own reason.
   * Engines that cannot pull leave this out: a missing image is then the user's to fetch.
   */
  pull?(image: string, onLine: (line: string) => void, opts: { timeoutMs: number }): Promise<void>;
  /** Engines in a VM (podman machine) may need starting first. */
  ensureRunning?(): Promise<void>;
  /**
   * The engine CLI and its global flags (after probe()), for the guard that removes our containers by
   * label once the bridge is gone (src/host/watchdog.ts): `ARGV ps -aq --filter label=…`, `ARGV rm -f`.
   */
  cliArgv?(): string[];
  /** Drop the memoised probe and its cached copy (probeCache): the next probe() asks the engine. */
  forgetProbe?(): void;
  /**
   * The engine can hand the container an fd of the bridge (ContainerSpec.channelFd): frames then go
   * straight to the sandbox instead of through the engine's stdio relay (podman: the CLI and conmon).
   */
  readonly passesFds?: boolean;
  /**
   * Given what probe() learned, whether the engine's containers can connect to a unix socket the bridge
   * creates in this host's temp folder and the engine bind-mounts (ContainerSpec.channelSocket): true
   * only for a daemon on this very host, sharing its filesystem (not a VM, not a remote endpoint).
   */
  sharesHostSockets?(info: EngineInfo): boolean;
  /**
   * Engines reached through an API rather than a CLI (kubernetes): start the sandbox for `spec` and
   * return its stdin/stdout/stderr as a ChildProcess, with no local process. When present the bridge
   * uses it instead of spawning runArgv(); runArgv() then only describes the equivalent command.
   */
  open?(spec: ContainerSpec): Promise<ChildProcess>;
  /**
   * The engine keeps sandboxes past the bridge's exit and ends them itself (kubernetes: each pod's
   * lease): the bridge does not remove them when it exits, so another replica can adopt them.
   */
  readonly keepsSandboxesOnExit?: boolean;
  /**
   * Engines whose sandboxes outlive their bridge (kubernetes): attach to the running sandbox whose
   * labels include all of `labels` (a session's handle and principal), taking over its upkeep (its
   * lease), so a session goes on through another bridge with its state. Undefined when there is none.
   * Its interpreter is already running: no entrypoint is sent, and no ready frame comes.
   */
  adopt?(labels: Record<string, string>): Promise<{ name: string; child: ChildProcess } | undefined>;
  /**
   * The bridge is shutting down and lets sandbox `name` go without removing it (kubernetes: its lease is
   * no longer renewed, so it ends at its lease unless another bridge adopts it first). The bridge then
   * closes its attachment.
   */
  leave?(name: string): void;
}

/** What an adapter module exports as its default: options in, an adapter out, nothing run yet. */
export type AdapterFactory = (options: AdapterOptions) => RuntimeAdapter;

export interface AdapterOptions {
  /** Environment for the engine CLI itself (PATH, HOME, DOCKER_HOST, ...), never the container's. */
  env: Record<string, string>;
  /** Override the CLI binary (tests, unusual installs). */
  binary?: string;
  /** Where an adapter says what it is doing that takes time (starting a VM); stderr when absent. */
  log?: AdapterLog;
  /** Helpers lent by the bridge; always set for adapters loaded through MCP_BRIDGE_ADAPTER. */
  kit?: AdapterKit;
  /** Where a probe's answer is kept between bridge runs (src/engines/probe-cache.ts); none: always probe. */
  probeCache?: ProbeCache;
}

/** What a probe learned, as kept between bridge runs. */
export interface CachedProbe {
  info: EngineInfo;
  /** Global flags the probe found it needs to reach the engine (a socket its CLI does not know). */
  connectFlags?: string[];
}

/** A store of probe answers keyed by engine, binary identity and environment (src/engines/probe-cache.ts). */
export interface ProbeCache {
  get(key: string): CachedProbe | undefined;
  set(key: string, value: CachedProbe): void;
  delete(key: string): void;
}

/** The part of the bridge's logger adapters may use (logs go to stderr, never stdout). */
export interface AdapterLog {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
}

/**
 * What the bridge lends every adapter, so one loaded from a file outside the compiled binary needs no
 * imports from it: the shared hardening flags (use them, never copy them) and the error classes
 * selection understands.
 */
export interface AdapterKit {
  /** Every hardening flag of adapters/oci-flags.ts for `spec`, in the docker/podman dialect. */
  hardeningFlags(spec: ContainerSpec): string[];
  /** `[binary, ...global, "run", ...extra, ...hardeningFlags(spec), spec.image, ...spec.command]`. */
  runArgv(binary: string, spec: ContainerSpec, extra?: string[], global?: string[]): string[];
  /** Throw from probe() when the engine is not installed or not reachable ("not here"). */
  EngineUnavailableError: typeof EngineUnavailableError;
  /** Throw for every other failure; `hint` says what to do. */
  BridgeError: typeof BridgeError;
}
