/**
 * The frame channel to one sandbox's entrypoint: reads its frames within a budget (frame-budget.ts),
 * matches results and streamed output to the runs waiting for them, answers its requests (rpc-queue.ts)
 * and writes frames to it. It moves bytes and matches replies; what a run means is session.ts's, and
 * the container's start and end are sandbox.ts's.
 */
import type { ChildProcess } from "../host/process.ts";
import type { Logger } from "../log.ts";
import { FrameBudget, yieldToEventLoop } from "./frame-budget.ts";
import {
  decodeFrame,
  encodeFrame,
  LineSplitter,
  MAX_FRAME_BYTES,
  type HostFrame,
  type ReadyFrame,
  type ResultFrame,
  type RpcFrame,
} from "./frames.ts";
import { boundedReply } from "./reply-bounds.ts";
import { MAX_RPC_IN_FLIGHT, RpcQueue } from "./rpc-queue.ts";

const STDERR_TAIL_BYTES = 8 * 1024;
/** Replies the sandbox has not read yet; past this it is not reading them and is stopped. */
const MAX_UNREAD_BYTES = 32 * 1024 * 1024;

export type OnOutput = (stream: "stdout" | "stderr", text: string) => void;

interface PendingRun {
  resolve: (r: ResultFrame) => void;
  reject: (e: Error) => void;
  onOutput?: OnOutput;
}

export interface ChannelDeps {
  /** The container's name, for logs. */
  name: string;
  log: Logger;
  /** Requests from sandbox code (tool calls, discovery); the reply goes back as rpc_result. */
  onRpc?: (frame: RpcFrame) => Promise<unknown>;
  /** Stop the sandbox: it floods the bridge or stopped reading (`reportLoss` as in Sandbox.kill). */
  stop: (reason: string, opts?: { reportLoss?: boolean }) => void;
  /**
   * The first run's id (1 unless said). An adopted sandbox (Sandbox.adopt) may still be running a run of
   * the bridge that held it before: its ids start far from that bridge's, so its results match none of ours.
   */
  firstRunId?: number;
}

export class FrameChannel {
  /** Settles when the sandbox's stderr has been read to its end (its last words are in stderrTail). */
  readonly stderrRead: Promise<void>;
  #child: ChildProcess;
  #deps: ChannelDeps;
  #pending = new Map<number, PendingRun>();
  #nextRun = 1;
  #stderrTail = "";
  #budget: FrameBudget;
  #ready = Promise.withResolvers<ReadyFrame>();
  #readySeen = false;
  #badFrames = 0;
  #rpc: RpcQueue;
  /** Nothing more is written: the sandbox is being stopped. */
  #muted = false;
  /** Why runs fail from now on: the sandbox is gone. */
  #closed: Error | undefined;

  /** Starts reading the child's stdout (frames) and stderr (its tail, for diagnosis) at once. */
  constructor(child: ChildProcess, deps: ChannelDeps) {
    this.#child = child;
    this.#deps = deps;
    this.#nextRun = deps.firstRunId ?? 1;
    this.#ready.promise.catch(() => {});
    this.#budget = new FrameBudget((reason) => {
      deps.log.warn("stopping a sandbox that floods the bridge", { name: deps.name, reason });
      deps.stop(reason, { reportLoss: true });
    });
    this.#rpc = new RpcQueue(
      (frame) => this.#answer(frame),
      () => {
        if (this.#muted) return;
        deps.log.warn("sandbox flooded the bridge with requests; stopping it", { name: deps.name });
        deps.stop(`it sent more than ${MAX_RPC_IN_FLIGHT} requests at once`);
      },
    );
    void this.#pumpStdout();
    this.stderrRead = this.#pumpStderr();
  }

  /** The sandbox's ready frame; rejects if it fails to start (failStart) or ends first (close). */
  get ready(): Promise<ReadyFrame> {
    return this.#ready.promise;
  }

  /** The last of what the sandbox wrote to its real stderr (the engine's and its init's messages). */
  get stderrTail(): string {
    return this.#stderrTail;
  }

  /** Send code; the promise settles with the result frame or rejects when the sandbox is gone. */
  run(code: string, outputCap: number, extra: Record<string, unknown>, onOutput?: OnOutput): { id: number; result: Promise<ResultFrame> } {
    const id = this.#nextRun++;
    const result = new Promise<ResultFrame>((resolve, reject) => {
      if (this.#closed) {
        reject(this.#closed);
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

  /** The sandbox was ready before we attached (adopted): no ready frame will come; a late one is a violation. */
  assumeReady(frame: ReadyFrame): void {
    this.#readySeen = true;
    this.#ready.resolve(frame);
  }

  /** The start gave up waiting for the ready frame. */
  failStart(error: Error): void {
    this.#ready.reject(error);
  }

  /** Write nothing more: the sandbox is being removed. */
  mute(): void {
    this.#muted = true;
  }

  /** The sandbox is gone: a start still waiting fails with `startError`, every run waiting with `runError`, and so do later runs. */
  close(runError: Error, startError: Error): void {
    this.#closed = runError;
    this.#ready.reject(startError);
    for (const p of this.#pending.values()) p.reject(runError);
    this.#pending.clear();
  }

  #send(frame: HostFrame): void {
    this.#sendRaw(encodeFrame(frame));
  }

  /** A frame already encoded (the reply path encodes once, to check its size). */
  #sendRaw(line: string): void {
    if (this.#muted) return;
    try {
      this.#child.write(line);
    } catch (err) {
      this.#deps.log.debug("write to sandbox failed", { name: this.#deps.name, error: String(err) });
      return;
    }
    if (this.#child.pendingBytes > MAX_UNREAD_BYTES) {
      this.#deps.log.warn("sandbox stopped reading the bridge's replies; stopping it", {
        name: this.#deps.name,
        unread: this.#child.pendingBytes,
      });
      this.#deps.stop(`it stopped reading the bridge's replies (${Math.round(this.#child.pendingBytes / 1048576)} MiB unread)`);
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
        this.#deps.log.debug("sandbox stderr", { name: this.#deps.name, text: text.trimEnd() });
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
        this.#rpc.push(frame);
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
    if (this.#badFrames <= 20) this.#deps.log.warn("bad frame from sandbox", { name: this.#deps.name, problem: what });
    this.#budget.malformed();
  }
}
