/**
 * One running sandbox container: its start (spawn the engine, send the entrypoint, wait for the ready
 * frame) and its end (kill, exit). The frames to and from its entrypoint go through its channel
 * (channel.ts); why it ended is read by exit-diagnosis.ts. What a run means to the user is session.ts's.
 */
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import type { ContainerSpec, RuntimeAdapter } from "../../adapters/types.ts";
import { BridgeError } from "../errors.ts";
import type { ChildProcess, SpawnOptions } from "../host/process.ts";
import type { SocketChannel } from "../host/socket-channel.ts";
import type { Logger } from "../log.ts";
import { bootstrapPayload, entrypointFor } from "./bootstrap.ts";
import { FrameChannel, type OnOutput } from "./channel.ts";
import { describeExit, startError, type SandboxExit } from "./exit-diagnosis.ts";
import { PROTOCOL_VERSION, type ResultFrame, type RpcFrame } from "./frames.ts";
import { forgetContainer, rememberContainer } from "./live-containers.ts";
import { wallMs, type StartTrace } from "./start-trace.ts";

export type { SandboxExit } from "./exit-diagnosis.ts";

export interface SandboxDeps {
  adapter: RuntimeAdapter;
  spec: ContainerSpec;
  spawn: (command: string, args: string[], options: SpawnOptions) => ChildProcess;
  engineEnv: Record<string, string>;
  log: Logger;
  startTimeoutMs: number;
  /** Requests from sandbox code (tool calls, discovery); the reply goes back as rpc_result. */
  onRpc?: (frame: RpcFrame) => Promise<unknown>;
  /** Told when each step of the start ends (debug trace). */
  trace?: StartTrace;
  /** The socket the container connects to when spec.channelSocket is set (src/host/socket-channel.ts). */
  socketChannel?: SocketChannel;
}

export class Sandbox {
  readonly name: string;
  readonly engine: string;
  #child: ChildProcess;
  #deps: SandboxDeps;
  #channel: FrameChannel;
  #killedByUs = false;
  #reportLoss = false;
  #killReason = "";
  #processGone = false;
  #exit: Promise<SandboxExit>;
  #exited: SandboxExit | undefined;
  #exitListeners: Array<(exit: SandboxExit) => void> = [];
  python = "";

  private constructor(deps: SandboxDeps, child: ChildProcess, firstRunId?: number) {
    this.#deps = deps;
    this.name = deps.spec.name;
    this.engine = deps.adapter.name;
    this.#child = child;
    this.#channel = new FrameChannel(child, {
      firstRunId,
      name: this.name,
      log: deps.log,
      onRpc: deps.onRpc,
      stop: (reason, opts) => void this.kill(reason, opts),
    });
    // The init's last words (why it ended) may still be in the pipe when the process is reaped.
    this.#exit = child.exited.then(async (code) => {
      this.#processGone = true;
      await Promise.race([this.#channel.stderrRead, new Promise((r) => setTimeout(r, 300))]);
      return this.#onExit(code);
    });
  }

  /** Start the container, send the entrypoint, wait for its ready frame. */
  static async start(deps: SandboxDeps): Promise<Sandbox> {
    if (deps.adapter.open) {
      const openedAt = wallMs();
      return Sandbox.#boot(deps, await Sandbox.#open(deps), openedAt);
    }
    const argv = await deps.adapter.runArgv(deps.spec);
    const [command, ...args] = argv;
    deps.trace?.mark("argv");
    deps.log.debug("starting sandbox", { engine: deps.adapter.name, name: deps.spec.name });
    rememberContainer(deps.adapter, deps.spec.name);
    let child: ChildProcess;
    const spawnedAt = wallMs();
    const cwd = tmpdir();
    try {
      // Not the bridge's working directory (the user's project): podman's conmon writes a file named
      // `oom` into its working directory when the container is OOM-killed.
      child = deps.spawn(command!, args, { env: deps.engineEnv, cwd, channel: deps.spec.channelFd !== undefined });
      if (deps.socketChannel) child = deps.socketChannel.wrap(child);
    } catch (err) {
      forgetContainer(deps.spec.name);
      // A spawn into a working folder that is gone fails as if the program were missing (ENOENT).
      if (!existsSync(cwd))
        throw new BridgeError(
          "ENGINE_FAILED",
          `could not run ${command}: its working folder ${cwd} (the temporary folder) does not exist`,
          {
            source: deps.adapter.name,
            hint: "set TMPDIR to a folder that exists (or unset it), then restart the bridge",
            cause: err,
          },
        );
      throw new BridgeError("ENGINE_FAILED", `could not run ${command}: ${(err as Error).message}`, {
        source: deps.adapter.name,
        hint: `check that ${command} still runs (reinstall the engine if not), or set MCP_BRIDGE_RUNTIME to another engine`,
        cause: err,
      });
    }
    return Sandbox.#boot(deps, child, spawnedAt);
  }

  /**
   * A sandbox another bridge started, attached to by the adapter (adapter.adopt): its interpreter runs
   * and holds its session's state, so nothing is sent to start it. Its run ids start at a random point
   * far past any the earlier bridge used, so a result of a run it left behind matches none of ours.
   */
  static adopt(deps: SandboxDeps, child: ChildProcess): Sandbox {
    rememberContainer(deps.adapter, deps.spec.name);
    const box = new Sandbox(deps, child, 1_000_000_000 + Math.floor(Math.random() * 1_000_000_000));
    box.#channel.assumeReady({ t: "ready", protocol: PROTOCOL_VERSION, python: "", boot: {} });
    return box;
  }

  /** An engine with an API (adapter.open): the sandbox is started and attached by the adapter. */
  static async #open(deps: SandboxDeps): Promise<ChildProcess> {
    deps.log.debug("starting sandbox", { engine: deps.adapter.name, name: deps.spec.name });
    rememberContainer(deps.adapter, deps.spec.name);
    try {
      const child = await deps.adapter.open!(deps.spec);
      deps.trace?.mark("argv");
      return child;
    } catch (err) {
      forgetContainer(deps.spec.name);
      if (err instanceof BridgeError) throw err;
      throw new BridgeError("ENGINE_FAILED", `could not start the sandbox: ${(err as Error).message}`, {
        source: deps.adapter.name,
        hint: `\`mcp-code-exec doctor\` checks that ${deps.adapter.name} answers`,
        cause: err,
      });
    }
  }

  /** Send the entrypoint to a started container and wait for its ready frame. */
  static async #boot(deps: SandboxDeps, child: ChildProcess, spawnedAt: number): Promise<Sandbox> {
    const box = new Sandbox(deps, child);
    try {
      child.write(bootstrapPayload(entrypointFor(deps.socketChannel?.token)));
    } catch {
      // the exit handler reports why
    }
    const timer = setTimeout(() => {
      box.#channel.failStart(
        new BridgeError("SANDBOX_START", `sandbox did not start within ${deps.startTimeoutMs / 1000}s`, {
          source: deps.adapter.name,
          hint: `the engine is slow or stuck: see whether \`${deps.adapter.name} run --rm ${deps.spec.image} true\` finishes; an engine in a VM may still be booting`,
        }),
      );
    }, deps.startTimeoutMs);
    try {
      const ready = await box.#channel.ready;
      deps.trace?.markBoot(spawnedAt, ready.boot, wallMs());
      if (ready.protocol !== PROTOCOL_VERSION) {
        throw new BridgeError("SANDBOX_PROTOCOL", `entrypoint speaks protocol ${ready.protocol}, bridge speaks ${PROTOCOL_VERSION}`);
      }
      box.python = ready.python;
      return box;
    } catch (err) {
      await box.kill("start failed");
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  get alive(): boolean {
    return this.#exited === undefined;
  }

  /**
   * Ending, its exit not settled yet: we are stopping it (kill() was called), or its process is gone and
   * its last stderr is still being read. No new run should be sent to it: `exited` settles soon.
   */
  get ending(): boolean {
    return (this.#killedByUs || this.#processGone) && this.#exited === undefined;
  }

  /** Resolves when the container is gone, however it went. */
  get exited(): Promise<SandboxExit> {
    return this.#exit;
  }

  /**
   * Told at once when the container is gone (at once if it is already), before any run waiting on it
   * hears: whoever owns the sandbox's life knows it ended before the run that saw it end does.
   */
  onExit(listener: (exit: SandboxExit) => void): void {
    if (this.#exited) listener(this.#exited);
    else this.#exitListeners.push(listener);
  }

  /** Send code; the promise settles with the result frame or rejects when the sandbox dies. */
  run(
    code: string,
    outputCap: number,
    extra: Record<string, unknown> = {},
    onOutput?: OnOutput,
  ): { id: number; result: Promise<ResultFrame> } {
    return this.#channel.run(code, outputCap, extra, onOutput);
  }

  interrupt(id: number): void {
    this.#channel.interrupt(id);
  }

  /**
   * Remove the container by name (the client process alone would not stop it) and wait for exit.
   * `reportLoss`: no run will say why it stopped, so the session tells the next call (as after a crash).
   */
  /**
   * The bridge is shutting down: a sandbox its engine keeps past the bridge (adapter.leave: kubernetes)
   * is let go (its attachment closed, its lease no longer renewed) so another bridge can adopt it within
   * its lease; any other sandbox is killed.
   */
  async leave(reason: string): Promise<SandboxExit> {
    const adapter = this.#deps.adapter;
    if (!adapter.leave) return this.kill(reason);
    if (!this.#killedByUs) {
      this.#killedByUs = true;
      this.#killReason = reason;
      this.#channel.mute();
      adapter.leave(this.name);
      forgetContainer(this.name);
      this.#child.kill("SIGKILL");
    }
    return this.#exit;
  }

  async kill(reason: string, opts: { reportLoss?: boolean } = {}): Promise<SandboxExit> {
    if (!this.#killedByUs) {
      this.#killedByUs = true;
      this.#reportLoss = opts.reportLoss === true;
      this.#killReason = reason;
      this.#channel.mute();
      // Remove first: closing stdin first would make the sandbox's init end the container by itself,
      // and the engine's own --rm cleanup would then race our removal (docker: "removal already in
      // progress"), leaving the container listed for a while after kill() returned.
      await this.#deps.adapter
        .remove(this.name)
        .catch((err) => this.#deps.log.warn("remove failed", { name: this.name, error: String(err) }));
      this.#child.closeStdin();
      this.#child.kill("SIGKILL");
    }
    return this.#exit;
  }

  #onExit(code: number | null): SandboxExit {
    forgetContainer(this.name);
    const exit: SandboxExit = {
      code,
      killedByUs: this.#killedByUs,
      reportLoss: this.#reportLoss,
      reason: this.#killedByUs ? this.#killReason : describeExit(code, this.#deps.spec.memory, this.#channel.stderrTail),
      stderrTail: this.#channel.stderrTail,
    };
    this.#exited = exit;
    for (const listener of this.#exitListeners.splice(0)) {
      try {
        listener(exit);
      } catch (err) {
        this.#deps.log.warn("a sandbox exit listener failed", { name: this.name, error: String(err) });
      }
    }
    this.#channel.close(this.#exitError(), startError(this.#deps.adapter, this.#deps.spec, exit));
    this.#deps.log.debug("sandbox exited", { name: this.name, code, reason: exit.reason });
    return exit;
  }

  #exitError(): BridgeError {
    const e = this.#exited;
    return new BridgeError("SANDBOX_EXITED", `the sandbox stopped: ${e?.reason ?? "unknown reason"}`, { source: this.engine });
  }
}
