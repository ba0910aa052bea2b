/**
 * Starting a session's sandbox as soon as possible, and explaining a start that failed. Nothing that
 * can be learned from the start itself is asked first: the engine's probe comes from the cache of
 * an earlier run when the binary is unchanged (src/engines/probe-cache.ts), and the image is not
 * checked beforehand (`--pull never` makes a missing image fail the start, and the engine says so).
 * A failure is then looked at closely: a start that fails on a cached probe is retried once after
 * probing the engine afresh, and a failure the engine did not explain is checked against the image.
 * A missing default image is replaced by the offline image where the engine has that (image-choice.ts);
 * an image still missing is pulled (image-pull.ts), and the start tried again.
 */
import type { EngineInfo, RuntimeAdapter } from "../../adapters/types.ts";
import type { SessionDeps } from "./session.ts";
import { isGvisor } from "../../adapters/oci-flags.ts";
import { BridgeError } from "../errors.ts";
import { CAN_PASS_CHANNEL } from "../host/process.ts";
import { CHANNEL_MOUNT, openSocketChannel, type SocketChannel } from "../host/socket-channel.ts";
import type { RpcFrame } from "../sandbox/frames.ts";
import type { Sandbox } from "../sandbox/sandbox.ts";
import { StartTrace } from "../sandbox/start-trace.ts";
import { containerSpec, identityLabels } from "./container-spec.ts";
import { carryImageChoice, fallbackImage, fallbackNote, imageFor } from "./image-choice.ts";
import { canPull, pullFailed, pullImage, type PullListener } from "./image-pull.ts";

const START_TIMEOUT_MS = 60_000;
/** The fd the protocol uses inside the container when the engine passes one. */
const CHANNEL_FD = 3;

/** What a start needs: the session's own dependencies, the handler of the sandbox's requests, and whether it closed meanwhile. */
export type StartDeps = Pick<
  SessionDeps,
  "config" | "engine" | "refreshEngine" | "spawn" | "engineEnv" | "log" | "seccompProfile" | "onEngine" | "installer" | "identity"
> & {
  onRpc: (frame: RpcFrame) => Promise<unknown>;
  /** The session was closed meanwhile: start nothing more. */
  closed: () => boolean;
  /** Told what a pull of the missing image is doing (the calls waiting for this start pass it on). */
  onPull?: PullListener;
};

export interface Started {
  box: Sandbox;
  adapter: RuntimeAdapter;
  trace: StartTrace;
  /** Why installs cannot reach this sandbox (no package store mounted), or undefined when they can. */
  packagesUnavailable: string | undefined;
}

export async function startSandbox(deps: StartDeps): Promise<Started> {
  let adapter: RuntimeAdapter | undefined;
  let tried: string | undefined;
  try {
    return await startOrRetry(deps, (a) => {
      adapter = a;
      tried = imageFor(deps.config, a);
    });
  } catch (err) {
    // The default image is not on this engine: the offline image is used if it is (image-choice.ts),
    // else the engine pulls the missing one.
    if (!(err instanceof BridgeError) || err.code !== "IMAGE_MISSING" || !adapter || !tried || deps.closed()) throw err;
    const image = await fallbackImage(deps.config, adapter, tried);
    if (image) {
      deps.log.info("sandbox image", { note: fallbackNote(deps.config, adapter, image) });
      return await startOrRetry(deps, (a) => (adapter = a));
    }
    if (!canPull(deps.config, adapter)) throw err;
    try {
      await pullImage(adapter, tried, { config: deps.config, log: deps.log, listener: deps.onPull });
    } catch (pullErr) {
      throw pullFailed(tried, adapter, pullErr);
    }
    if (deps.closed()) throw new BridgeError("SANDBOX_START", "the session closed while its image was being pulled");
    return await startOrRetry(deps, (a) => (adapter = a));
  }
}

/**
 * The running sandbox of this session that another bridge started (a replica that died, or this bridge
 * before a restart), attached to and taken over; undefined when the engine keeps none (only engines
 * whose sandboxes outlive their bridge can: kubernetes) or has none for this session.
 */
export async function adoptSandbox(deps: StartDeps): Promise<Started | undefined> {
  if (!deps.identity) return undefined;
  const trace = new StartTrace();
  const { adapter } = await deps.engine();
  if (!adapter.adopt) return undefined;
  deps.onEngine?.(adapter);
  const found = await adapter.adopt(identityLabels(deps.identity));
  if (!found) return undefined;
  trace.mark("engine");
  const spec = { ...containerSpec(deps.config, undefined, undefined, undefined, deps.identity), name: found.name };
  const { Sandbox } = await import("../sandbox/sandbox.ts");
  const box = Sandbox.adopt(
    { adapter, spec, spawn: deps.spawn, engineEnv: deps.engineEnv, log: deps.log, startTimeoutMs: START_TIMEOUT_MS, onRpc: deps.onRpc },
    found.child,
  );
  trace.facts.channel = "stdio (adopted)";
  return {
    box,
    adapter,
    trace,
    packagesUnavailable: `the ${adapter.name} engine does not see this machine's folders, and the package store is mounted from them`,
  };
}

/** A start, retried once after a fresh engine probe when the cached one may have misled it. */
async function startOrRetry(deps: StartDeps, chose: (adapter: RuntimeAdapter) => void): Promise<Started> {
  let adapter: RuntimeAdapter | undefined;
  const choose = (a: RuntimeAdapter) => {
    if (adapter && adapter !== a) carryImageChoice(adapter, a);
    adapter = a;
    chose(a);
  };
  try {
    return await launch(deps, choose);
  } catch (err) {
    if (!retryable(err) || deps.closed() || !deps.refreshEngine?.()) throw await explain(err, deps, adapter);
    deps.log.info("sandbox start failed on a cached engine probe: probing the engine again", {
      error: err instanceof BridgeError ? err.message : String(err),
    });
    try {
      return await launch(deps, choose);
    } catch (again) {
      throw await explain(again, deps, adapter);
    }
  }
}

async function launch(deps: StartDeps, chose: (adapter: RuntimeAdapter) => void): Promise<Started> {
  const { config } = deps;
  const trace = new StartTrace();
  const { adapter, info } = await deps.engine();
  chose(adapter);
  trace.mark("engine");
  deps.onEngine?.(adapter);
  trace.facts.probe = info.cached ? "cached" : "asked";
  if (adapter.ensureRunning) await adapter.ensureRunning();
  // Shutdown wins over a start in progress: nothing is started once the session is closed.
  if (deps.closed()) throw new BridgeError("SANDBOX_START", "the session closed while the sandbox was starting");
  // Frames go straight to the sandbox over an fd the engine hands it, when it can (podman, not gVisor),
  // or over a socket it mounts (a docker daemon on this host; gVisor does not let the sandbox reach host sockets).
  const gvisor = isGvisor(config.ociRuntime);
  const direct = config.channel !== "stdio" && !gvisor;
  const fd = direct && adapter.passesFds === true && CAN_PASS_CHANNEL;
  const socket =
    direct && !fd && !socketChannelFailed.has(adapter) && adapter.sharesHostSockets?.(info) === true ? openChannel(deps) : undefined;
  const store = packageStore(deps, adapter, info);
  const spec = containerSpec(
    { ...config, image: imageFor(config, adapter) },
    deps.seccompProfile?.(),
    fd ? { fd: CHANNEL_FD } : socket ? { hostDir: socket.hostDir, mountAt: CHANNEL_MOUNT, socket: socket.containerPath } : undefined,
    "dir" in store ? store.dir : undefined,
    deps.identity,
  );
  trace.mark("profile");
  // Loaded here, not at start-up: the frame schemas and the entrypoint's sources are only needed now.
  const { Sandbox } = await import("../sandbox/sandbox.ts");
  let box: Sandbox;
  try {
    box = await Sandbox.start({
      adapter,
      spec,
      trace,
      spawn: deps.spawn,
      engineEnv: deps.engineEnv,
      log: deps.log,
      startTimeoutMs: START_TIMEOUT_MS,
      onRpc: deps.onRpc,
      socketChannel: socket,
    });
  } catch (err) {
    socket?.dispose();
    // The engine would not mount the channel's folder after all (a daemon that sees another /tmp):
    // this engine's sandboxes use stdin/stdout from now on, starting with this one.
    const message = err instanceof Error ? err.message : String(err);
    if (!socket || deps.closed() || !/mount/i.test(message)) throw err;
    socketChannelFailed.add(adapter);
    deps.log.info("sandbox start with a socket channel failed: using the engine's stdin/stdout from now on", {
      error: message,
    });
    return launch(deps, chose);
  }
  // Known once the sandbox has spoken: a container that could not reach the socket talks over stdio.
  trace.facts.channel = fd
    ? "fd"
    : !socket
      ? "stdio"
      : socket.chosen === "socket"
        ? "socket"
        : "stdio (the sandbox could not reach the socket)";
  return { box, adapter, trace, packagesUnavailable: "why" in store ? store.why : undefined };
}

/**
 * The package store's site folder, mounted read-only into every sandbox so installs appear in a running
 * one (the host writes a new folder, the sandbox puts it on sys.path) and a new one has them at once.
 * Only an engine that sees this host's folders can mount it: podman here, a docker daemon on this host.
 */
function packageStore(deps: StartDeps, adapter: RuntimeAdapter, info: EngineInfo): { dir: string } | { why: string } {
  const installer = deps.installer;
  if (!installer) return { why: "installs are not available in this bridge" };
  if (installer.settings.mode === "deny" && !deps.config.packages.always.length)
    return { why: "installs are turned off (MCP_BRIDGE_INSTALL=deny)" };
  if (adapter.name !== "podman" && adapter.sharesHostSockets?.(info) !== true)
    return { why: `the ${adapter.name} engine does not see this machine's folders, and the package store is mounted from them` };
  // `--mount type=bind,source=…` cannot carry a comma; the start must not fail for a feature it may not use.
  if (installer.store.dirs.site.includes(","))
    return {
      why: `the state dir's path (${deps.config.stateDir}) has a comma, which the engine's --mount cannot carry: set MCP_BRIDGE_STATE_DIR to a path without one`,
    };
  try {
    installer.store.ensure();
    return { dir: installer.store.dirs.site };
  } catch (err) {
    return {
      why: `the package store cannot be made in the state dir (${(err as Error).message}); set MCP_BRIDGE_STATE_DIR to a writable folder`,
    };
  }
}

/** A socket channel for this start, or none when its folder cannot be made (the start then uses stdio). */
function openChannel(deps: StartDeps): SocketChannel | undefined {
  try {
    return openSocketChannel((why) => deps.log.warn("sandbox socket channel", { why }));
  } catch (err) {
    deps.log.debug("no socket channel: could not make its folder", { error: String(err) });
    return undefined;
  }
}

/** Engines on which a start with a socket channel failed: they cannot mount it, and are not asked again. */
const socketChannelFailed = new WeakSet<RuntimeAdapter>();

/** Failures a stale probe could cause (a daemon that moved or stopped); not a slow engine's timeout. */
function retryable(err: unknown): boolean {
  return (
    err instanceof BridgeError &&
    (err.code === "SANDBOX_START" || err.code === "ENGINE_FAILED") &&
    !/did not start within/.test(err.message)
  );
}

/** A start failure the engine did not put down to the image is checked against the image. */
async function explain(err: unknown, deps: StartDeps, adapter: RuntimeAdapter | undefined): Promise<unknown> {
  if (!adapter || deps.closed() || !(err instanceof BridgeError) || (err.code !== "SANDBOX_START" && err.code !== "ENGINE_FAILED"))
    return err;
  const image = imageFor(deps.config, adapter);
  const present = await adapter.imageExists(image).catch(() => true);
  if (present) return err;
  return new BridgeError("IMAGE_MISSING", `image ${image} not found`, {
    source: adapter.name,
    hint: `${adapter.imageHint(image)}, or set MCP_BRIDGE_IMAGE`,
    cause: err,
  });
}
