/**
 * A client's persistent Python session: one sandbox container, runs one at a time, idle shutdown, and
 * an honest note whenever state was lost. The timeout ladder (ladder.ts), the outcome (outcome.ts), the
 * container (container-spec.ts) and requests from the code (request-gate.ts) each live next door.
 */
import { SessionApprovals } from "../approvals/remembered.ts";
import type { Config } from "../config/env.ts";
import { BridgeError } from "../errors.ts";
import type { ChildProcess, SpawnOptions } from "../host/process.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "../metrics.ts";
import { PolicyRefusal, serverRefusal, type Policy, type RunSlots } from "../policy.ts";
import type { Selected } from "../engines/registry.ts";
import type { Sandbox } from "../sandbox/sandbox.ts";
import type { ClientChannel } from "../server/client-requests.ts";
import { Deadline } from "./deadline.ts";
import { startSandbox } from "./sandbox-start.ts";
import { awaitRun, INTERRUPT_GRACE_MS } from "./ladder.ts";
import { assembleOutcome, cancelledBeforeStart, formatSeconds, MAX_IMAGES, refused, type RunOutcome } from "./outcome.ts";
import { RequestGate, type RequestHandler } from "./request-gate.ts";
import type { SpanContext, Telemetry } from "../telemetry/telemetry.ts";
import type { PackageInstaller } from "../packages/install.ts";
import { SessionPackages } from "../packages/session-packages.ts";
import { moduleNotFoundHint } from "../packages/hint.ts";
import { afterCancelNote, freshNameErrorNote } from "./state-notes.ts";

export type { RunOutcome } from "./outcome.ts";

export interface RunRequest {
  code: string;
  timeoutSec?: number;
  reset?: boolean;
  /** MCP servers whose proxies this run (and later runs) can use. */
  servers?: string[];
  /** Aborts the run like a timeout does (client cancellation). */
  signal?: AbortSignal;
  /** Receives output while the code runs (progress notifications). */
  onOutput?: (stream: "stdout" | "stderr", text: string) => void;
  /** The MCP client that asked: approval questions, relayed upstream questions, progress. */
  client?: ClientChannel;
  /** The span of the call that asked (its sandbox start and proxied calls are its children). */
  trace?: SpanContext;
}

export interface SessionDeps {
  config: Config;
  engine: () => Promise<Selected>;
  /** Forget a cached engine probe so the next start asks the engine; true when there was one. */
  refreshEngine?: () => boolean;
  spawn: (command: string, args: string[], options: SpawnOptions) => ChildProcess;
  engineEnv: Record<string, string>;
  log: Logger;
  /** Answers requests from the session's sandbox code (tool calls, discovery). */
  requests?: RequestHandler;
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
  /** Told the engine before each sandbox starts (the app guards its containers against our death). */
  onEngine?: (adapter: Selected["adapter"]) => void;
  telemetry?: Telemetry;
  /** Installs (runtime.install): its store is mounted into each sandbox; absent: no installs. */
  installer?: PackageInstaller;
}

let sessionCounter = 0;

export class Session {
  readonly id: string;
  #deps: SessionDeps;
  #box: Sandbox | undefined;
  #starting: Promise<Sandbox> | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #idleTimer: ReturnType<typeof setTimeout> | undefined;
  /** Why the interpreter state was lost since the last result the client saw, if it was. */
  #lostState: string | undefined;
  /** The client cancelled the last run, so its result was never seen: what became of the state (state-notes.ts). */
  #afterCancel: string | undefined;
  #closed = false;
  #loaded = new Set<string>();
  #gate: RequestGate;
  /** A run has happened in the current sandbox (so stopping it loses state the model knows about). */
  #boxUsed = false;
  /** When the current sandbox said it was ready (performance.now()). */
  #boxReadyAt = 0;
  #runCounter = 0;
  #approvals = new SessionApprovals();
  #packages = new SessionPackages();
  /** The calls waiting for this session's sandbox: they hear what a pull of its image is doing. */
  #pullWatchers = new Set<(message: string) => void>();
  /** What the pull under way said last (a call that starts waiting hears it at once). */
  #pullSaid: string | undefined;

  constructor(deps: SessionDeps) {
    this.#deps = deps;
    this.id = `${process.pid}-${++sessionCounter}`;
    this.#gate = new RequestGate({ policy: deps.policy, handler: deps.requests, stop: (reason) => this.#stopFlooding(reason) });
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
      .catch((err) => {
        if (!this.#closed) this.#deps.log.warn("prewarm failed", { error: err instanceof BridgeError ? err.render() : String(err) });
      });
  }

  /** Runs are serialised: a session is one interpreter. */
  run(req: RunRequest): Promise<RunOutcome> {
    const next = this.#queue.then(() => this.#run(req));
    this.#queue = next.catch(() => {});
    return next;
  }

  /** Stop for good. A sandbox still starting is not waited for: it is removed as soon as it exists. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#clearIdle();
    const box = this.#box ?? (await this.#starting?.catch(() => undefined));
    this.#box = undefined;
    if (box) await box.kill("bridge shutting down");
  }

  async #run(req: RunRequest): Promise<RunOutcome> {
    const { metrics, log } = this.#deps;
    const runId = `run-${this.id}-${++this.#runCounter}`;
    const runLog = log.child({ request: runId });
    const t0 = performance.now();
    let outcome: RunOutcome | undefined;
    try {
      outcome = this.#refuse(req) ?? (await this.#withSlot(() => this.#execute(req, runLog, runId)));
      return outcome;
    } finally {
      metrics?.countRun(outcome);
      runLog.info("run finished", {
        ms: Math.round(performance.now() - t0),
        error: outcome?.error?.type ?? (outcome ? undefined : "bridge error"),
        timed_out: outcome?.timedOut,
        session_reset: outcome?.sessionReset ? true : undefined,
      });
    }
  }

  /** Checks that need no sandbox: servers the user has not approved, then policy (code size, servers). */
  #refuse(req: RunRequest): RunOutcome | undefined {
    for (const s of req.servers ?? []) {
      const blocked = this.#deps.serverBlocked?.(s);
      if (blocked) return refused(new PolicyRefusal(blocked), this.#deps.config.outputCap);
    }
    const policy = this.#deps.policy;
    if (!policy) return undefined;
    const size = new TextEncoder().encode(req.code).length;
    if (size > policy.maxCodeBytes) {
      return refused(
        new PolicyRefusal(
          `the code is ${size} bytes, over maxCodeBytes = ${policy.maxCodeBytes} (${policy.sources.maxCodeBytes ?? "default"})`,
        ),
        this.#deps.config.outputCap,
      );
    }
    for (const s of req.servers ?? []) {
      const r = serverRefusal(policy, s);
      if (r) return refused(r, this.#deps.config.outputCap);
    }
    return undefined;
  }

  /** Runs executing at once are capped across sessions. */
  async #withSlot(execute: () => Promise<RunOutcome>): Promise<RunOutcome> {
    const slots = this.#deps.slots;
    if (!slots) return execute();
    const release = slots.tryAcquire();
    if (!release) {
      const source = this.#deps.policy?.sources.maxConcurrentRuns ?? "default";
      return refused(
        new PolicyRefusal(`maxConcurrentRuns = ${slots.max} runs are already executing (${source}); try again when one finishes`),
        this.#deps.config.outputCap,
      );
    }
    try {
      return await execute();
    } finally {
      release();
    }
  }

  async #execute(req: RunRequest, runLog: Logger, runId: string): Promise<RunOutcome> {
    const { config, log } = this.#deps;
    const started = performance.now();
    const notes: string[] = [];
    if (req.reset) {
      await this.#stop("reset requested");
      notes.push("Session reset: this run started in a fresh interpreter.");
      this.#lostState = this.#afterCancel = undefined;
      this.#loaded.clear();
      this.#approvals.clear();
      this.#packages.clear();
    }
    for (const s of req.servers ?? []) this.#loaded.add(s);
    this.#clearIdle();
    const watcher = req.client && ((message: string) => req.client!.progress("image", message));
    if (watcher) {
      this.#pullWatchers.add(watcher);
      if (this.#starting && this.#pullSaid) watcher(this.#pullSaid);
    }
    let box: Sandbox;
    try {
      box = await this.#ensure(req.trace);
    } finally {
      if (watcher) this.#pullWatchers.delete(watcher);
    }
    const waitedMs = performance.now() - started;
    const firstInBox = !this.#boxUsed;
    if (req.signal?.aborted) {
      // Cancelled while it waited in the queue: it never runs, and a loss still waits to be told.
      this.#armIdle();
      this.#afterCancel ??= afterCancelNote({ ranMs: 0, interrupted: false });
      return cancelledBeforeStart(config.outputCap, notes);
    }
    const lostBefore = this.#lostState ?? (box !== this.#box ? "the sandbox was replaced" : undefined);
    this.#lostState = undefined;
    if (lostBefore && !req.reset)
      notes.push(`Note: earlier session state was lost (${lostBefore}); this run started in a fresh interpreter.`);
    else if (this.#afterCancel) notes.push(this.#afterCancel);
    this.#afterCancel = undefined;
    this.#boxUsed = true;
    const timeoutSec = req.timeoutSec ?? config.timeoutSec;
    const { id, result } = box.run(
      req.code,
      config.outputCap,
      this.#execExtra(),
      req.onOutput && capStream(req.onOutput, config.outputCap),
    );
    // Time a person spends answering a question does not count against the run (README: Approvals).
    const deadline = new Deadline(timeoutSec * 1000);
    this.#gate.beginRun(id, {
      loaded: this.#loaded,
      log: runLog,
      runId,
      client: req.client,
      approvals: this.#approvals,
      holdClock: () => deadline.hold(),
      trace: req.trace,
      packages: this.#packages,
    });
    let sessionReset: string | undefined;
    let ending: Awaited<ReturnType<typeof awaitRun>> = { timedOut: false, cancelled: false, killed: false };
    try {
      ending = await awaitRun(box, id, result, {
        timeoutMs: timeoutSec * 1000,
        deadline,
        signal: req.signal,
        onInterrupt: (why) =>
          log.info(why === "timeout" ? "run timed out, interrupting" : "run cancelled, interrupting", { session: this.id, run: id }),
      });
      if (ending.killed) {
        this.#box = undefined;
        sessionReset = `the code did not stop within ${INTERRUPT_GRACE_MS / 1000}s of an interrupt, so the sandbox was killed; all variables, imports and files in /tmp are gone and the next call starts a fresh session`;
        // A cancelled call's result never reaches the client: the next call must say what happened.
        if (ending.cancelled)
          this.#lostState =
            "the call before it was cancelled and its code did not stop within 2s of an interrupt, so the sandbox was killed";
      }
    } catch (err) {
      if (!(err instanceof BridgeError) || err.code !== "SANDBOX_EXITED") throw err;
      const exit = await box.exited;
      this.#box = undefined;
      this.#lostState = req.signal?.aborted
        ? `the sandbox stopped while the call before it was being cancelled: ${exit.reason}`
        : undefined;
      sessionReset = `${err.message.replace(/^the sandbox stopped: /, "the sandbox stopped during this run: ")}; all variables and imports are gone and the next call starts a fresh session`;
      if (exit.stderrTail.trim()) log.debug("sandbox stderr at exit", { tail: exit.stderrTail.slice(-500) });
    } finally {
      // Whatever the run did, its proxied calls end with it.
      this.#gate.endRun();
    }
    const outcome = assembleOutcome({ ...ending, sessionReset, timeoutSec }, config, notes, Math.round(performance.now() - started));
    const hint = moduleNotFoundHint(outcome.error, this.#deps.installer ? config.packages : undefined, this.#packages.unavailable);
    if (hint) outcome.notes.push(hint);
    // A NameError in a new interpreter the result does not already call new (a reset, a loss noted above).
    const fresh =
      firstInBox &&
      !lostBefore &&
      !req.reset &&
      freshNameErrorNote(outcome.error, { ageMs: performance.now() - this.#boxReadyAt, firstOfSession: this.#runCounter === 1 });
    if (fresh) outcome.notes.push(fresh);
    if (ending.cancelled && !ending.killed && !sessionReset)
      this.#afterCancel = afterCancelNote({ ranMs: outcome.durationMs, interrupted: true, traceback: ending.frame?.error?.traceback });
    runLog.debug("run trace", {
      wait_ms: round1(waitedMs),
      exec_ms: round1(performance.now() - started - waitedMs),
      first_in_sandbox: firstInBox,
    });
    if (this.#box?.alive) this.#armIdle();
    return outcome;
  }

  /** What every exec frame carries beside the code: servers to proxy, display limits. */
  #execExtra(): Record<string, unknown> {
    const { config } = this.#deps;
    const packages = this.#deps.installer ? this.#packages.execSpec(config.packages.always) : undefined;
    return {
      ...(packages ? { packages } : {}),
      servers: [...this.#loaded],
      discovered: this.#deps.discovered?.() ?? [],
      display: {
        image_bytes: config.imageCap,
        file_bytes: config.fileCap,
        files_total_bytes: config.fileCap * 4,
        max_images: MAX_IMAGES,
        max_files: 10,
        result_bytes: config.resultCap,
      },
    };
  }

  /** Less than a second (a tenth of the cap, if shorter) before the sandbox's lifetime cap. */
  #nearLifetimeCap(): boolean {
    const capMs = this.#deps.config.lifetimeSec * 1000;
    return performance.now() - this.#boxReadyAt >= capMs - Math.min(1000, capMs / 10);
  }

  #capReason(): string {
    return `it reached its lifetime cap of ${formatSeconds(this.#deps.config.lifetimeSec)} (MCP_BRIDGE_CONTAINER_LIFETIME)`;
  }

  async #ensure(trace?: SpanContext): Promise<Sandbox> {
    if (this.#closed) throw new BridgeError("SANDBOX_START", "the session is closed");
    const box = this.#box;
    if (box?.alive && this.#nearLifetimeCap()) {
      // Its init ends it at the cap, counted from before it was ready: a run sent now would find it
      // gone (or be cut short) before the bridge hears that it died. Retired first, the run starts fresh.
      await box.kill(this.#capReason(), { reportLoss: true });
    }
    if (this.#box?.alive) return this.#box;
    if (!this.#starting) {
      const span = this.#deps.telemetry?.span("sandbox start", { parent: trace, attributes: { "mcp_code_exec.session": this.id } });
      this.#starting = this.#start().then(
        (box) => {
          span?.set({ "mcp_code_exec.sandbox": box.name });
          span?.end();
          return box;
        },
        (err: unknown) => {
          span?.end(err instanceof Error ? err.message : String(err));
          throw err;
        },
      );
      this.#starting
        .finally(() => {
          this.#starting = undefined;
        })
        .catch(() => {});
    }
    return this.#starting;
  }

  async #start(): Promise<Sandbox> {
    const { config, log } = this.#deps;
    const t0 = performance.now();
    const { box, adapter, trace, packagesUnavailable } = await startSandbox({
      ...this.#deps,
      onRpc: (frame) => this.#gate.handle(frame),
      closed: () => this.#closed,
      onPull: (message) => {
        this.#pullSaid = message;
        for (const w of this.#pullWatchers) w(message);
      },
    }).finally(() => {
      this.#pullSaid = undefined;
    });
    this.#deps.metrics && this.#deps.metrics.containerStarts++;
    log.info("sandbox ready", { engine: adapter.name, name: box.name, python: box.python, ms: Math.round(performance.now() - t0) });
    log.debug("sandbox start trace", {
      engine: adapter.name,
      name: box.name,
      total_ms: trace.totalMs,
      ...trace.facts,
      ...prefixed("ms_", trace.phases),
    });
    this.#box = box;
    this.#packages.unavailable = packagesUnavailable;
    this.#boxReadyAt = performance.now();
    this.#boxUsed = false;
    this.#gate.newSandbox();
    // The sandbox's init enforces the lifetime cap inside; the bridge does too, from outside the
    // sandbox's reach (code there can stop its init under gVisor, which lets signals reach PID 1).
    const lifetime = setTimeout(
      () =>
        void box.kill(this.#capReason(), {
          reportLoss: true,
        }),
      config.lifetimeSec * 1000,
    );
    (lifetime as { unref?: () => void }).unref?.();
    void box.exited.then((exit) => {
      clearTimeout(lifetime);
      if (this.#box === box) this.#box = undefined;
      // Lost state is told on the next call, unless we stopped the sandbox on purpose (the run that did
      // so says why) — a sandbox stopped for flooding the bridge lost its state through its own doing.
      if ((!exit.killedByUs || exit.reportLoss) && !this.#closed && this.#boxUsed) this.#lostState = exit.reason;
    });
    if (this.#closed) {
      await box.kill("bridge shutting down");
      throw new BridgeError("SANDBOX_START", "the session closed while the sandbox was starting");
    }
    return box;
  }

  /** Requests answered cost the host work and memory whether or not they succeed: a flood ends the sandbox. */
  #stopFlooding(reason: string): void {
    const box = this.#box;
    if (!box?.alive) return;
    this.#deps.log.warn("stopping a sandbox that floods the host with requests", { name: box.name, reason });
    void box.kill(reason, { reportLoss: true });
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
      if (this.#boxUsed)
        this.#lostState = `the sandbox was stopped after ${formatSeconds(this.#deps.config.idleTimeoutSec)} idle (MCP_BRIDGE_RUNTIME_IDLE_TIMEOUT)`;
      void box.kill("idle");
    }, ms);
    (this.#idleTimer as { unref?: () => void }).unref?.();
  }

  #clearIdle(): void {
    if (this.#idleTimer) clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
  }
}

function round1(ms: number): number {
  return Math.round(ms * 10) / 10;
}

function prefixed(prefix: string, values: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [`${prefix}${k}`, v]));
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
