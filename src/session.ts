/**
 * A client's persistent Python session: one sandbox container, runs one at a time, timeouts with an
 * interrupt → grace → kill ladder, idle shutdown, and an honest note whenever state was lost.
 */
import { hostname } from "node:os";
import type { ContainerSpec } from "../adapters/types.ts";
import type { Config } from "./config/env.ts";
import { BridgeError } from "./errors.ts";
import type { ChildProcess, SpawnOptions } from "./host/process.ts";
import type { Logger } from "./log.ts";
import type { Metrics } from "./metrics.ts";
import { PolicyRefusal, serverRefusal, type Policy, type RunSlots } from "./policy.ts";
import type { Selected } from "./runtime/registry.ts";
import { containerCommand } from "./sandbox/bootstrap.ts";
import type { ErrorInfo, ImageData, OutputFile, ResultFrame, RpcFrame, Table } from "./sandbox/frames.ts";
import { Sandbox } from "./sandbox/sandbox.ts";

/** Label every container of ours carries; the owner label says which bridge process started it. */
export const OWNER_LABEL = "io.mcp-code-exec.owner";
export const MARK_LABEL = "io.mcp-code-exec";
const INTERRUPT_GRACE_MS = 2_000;
/** The sandbox's own cap for a trailing value or a traceback; enforced again on the host. */
const MAX_VALUE_BYTES = 64 * 1024;
const MAX_IMAGES = 8;
/** Requests outside a run before the sandbox is stopped as flooding. */
const MAX_STRAY_RPCS = 1_000;
/** Requests per run beyond the tool-call budget (discovery, docs, search). */
const MAX_DISCOVERY_RPCS = 10_000;
const START_TIMEOUT_MS = 60_000;

export interface RunRequest {
  code: string;
  timeoutSec?: number;
  reset?: boolean;
  /** MCP servers whose proxies this run (and later runs) can use. */
  servers?: string[];
  /** Extra fields for the exec frame. */
  extra?: Record<string, unknown>;
  /** Aborts the run like a timeout does (client cancellation). */
  signal?: AbortSignal;
  /** Receives output while the code runs (progress notifications). */
  onOutput?: (stream: "stdout" | "stderr", text: string) => void;
}

export interface RunOutcome {
  stdout?: string;
  stderr?: string;
  value?: string;
  error?: ErrorInfo;
  stdoutDropped?: number;
  stderrDropped?: number;
  images?: ImageData[];
  files?: OutputFile[];
  displayNotes?: string[];
  table?: Table;
  outputCap: number;
  timedOut?: boolean;
  cancelled?: boolean;
  /** Set when the interpreter state was lost: why, in words a model can act on. */
  sessionReset?: string;
  durationMs: number;
  notes: string[];
}

export interface SessionDeps {
  config: Config;
  engine: () => Promise<Selected>;
  spawn: (command: string, args: string[], options: SpawnOptions) => ChildProcess;
  engineEnv: Record<string, string>;
  log: Logger;
  /** Builds the handler for requests from this session's sandbox code (tool calls, discovery). */
  rpcFor?: (session: Session) => (frame: RpcFrame) => Promise<unknown>;
  /** Every configured server as {name, alias}, sent with each run so proxies can be named. */
  discovered?: () => Array<{ name: string; alias: string }>;
  /** Limits on what runs may do; none when absent. */
  policy?: Policy;
  /** Why a server may not be loaded (not approved, or missing a value), undefined when it may. */
  serverBlocked?: (name: string) => string | undefined;
  /** Shared by every session of the bridge: runs executing at once. */
  slots?: RunSlots;
  metrics?: Metrics;
  /** Seccomp profile file for the engine (written on first use). */
  seccompProfile?: () => string;
}

let sessionCounter = 0;

export class Session {
  readonly id: string;
  #deps: SessionDeps;
  #box: Sandbox | undefined;
  #starting: Promise<Sandbox> | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #idleTimer: ReturnType<typeof setTimeout> | undefined;
  #lostState: string | undefined;
  #closed = false;
  #imageChecked = new Set<string>();
  #loaded = new Set<string>();
  #currentRun: number | undefined;
  #toolCalls = 0;
  #runRpcs = 0;
  #strayRpcs = 0;
  #runAbort = new AbortController();
  /** A run has happened in the current sandbox (so stopping it loses state the model knows about). */
  #boxUsed = false;
  #runCounter = 0;
  /** Logger of the run in progress: every line carries its request id. */
  runLog: Logger;
  #rpc: ((frame: RpcFrame) => Promise<unknown>) | undefined;

  constructor(deps: SessionDeps) {
    this.#deps = deps;
    this.id = `${process.pid}-${++sessionCounter}`;
    this.runLog = deps.log;
    this.#rpc = deps.rpcFor?.(this);
  }

  /** Counts a proxied tool call against the run's budget; throws PolicyRefusal past it. */
  countToolCall(): void {
    const policy = this.#deps.policy;
    if (!policy) return;
    if (++this.#toolCalls > policy.maxToolCallsPerRun) {
      throw new PolicyRefusal(`this run reached max_tool_calls_per_run = ${policy.maxToolCallsPerRun} (${policy.sources.maxToolCallsPerRun ?? "default"}); split the work across runs`);
    }
  }

  /** Aborted when the current run ends: proxied calls still in flight are cancelled with it. */
  get runSignal(): AbortSignal {
    return this.#runAbort.signal;
  }

  /** Servers loaded in this session; they stay loaded until reset. */
  get loadedServers(): ReadonlySet<string> {
    return this.#loaded;
  }

  /** Start the sandbox in the background so the first call does not pay for it. */
  warm(): void {
    if (this.#closed || this.#box?.alive || this.#starting) return;
    this.#ensure()
      .then(() => this.#armIdle()) // a warmed sandbox nobody uses is stopped like an idle one
      .catch((err) => this.#deps.log.warn("prewarm failed", { error: err instanceof BridgeError ? err.render() : String(err) }));
  }

  /** Runs are serialised: a session is one interpreter. */
  run(req: RunRequest): Promise<RunOutcome> {
    const next = this.#queue.then(() => this.#run(req));
    this.#queue = next.catch(() => {});
    return next;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#clearIdle();
    const box = this.#box ?? (await this.#starting?.catch(() => undefined));
    this.#box = undefined;
    if (box) await box.kill("bridge shutting down");
  }

  async #run(req: RunRequest): Promise<RunOutcome> {
    const metrics = this.#deps.metrics;
    const request = `run-${this.id}-${++this.#runCounter}`;
    this.runLog = this.#deps.log.child({ request });
    const t0 = performance.now();
    let outcome: RunOutcome | undefined;
    try {
      outcome = this.#refuse(req);
      if (!outcome) {
        const release = this.#deps.slots?.tryAcquire();
        if (this.#deps.slots && !release) {
          const p = this.#deps.policy;
          outcome = refused(new PolicyRefusal(`max_concurrent_runs = ${this.#deps.slots.max} runs are already executing (${p?.sources.maxConcurrentRuns ?? "default"}); try again when one finishes`), this.#deps.config.outputCap);
        } else {
          try {
            outcome = await this.#execute(req);
          } finally {
            release?.();
          }
        }
      }
      return outcome;
    } finally {
      if (metrics) {
        metrics.runs++;
        if (!outcome || outcome.error) metrics.runErrors++;
        if (outcome?.timedOut) metrics.timeouts++;
        if (outcome?.cancelled) metrics.cancellations++;
        if (outcome?.sessionReset) metrics.sessionResets++;
        if (outcome?.error?.type === "PolicyRefusal") metrics.policyRefusals++;
        metrics.touch();
      }
      this.runLog.info("run finished", {
        ms: Math.round(performance.now() - t0),
        error: outcome?.error?.type ?? (outcome ? undefined : "bridge error"),
        timed_out: outcome?.timedOut,
        session_reset: outcome?.sessionReset ? true : undefined,
      });
    }
  }

  /** Policy checks that need no sandbox: code size and servers. */
  #refuse(req: RunRequest): RunOutcome | undefined {
    for (const s of req.servers ?? []) {
      const blocked = this.#deps.serverBlocked?.(s);
      if (blocked) return refused(new PolicyRefusal(blocked), this.#deps.config.outputCap);
    }
    const policy = this.#deps.policy;
    if (!policy) return undefined;
    const size = new TextEncoder().encode(req.code).length;
    if (size > policy.maxCodeBytes) {
      return refused(new PolicyRefusal(`the code is ${size} bytes, over max_code_bytes = ${policy.maxCodeBytes} (${policy.sources.maxCodeBytes ?? "default"})`), this.#deps.config.outputCap);
    }
    for (const s of req.servers ?? []) {
      const r = serverRefusal(policy, s);
      if (r) return refused(r, this.#deps.config.outputCap);
    }
    return undefined;
  }

  async #execute(req: RunRequest): Promise<RunOutcome> {
    const { config, log } = this.#deps;
    const started = performance.now();
    const notes: string[] = [];
    const outputCap = config.outputCap;
    if (req.reset) {
      await this.#stop("reset requested");
      notes.push("Session reset: this run started in a fresh interpreter.");
      this.#lostState = undefined;
      this.#loaded.clear();
    }
    for (const s of req.servers ?? []) this.#loaded.add(s);
    let lostBefore = this.#lostState;
    this.#lostState = undefined;
    this.#clearIdle();
    const box = await this.#ensure();
    if (box !== this.#box) lostBefore = lostBefore ?? "the sandbox was replaced";
    const timeoutSec = req.timeoutSec ?? config.timeoutSec;
    if (req.signal?.aborted) {
      // Cancelled while it waited in the queue: it never runs.
      this.#armIdle();
      return {
        outputCap,
        durationMs: 0,
        notes,
        cancelled: true,
        error: { type: "Cancelled", message: "run_python was cancelled by the client before it started", traceback: "Cancelled: run_python was cancelled by the client before it started" },
      };
    }
    this.#runAbort = new AbortController();
    this.#boxUsed = true;
    const extra = {
      ...req.extra,
      servers: [...this.#loaded],
      discovered: this.#deps.discovered?.() ?? [],
      display: { image_bytes: config.imageCap, file_bytes: config.fileCap, files_total_bytes: config.fileCap * 4, max_images: MAX_IMAGES, max_files: 10 },
    };
    const { id, result } = box.run(req.code, outputCap, extra, req.onOutput && capStream(req.onOutput, outputCap));
    this.#currentRun = id;
    this.#toolCalls = 0;
    this.#runRpcs = 0;

    let frame: ResultFrame | undefined;
    let timedOut = false;
    let cancelled = false;
    let sessionReset: string | undefined;
    try {
      const first = await raceTimeout(result, timeoutSec * 1000, req.signal);
      if (first.kind === "done") frame = first.value;
      else {
        timedOut = first.kind === "timeout";
        cancelled = first.kind === "aborted";
        log.info(timedOut ? "run timed out, interrupting" : "run cancelled, interrupting", { session: this.id, run: id });
        box.interrupt(id);
        const second = await raceTimeout(result, INTERRUPT_GRACE_MS);
        if (second.kind === "done") frame = second.value;
        else {
          await box.kill(timedOut ? "timeout" : "cancelled");
          this.#box = undefined;
          sessionReset = `the code did not stop within ${INTERRUPT_GRACE_MS / 1000}s of an interrupt, so the sandbox was killed; all variables, imports and files in /tmp are gone and the next call starts a fresh session`;
        }
      }
    } catch (err) {
      if (!(err instanceof BridgeError) || err.code !== "SANDBOX_EXITED") throw err;
      const exit = await box.exited;
      this.#box = undefined;
      this.#lostState = undefined; // reported in this run's result, not again in the next one
      sessionReset = `${err.message.replace(/^the sandbox stopped: /, "the sandbox stopped during this run: ")}; all variables and imports are gone and the next call starts a fresh session`;
      if (exit.stderrTail.trim()) log.debug("sandbox stderr at exit", { tail: exit.stderrTail.slice(-500) });
    }
    if (lostBefore && !req.reset) notes.push(`Note: earlier session state was lost (${lostBefore}); this run started in a fresh interpreter.`);

    // Whatever the run did, its proxied calls end with it.
    this.#runAbort.abort();
    const outcome: RunOutcome = { outputCap, durationMs: Math.round(performance.now() - started), notes };
    if (frame) {
      // The sandbox caps its own output; a forged result must not get past the same caps.
      const [stdout, stdoutOver] = capText(frame.stdout, outputCap);
      const [stderr, stderrOver] = capText(frame.stderr, outputCap);
      if (stdout) outcome.stdout = stdout;
      if (stderr) outcome.stderr = stderr;
      if ((frame.stdout_dropped ?? 0) + stdoutOver) outcome.stdoutDropped = (frame.stdout_dropped ?? 0) + stdoutOver;
      if ((frame.stderr_dropped ?? 0) + stderrOver) outcome.stderrDropped = (frame.stderr_dropped ?? 0) + stderrOver;
      if (frame.value !== undefined) outcome.value = capText(frame.value, MAX_VALUE_BYTES)[0];
      if (frame.error) {
        outcome.error = { type: capText(frame.error.type, 200)[0]!, message: capText(frame.error.message, MAX_VALUE_BYTES)[0]!, traceback: capText(frame.error.traceback, MAX_VALUE_BYTES)[0]! };
      }
      const { images, files, notes } = checkDisplay(frame, config);
      if (images.length) outcome.images = images;
      if (files.length) outcome.files = files;
      if (notes.length) outcome.displayNotes = notes;
      if (frame.table) outcome.table = frame.table;
    }
    if (timedOut || cancelled) {
      const what = timedOut ? `timed out after ${formatSeconds(timeoutSec)}` : "was cancelled by the client";
      outcome.timedOut = timedOut || undefined;
      outcome.cancelled = cancelled || undefined;
      const type = timedOut ? "TimeoutError" : "Cancelled";
      const message = sessionReset
        ? `run_python ${what}; ${sessionReset}`
        : `run_python ${what} and was interrupted; the session and its variables were kept`;
      // Where the code was when it was interrupted helps the model fix it.
      const where = frame?.error?.traceback ? `\n${frame.error.traceback.replace(/KeyboardInterrupt\s*$/, "").trimEnd()}` : "";
      outcome.error = { type, message, traceback: `${type}: ${message}${where}` };
    } else if (sessionReset) {
      outcome.error = { type: "SandboxExited", message: sessionReset, traceback: "" };
    }
    if (sessionReset) outcome.sessionReset = sessionReset;
    this.#currentRun = undefined;
    if (this.#box?.alive) this.#armIdle();
    return outcome;
  }

  async #ensure(): Promise<Sandbox> {
    if (this.#closed) throw new BridgeError("SANDBOX_START", "the session is closed");
    if (this.#box?.alive) return this.#box;
    this.#starting ??= this.#start().finally(() => {
      this.#starting = undefined;
    });
    return this.#starting;
  }

  async #start(): Promise<Sandbox> {
    const { config, log } = this.#deps;
    const { adapter } = await this.#deps.engine();
    if (adapter.ensureRunning) await adapter.ensureRunning();
    if (!this.#imageChecked.has(config.image)) {
      if (!(await adapter.imageExists(config.image))) {
        throw new BridgeError("IMAGE_MISSING", `image ${config.image} not found`, { source: adapter.name, hint: `${adapter.imageHint(config.image)}, or set MCP_BRIDGE_IMAGE` });
      }
      this.#imageChecked.add(config.image);
    }
    const t0 = performance.now();
    const box = await Sandbox.start({
      adapter,
      spec: this.#spec(),
      spawn: this.#deps.spawn,
      engineEnv: this.#deps.engineEnv,
      log,
      startTimeoutMs: START_TIMEOUT_MS,
      onRpc: (frame) => this.#onRpc(frame),
    });
    if (this.#deps.metrics) this.#deps.metrics.containerStarts++;
    log.info("sandbox ready", { engine: adapter.name, name: box.name, python: box.python, ms: Math.round(performance.now() - t0) });
    this.#box = box;
    this.#boxUsed = false;
    this.#strayRpcs = 0;
    void box.exited.then((exit) => {
      if (this.#box === box) this.#box = undefined;
      if (!exit.killedByUs && !this.#closed && this.#boxUsed) this.#lostState = exit.reason;
    });
    if (this.#closed) {
      await box.kill("bridge shutting down");
      throw new BridgeError("SANDBOX_START", "the session closed while the sandbox was starting");
    }
    return box;
  }

  #spec(): ContainerSpec {
    const { config } = this.#deps;
    const rand = Math.random().toString(36).slice(2, 8);
    return {
      name: `mcp-code-exec-${process.pid}-${sessionCounter}-${rand}`,
      image: config.image,
      labels: { [MARK_LABEL]: "1", [OWNER_LABEL]: ownerId() },
      user: config.user,
      memory: config.memory,
      pids: config.pids,
      cpus: config.cpus,
      tmpfsSize: config.tmpfsSize,
      shmSize: config.shmSize,
      ulimits: { nofile: 1024, nproc: 1024 },
      env: SANDBOX_ENV,
      mounts: config.workspace ? [{ source: config.workspace, target: "/workspace", readonly: config.workspaceMode !== "rw" }] : undefined,
      ociRuntime: config.ociRuntime,
      seccompProfile: this.#deps.seccompProfile?.(),
      command: containerCommand(config.lifetimeSec),
    };
  }

  /** Requests from sandbox code are honoured only while one of its runs is in progress. */
  async #onRpc(frame: RpcFrame): Promise<unknown> {
    if (!this.#rpc) throw Object.assign(new Error("this bridge has no MCP servers to offer"), { kind: "bad_request" });
    if (frame.run === null || frame.run !== this.#currentRun) {
      // A background thread may outlive its run now and then; thousands of such requests are a flood.
      if (++this.#strayRpcs > MAX_STRAY_RPCS) this.#stopFlooding(`it sent more than ${MAX_STRAY_RPCS} requests outside any run`);
      throw Object.assign(new Error("requests to the host are only accepted while run_python is running (a background thread outlived its run?)"), { kind: "bad_request" });
    }
    const budget = (this.#deps.policy?.maxToolCallsPerRun ?? 10_000) + MAX_DISCOVERY_RPCS;
    if (++this.#runRpcs > budget) {
      this.#stopFlooding(`one run sent more than ${budget} requests to the host`);
      throw Object.assign(new Error("too many requests in one run"), { kind: "bad_request" });
    }
    return this.#rpc(frame);
  }

  /** Requests answered cost the host work and memory whether or not they succeed: a flood ends the sandbox. */
  #stopFlooding(reason: string): void {
    const box = this.#box;
    if (!box?.alive) return;
    this.#deps.log.warn("stopping a sandbox that floods the host with requests", { name: box.name, reason });
    void box.kill(reason);
  }

  async #stop(reason: string): Promise<void> {
    const box = this.#box ?? (await this.#starting?.catch(() => undefined));
    this.#box = undefined;
    if (box?.alive) await box.kill(reason);
  }

  #armIdle(): void {
    this.#clearIdle();
    const ms = this.#deps.config.idleTimeoutSec * 1000;
    this.#idleTimer = setTimeout(() => {
      const box = this.#box;
      if (!box) return;
      this.#deps.log.info("stopping idle sandbox", { name: box.name, idleSec: this.#deps.config.idleTimeoutSec });
      this.#box = undefined;
      if (this.#boxUsed) this.#lostState = `the sandbox was stopped after ${formatSeconds(this.#deps.config.idleTimeoutSec)} idle (MCP_BRIDGE_RUNTIME_IDLE_TIMEOUT)`;
      void box.kill("idle");
    }, ms);
    (this.#idleTimer as { unref?: () => void }).unref?.();
  }

  #clearIdle(): void {
    if (this.#idleTimer) clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
  }
}

/** Cut text to at most `max` UTF-16 units; returns the text and how many UTF-8 bytes were cut. */
function capText(text: string | undefined, max: number): [string | undefined, number] {
  if (text === undefined || text.length <= max) return [text, 0];
  return [text.slice(0, max), new TextEncoder().encode(text.slice(max)).length];
}

/** Forward streamed output only up to the run's output cap. */
function capStream(onOutput: NonNullable<RunRequest["onOutput"]>, cap: number): NonNullable<RunRequest["onOutput"]> {
  const seen = { stdout: 0, stderr: 0 };
  return (stream, text) => {
    const room = cap - seen[stream];
    if (room <= 0) return;
    seen[stream] += text.length;
    onOutput(stream, text.length > room ? text.slice(0, room) : text);
  };
}

function refused(err: PolicyRefusal, outputCap: number): RunOutcome {
  return { outputCap, durationMs: 0, notes: [], error: { type: "PolicyRefusal", message: err.message, traceback: `PolicyRefusal: ${err.message}` } };
}

/** The sandbox said what it sends; the host checks the sizes again (base64 decoded) before passing it on. */
function checkDisplay(frame: ResultFrame, config: Config): { images: ImageData[]; files: OutputFile[]; notes: string[] } {
  const notes = [...(frame.display_notes ?? [])];
  const decoded = (b64: string) => Math.floor((b64.length * 3) / 4);
  const images = (frame.images ?? []).filter((img, i) => {
    if (i >= MAX_IMAGES) {
      if (i === MAX_IMAGES) notes.push(`images after the first ${MAX_IMAGES} dropped by the bridge`);
      return false;
    }
    if (decoded(img.data) <= config.imageCap) return true;
    notes.push(`image ${i + 1} dropped by the bridge: over the ${config.imageCap}-byte cap (MCP_BRIDGE_IMAGE_CAP)`);
    return false;
  });
  let total = 0;
  const files = (frame.files ?? []).filter((f) => {
    const size = f.text !== undefined ? new TextEncoder().encode(f.text).length : decoded(f.data ?? "");
    total += size;
    if (size <= config.fileCap && total <= config.fileCap * 4) return true;
    notes.push(`${f.name} dropped by the bridge: over the file cap (MCP_BRIDGE_FILE_CAP)`);
    return false;
  });
  return { images, files, notes };
}

/** The sandbox's whole environment: fixed values, nothing from the bridge's own environment. */
export const SANDBOX_ENV: Record<string, string> = {
  HOME: "/tmp",
  TMPDIR: "/tmp",
  LANG: "C.UTF-8",
  PYTHONDONTWRITEBYTECODE: "1",
  PYTHONUNBUFFERED: "1",
  MPLBACKEND: "Agg",
  MPLCONFIGDIR: "/tmp/.matplotlib",
};

export function ownerId(): string {
  return `${hostname()}:${process.pid}`;
}

type Race<T> = { kind: "done"; value: T } | { kind: "timeout" } | { kind: "aborted" };

function raceTimeout<T>(p: Promise<T>, ms: number, signal?: AbortSignal): Promise<Race<T>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve({ kind: "timeout" }), ms);
    const onAbort = () => resolve({ kind: "aborted" });
    if (signal?.aborted) onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });
    p.then(
      (value) => resolve({ kind: "done", value }),
      (err) => reject(err),
    ).finally(() => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    });
  });
}

function formatSeconds(s: number): string {
  return Number.isInteger(s) ? `${s}s` : `${s.toFixed(1)}s`;
}
