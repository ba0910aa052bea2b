/**
 * One running sandbox container and the frame channel to its entrypoint. Moves bytes and matches
 * replies to requests; it does not know what a run means to the user (that is session.ts).
 */
import { existsSync } from "node:fs";
import { ENV_DEFAULTS, parseSize } from "../config/env.ts";
import { tmpdir } from "node:os";
import type { ContainerSpec, RuntimeAdapter } from "../../adapters/types.ts";
import { BridgeError } from "../errors.ts";
import type { ChildProcess, SpawnOptions } from "../host/process.ts";
import type { SocketChannel } from "../host/socket-channel.ts";
import type { Logger } from "../log.ts";
import { bootstrapPayload, entrypointFor } from "./bootstrap.ts";
import {
  decodeFrame,
  encodeFrame,
  LineSplitter,
  MAX_FRAME_BYTES,
  PROTOCOL_VERSION,
  type HostFrame,
  type ReadyFrame,
  type ResultFrame,
  type RpcFrame,
} from "./frames.ts";
import { FrameBudget, yieldToEventLoop } from "./frame-budget.ts";
import { boundedReply } from "./reply-bounds.ts";
import { forgetContainer, rememberContainer } from "./live-containers.ts";
import { wallMs, type StartTrace } from "./start-trace.ts";

const STDERR_TAIL_BYTES = 8 * 1024;
/** Replies the sandbox has not read yet; past this it is not reading them and is stopped. */
const MAX_UNREAD_BYTES = 32 * 1024 * 1024;
/** Requests from the sandbox waiting or being answered; past this it is flooding the host. */
const MAX_RPC_IN_FLIGHT = 20_000;
/**
 * Requests answered at once; the rest wait their turn, in order. 10,000 calls gathered at once are
 * legitimate (if heavy) work: started all in one go, they held the event loop for seconds.
 */
export const RPC_CONCURRENCY = 64;

export interface SandboxExit {
  code: number | null;
  /** We stopped it (timeout kill, reset, idle, shutdown, flooding, lifetime cap). */
  killedByUs: boolean;
  /** Stopped for a reason no run reports (it flooded the bridge, it reached its lifetime cap): the next call must hear it. */
  reportLoss: boolean;
  reason: string;
  stderrTail: string;
}

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

interface PendingRun {
  resolve: (r: ResultFrame) => void;
  reject: (e: Error) => void;
  onOutput?: (stream: "stdout" | "stderr", text: string) => void;
}

export class Sandbox {
  readonly name: string;
  readonly engine: string;
  #child: ChildProcess;
  #deps: SandboxDeps;
  #pending = new Map<number, PendingRun>();
  #nextRun = 1;
  #stderrTail = "";
  #killedByUs = false;
  #reportLoss = false;
  #killReason = "";
  #budget = new FrameBudget((reason) => {
    this.#deps.log.warn("stopping a sandbox that floods the bridge", { name: this.name, reason });
    void this.kill(reason, { reportLoss: true });
  });
  #exit: Promise<SandboxExit>;
  #exited: SandboxExit | undefined;
  #ready: { promise: Promise<ReadyFrame>; resolve: (f: ReadyFrame) => void; reject: (e: Error) => void };
  #badFrames = 0;
  #readySeen = false;
  #rpcInFlight = 0;
  #rpcActive = 0;
  /** Requests waiting for a turn: those from #rpcHead on. */
  #rpcQueue: RpcFrame[] = [];
  #rpcHead = 0;
  #rpcScheduled = false;
  #exitListeners: Array<(exit: SandboxExit) => void> = [];
  python = "";

  private constructor(deps: SandboxDeps, child: ChildProcess) {
    this.#deps = deps;
    this.name = deps.spec.name;
    this.engine = deps.adapter.name;
    this.#child = child;
    let resolve!: (f: ReadyFrame) => void;
    let reject!: (e: Error) => void;
    const promise = new Promise<ReadyFrame>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    promise.catch(() => {});
    this.#ready = { promise, resolve, reject };
    void this.#pumpStdout();
    const stderrRead = this.#pumpStderr();
    // The init's last words (why it ended) may still be in the pipe when the process is reaped.
    this.#exit = child.exited.then(async (code) => {
      await Promise.race([stderrRead, new Promise((r) => setTimeout(r, 300))]);
      return this.#onExit(code);
    });
  }

  /** Start the container, send the entrypoint, wait for its ready frame. */
  static async start(deps: SandboxDeps): Promise<Sandbox> {
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
    const box = new Sandbox(deps, child);
    try {
      child.write(bootstrapPayload(entrypointFor(deps.socketChannel?.token)));
    } catch {
      // the exit handler reports why
    }
    const timer = setTimeout(() => {
      box.#ready.reject(
        new BridgeError("SANDBOX_START", `sandbox did not start within ${deps.startTimeoutMs / 1000}s`, {
          source: deps.adapter.name,
          hint: `the engine is slow or stuck: see whether \`${deps.adapter.name} run --rm ${deps.spec.image} true\` finishes; an engine in a VM may still be booting`,
        }),
      );
    }, deps.startTimeoutMs);
    try {
      const ready = await box.#ready.promise;
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
    onOutput?: PendingRun["onOutput"],
  ): { id: number; result: Promise<ResultFrame> } {
    const id = this.#nextRun++;
    const result = new Promise<ResultFrame>((resolve, reject) => {
      if (!this.alive) {
        reject(this.#exitError());
        return;
      }
      this.#pending.set(id, { resolve, reject, onOutput });
      this.#send({ ...extra, t: "exec", id, code, output_cap: outputCap, stream: onOutput !== undefined });
    });
    return { id, result };
  }

  interrupt(id: number): void {
    this.#send({ t: "interrupt", id });
  }

  /**
   * Remove the container by name (the client process alone would not stop it) and wait for exit.
   * `reportLoss`: no run will say why it stopped, so the session tells the next call (as after a crash).
   */
  async kill(reason: string, opts: { reportLoss?: boolean } = {}): Promise<SandboxExit> {
    if (!this.#killedByUs) {
      this.#killedByUs = true;
      this.#reportLoss = opts.reportLoss === true;
      this.#killReason = reason;
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

  #send(frame: HostFrame): void {
    this.#sendRaw(encodeFrame(frame));
  }

  /** A frame already encoded (the reply path encodes once, to check its size). */
  #sendRaw(line: string): void {
    if (this.#killedByUs) return;
    try {
      this.#child.write(line);
    } catch (err) {
      this.#deps.log.debug("write to sandbox failed", { name: this.name, error: String(err) });
      return;
    }
    if (this.#child.pendingBytes > MAX_UNREAD_BYTES) {
      this.#deps.log.warn("sandbox stopped reading the bridge's replies; stopping it", {
        name: this.name,
        unread: this.#child.pendingBytes,
      });
      void this.kill(`it stopped reading the bridge's replies (${Math.round(this.#child.pendingBytes / 1048576)} MiB unread)`);
    }
  }

  /** Frames, within the budget; the event loop gets a turn every few milliseconds of reading. */
  async #pumpStdout(): Promise<void> {
    const budget = this.#budget;
    const splitter: LineSplitter = new LineSplitter(
      MAX_FRAME_BYTES,
      (line, bytes) => {
        budget.frame(bytes);
        if (budget.exceeded) splitter.stop();
        else this.#onLine(line);
      },
      (problem, bytes) => {
        budget.frame(bytes);
        this.#protocolViolation(problem);
        if (budget.exceeded) splitter.stop();
      },
    );
    // Whether the event loop had a turn since the last chunk (a macrotask ran). Waiting for the next
    // chunk gives it one whenever the sandbox is not writing; only a stream with data always ready
    // (a flood) never does, and only then is a turn forced. Forcing one every few milliseconds of
    // ordinary traffic delayed one call in ten by a timer tick.
    let turned = true;
    const markTurn = () => {
      turned = true;
    };
    try {
      for await (const chunk of this.#child.stdout) {
        if (turned) {
          budget.resumed();
          turned = false;
          setImmediate(markTurn);
        }
        const t0 = performance.now();
        splitter.push(chunk);
        const due = budget.spent(performance.now() - t0);
        if (budget.exceeded) {
          splitter.stop();
          break;
        }
        if (due) {
          await yieldToEventLoop();
          budget.resumed();
        }
      }
    } catch {
      // stream torn down with the process
    }
  }

  async #pumpStderr(): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of this.#child.stderr) {
        this.#budget.stderr(chunk.length);
        if (this.#budget.exceeded) break;
        const text = decoder.decode(chunk, { stream: true });
        this.#stderrTail = (this.#stderrTail + text).slice(-STDERR_TAIL_BYTES);
        this.#deps.log.debug("sandbox stderr", { name: this.name, text: text.trimEnd() });
      }
    } catch {
      // ignore
    }
  }

  #onLine(line: string): void {
    const decoded = decodeFrame(line);
    if (!decoded.ok) {
      this.#protocolViolation(decoded.error);
      return;
    }
    const frame = decoded.frame;
    switch (frame.t) {
      case "ready":
        if (this.#readySeen) this.#protocolViolation("a second ready frame");
        this.#readySeen = true;
        this.#ready.resolve(frame);
        return;
      case "result": {
        const pending = this.#pending.get(frame.id);
        if (!pending) {
          this.#protocolViolation(`result for unknown run ${frame.id}`);
          return;
        }
        this.#pending.delete(frame.id);
        pending.resolve(frame);
        return;
      }
      case "rpc":
        void this.#answerRpc(frame);
        return;
      case "output": {
        const pending = this.#pending.get(frame.id);
        if (!pending?.onOutput) {
          this.#protocolViolation(`output for run ${frame.id}, which is not streaming`);
          return;
        }
        pending.onOutput(frame.stream, frame.text);
        return;
      }
    }
  }

  /**
   * Queued, then answered RPC_CONCURRENCY at a time. Answering starts outside the reading loop (a
   * microtask after it), so the work a request causes is not charged to the sandbox's frame budget.
   */
  #answerRpc(frame: RpcFrame): void {
    if (++this.#rpcInFlight > MAX_RPC_IN_FLIGHT) {
      this.#rpcInFlight--;
      if (!this.#killedByUs) {
        this.#deps.log.warn("sandbox flooded the bridge with requests; stopping it", { name: this.name });
        void this.kill(`it sent more than ${MAX_RPC_IN_FLIGHT} requests at once`);
      }
      return;
    }
    this.#rpcQueue.push(frame);
    if (!this.#rpcScheduled) {
      this.#rpcScheduled = true;
      queueMicrotask(() => {
        this.#rpcScheduled = false;
        this.#startRpcs();
      });
    }
  }

  #startRpcs(): void {
    const queue = this.#rpcQueue;
    while (this.#rpcActive < RPC_CONCURRENCY && this.#rpcHead < queue.length) {
      const frame = queue[this.#rpcHead]!;
      queue[this.#rpcHead++] = undefined as unknown as RpcFrame;
      if (this.#rpcHead === queue.length || (this.#rpcHead > 4096 && this.#rpcHead * 2 > queue.length)) {
        queue.splice(0, this.#rpcHead);
        this.#rpcHead = 0;
      }
      this.#rpcActive++;
      void this.#answer(frame).finally(() => {
        this.#rpcActive--;
        this.#rpcInFlight--;
        this.#startRpcs();
      });
    }
  }

  async #answer(frame: RpcFrame): Promise<void> {
    const handler = this.#deps.onRpc;
    if (!handler) {
      this.#send({ t: "rpc_result", id: frame.id, ok: false, error: { message: `unsupported request ${frame.method}` } });
      return;
    }
    try {
      const value = await handler(frame);
      const params = (frame.params ?? {}) as { server?: unknown; tool?: unknown };
      const what = frame.method === "tools.call" ? `${String(params.server)}.${String(params.tool)}` : frame.method;
      const reply = boundedReply(value, what);
      if ("refused" in reply) this.#send({ t: "rpc_result", id: frame.id, ok: false, error: { kind: "protocol", message: reply.refused } });
      else this.#sendRaw(`{"t":"rpc_result","id":${JSON.stringify(frame.id)},"ok":true,"value":${reply.json}}\n`);
    } catch (err) {
      const e = err as Error & { kind?: string; details?: Record<string, unknown> };
      this.#send({ t: "rpc_result", id: frame.id, ok: false, error: { kind: e.kind, message: e.message ?? String(err), ...e.details } });
    }
  }

  #protocolViolation(what: string): void {
    this.#badFrames++;
    // The sandbox is hostile by assumption: log, count, and carry on. Forged frames cannot do more
    // than end their own run early; past the budget's count of them, the sandbox is stopped.
    if (this.#badFrames <= 20) this.#deps.log.warn("bad frame from sandbox", { name: this.name, problem: what });
    this.#budget.malformed();
  }

  #onExit(code: number | null): SandboxExit {
    forgetContainer(this.name);
    const exit: SandboxExit = {
      code,
      killedByUs: this.#killedByUs,
      reportLoss: this.#reportLoss,
      reason: this.#killedByUs ? this.#killReason : describeExit(code, this.#deps.spec.memory, this.#stderrTail),
      stderrTail: this.#stderrTail,
    };
    this.#exited = exit;
    for (const listener of this.#exitListeners.splice(0)) {
      try {
        listener(exit);
      } catch (err) {
        this.#deps.log.warn("a sandbox exit listener failed", { name: this.name, error: String(err) });
      }
    }
    const error = this.#exitError();
    this.#ready.reject(startError(this.#deps, exit));
    for (const p of this.#pending.values()) p.reject(error);
    this.#pending.clear();
    this.#deps.log.debug("sandbox exited", { name: this.name, code, reason: exit.reason });
    return exit;
  }

  #exitError(): BridgeError {
    const e = this.#exited;
    return new BridgeError("SANDBOX_EXITED", `the sandbox stopped: ${e?.reason ?? "unknown reason"}`, { source: this.engine });
  }
}

/** Why a sandbox ended that we did not stop: its init (entrypoint/init.py) says, where it could. */
function describeExit(code: number | null, memory: string, stderrTail: string): string {
  if (/\[sandbox-init\] lifetime cap reached/.test(stderrTail)) return "it reached its lifetime cap (MCP_BRIDGE_CONTAINER_LIFETIME)";
  const killed = /\[sandbox-init\] interpreter killed by signal (\d+)(?:; oom_kills=(\d+))?/.exec(stderrTail);
  if (killed) {
    const [, sig, ooms] = killed;
    if (ooms !== undefined && Number(ooms) > 0)
      return `it ran out of memory (limit ${memory}, MCP_BRIDGE_MEMORY): the kernel killed the interpreter`;
    if (sig === "9")
      return ooms === undefined
        ? `the interpreter was killed (SIGKILL): most likely it ran out of memory (limit ${memory}, MCP_BRIDGE_MEMORY)`
        : "the interpreter was killed (SIGKILL) from outside: not by the memory limit";
    return `the interpreter was killed by signal ${sig}`;
  }
  if (code === 137 || code === null) return "it was killed (SIGKILL) from outside the sandbox (the engine, or `kill`/`docker rm -f`)";
  if (code === 0) return "it exited (the code ended the interpreter, e.g. os._exit, or the engine stopped it)";
  return `it exited with code ${code}`;
}

/** Turn a container that died before its ready frame into an error that says how to fix it. */
function startError(deps: SandboxDeps, exit: SandboxExit): BridgeError {
  const text = exit.stderrTail;
  const engine = deps.adapter.name;
  const image = deps.spec.image;
  if (/image not known|no such image|unable to find image|manifest unknown|pull access denied|repository does not exist/i.test(text)) {
    return new BridgeError("IMAGE_MISSING", `image ${image} not found`, { source: engine, hint: deps.adapter.imageHint(image) });
  }
  if (/cgroups in hybrid mode|hybrid mode not supported/i.test(text)) {
    return new BridgeError("SANDBOX_START", "crun cannot run on this hybrid cgroup v1 host", {
      source: engine,
      hint: 'install runc and set runtime = "runc" and cgroup_manager = "cgroupfs" in /etc/containers/containers.conf (or MCP_BRIDGE_OCI_RUNTIME=runc)',
    });
  }
  if (/ulimit|rlimit|RLIMIT/i.test(text)) {
    return new BridgeError("SANDBOX_START", `the engine could not apply resource limits: ${lastLines(text)}`, {
      source: engine,
      hint: "lower the nofile/nproc limits below the host's hard limits (`ulimit -Hn`, `ulimit -Hu`), or run the bridge as root",
    });
  }
  // Before the runtime's own messages: podman says "OCI runtime attempted to invoke a command that was not found".
  if (/executable file not found|command that was not found|exec: "?python3"?: /i.test(text)) {
    return new BridgeError("SANDBOX_START", `the image ${image} has no python3 to run: ${lastLines(text)}`, {
      source: engine,
      hint: "MCP_BRIDGE_IMAGE must name an image with Python 3.9 or later as python3 on its PATH: unset it for the default (python:3.13-slim, or the offline image `mcp-code-exec image build --offline` makes)",
    });
  }
  if (deps.spec.ociRuntime && /unknown or invalid runtime name|runtime .* not found|invalid runtime/i.test(text)) {
    return new BridgeError("SANDBOX_START", `the OCI runtime ${deps.spec.ociRuntime} is not known to ${engine}`, {
      source: engine,
      hint: `install it (e.g. apt-get install runsc) and register it with ${engine}, or unset MCP_BRIDGE_OCI_RUNTIME`,
    });
  }
  if (/network enabled in root network namespace/i.test(text)) {
    return new BridgeError("SANDBOX_START", "gVisor (runsc) could not set up its network stack on this host", {
      source: engine,
      hint: 'register runsc with the runtime argument --network=none, e.g. in /etc/docker/daemon.json: {"runtimes": {"runsc": {"path": "/usr/bin/runsc", "runtimeArgs": ["--network=none"]}}}, then restart the engine',
    });
  }
  // Python needs some room to start: limits far below the defaults are the likeliest cause of a silent exit.
  const tight = [
    parseSize(deps.spec.memory) < 64 * 1024 * 1024 ? `MCP_BRIDGE_MEMORY=${deps.spec.memory}` : "",
    deps.spec.pids < 16 ? `MCP_BRIDGE_PIDS=${deps.spec.pids}` : "",
  ].filter(Boolean);
  return new BridgeError("SANDBOX_START", `sandbox failed to start (exit ${exit.code ?? "signal"}): ${lastLines(text) || exit.reason}`, {
    source: engine,
    hint: `${tight.length ? `${tight.join(" and ")} may be too small for Python to start (the defaults are ${ENV_DEFAULTS.MCP_BRIDGE_MEMORY} and ${ENV_DEFAULTS.MCP_BRIDGE_PIDS}); ` : ""}${text.trim() ? "the engine's own message is above; " : ""}\`${engine} run --rm ${image} true\` shows whether any container starts here`,
  });
}

function lastLines(text: string): string {
  return text.trim().split("\n").slice(-5).join(" | ").slice(0, 800);
}
