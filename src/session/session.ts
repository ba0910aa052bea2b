/**
 * A client's persistent Python session: one sandbox container, runs one at a time, and an honest note
 * whenever state was lost. The sandbox's life (which one is current, idle stop, lifetime cap, what the
 * next call must hear: sandbox-life.ts), the timeout ladder (ladder.ts), the outcome (outcome.ts), the
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
import { displayLimits } from "../sandbox/protocol.ts";
import type { Sandbox } from "../sandbox/sandbox.ts";
import type { ClientChannel } from "../server/client-requests.ts";
import { SYSTEM_CLOCK, type Clock } from "../clock.ts";
import { Deadline } from "./deadline.ts";
import { SandboxLife } from "./sandbox-life.ts";
import { adoptSandbox, startSandbox } from "./sandbox-start.ts";
import type { SandboxIdentity } from "./container-spec.ts";
import { awaitRun, INTERRUPT_GRACE_MS } from "./ladder.ts";
import { assembleOutcome, cancelledBeforeStart, formatSeconds, refused, type RunOutcome } from "./outcome.ts";
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
  /**
   * Start these upstream servers now: a run that names them starts them while its sandbox starts,
   * rather than when its code first reaches them. Failures are heard by that first use.
   */
  startServers?: (names: readonly string[]) => void;
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
  /** What deadlines, the interrupt's grace, the idle stop and the lifetime cap are measured on (tests move it). */
  clock?: Clock;
  /** The session's handle and principal, labelled on its sandboxes (another bridge may adopt them: adopt()). */
  identity?: SandboxIdentity;
}

let sessionCounter = 0;

export class Session {
  readonly id: string;
  #deps: SessionDeps;
  /** The sandbox's life: which one is current, and what the next call must hear (sandbox-life.ts). */
  #life: SandboxLife;
  #clock: Clock;
  #queue: Promise<unknown> = Promise.resolve();
  /** The client cancelled the last run, so its result was never seen: what became of the state (state-notes.ts). */
  #afterCancel: string | undefined;
  #loaded = new Set<string>();
  #gate: RequestGate;
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
    this.#clock = deps.clock ?? SYSTEM_CLOCK;
    this.#gate = new RequestGate({ policy: deps.policy, handler: deps.requests, stop: (reason) => this.#stopFlooding(reason) });
    this.#life = new SandboxLife({
      start: (trace) => this.#start(trace),
      clock: this.#clock,
      lifetimeSec: deps.config.lifetimeSec,
      idleTimeoutSec: deps.config.idleTimeoutSec,
      log: deps.log,
    });
  }

  /**
   * Why this session's sandbox was lost (it died, or its pod was deleted: not stopped by the bridge),
   * if it was. A session named by handle is then ended: the next call with the handle hears it
   * (src/session/sessions.ts), rather than getting a fresh interpreter under the old name.
   */
  get lost(): string | undefined {
    return this.#life.lost;
  }

  /** Servers loaded in this session; they stay loaded until reset. */
  get loadedServers(): ReadonlySet<string> {
    return this.#loaded;
  }

  /** Start the sandbox in the background so the first call does not pay for it; settles when that start ends. */
  warm(): Promise<void> {
    return this.#life.warm((err) =>
      this.#deps.log.warn("prewarm failed", { error: err instanceof BridgeError ? err.render() : String(err) }),
    );
  }

  /** Runs are serialised: a session is one interpreter. */
  run(req: RunRequest): Promise<RunOutcome> {
    const next = this.#queue.then(() => this.#run(req));
    this.#queue = next.catch(() => {});
    return next;
  }

  /**
   * Stop for good. A sandbox still starting is not waited for: it is removed as soon as it exists.
   * `leave`: the bridge is shutting down; a sandbox the engine keeps past it is left for another bridge to adopt.
   */
  close(opts: { leave?: boolean } = {}): Promise<void> {
    return this.#life.close(opts);
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
    // Everything the run needs starts at once: its servers while its sandbox starts (or is reset).
    if (req.servers?.length && !req.signal?.aborted) this.#deps.startServers?.(req.servers);
    if (req.reset) {
      await this.#life.reset("reset requested");
      notes.push("Session reset: this run started in a fresh interpreter.");
      this.#afterCancel = undefined;
      this.#loaded.clear();
      this.#approvals.clear();
      this.#packages.clear();
    }
    for (const s of req.servers ?? []) this.#loaded.add(s);
    const watcher = req.client && ((message: string) => req.client!.progress("image", message));
    if (watcher) {
      this.#pullWatchers.add(watcher);
      if (this.#life.state.kind === "starting" && this.#pullSaid) watcher(this.#pullSaid);
    }
    let box: Sandbox;
    try {
      box = await this.#life.ensure(req.trace);
    } finally {
      if (watcher) this.#pullWatchers.delete(watcher);
    }
    const waitedMs = performance.now() - started;
    if (req.signal?.aborted) {
      // Cancelled while it waited in the queue: it never runs, and a loss still waits to be told.
      this.#life.armIdle();
      this.#afterCancel ??= afterCancelNote({ ranMs: 0, interrupted: false });
      return cancelledBeforeStart(config.outputCap, notes);
    }
    const { untold, first, readyAt } = this.#life.beginRun(box);
    if (untold && !req.reset) notes.push(`Note: earlier session state was lost (${untold}); this run started in a fresh interpreter.`);
    else if (this.#afterCancel) notes.push(this.#afterCancel);
    this.#afterCancel = undefined;
    const timeoutSec = req.timeoutSec ?? config.timeoutSec;
    const { id, result } = box.run(
      req.code,
      config.outputCap,
      this.#execExtra(),
      req.onOutput && capStream(req.onOutput, config.outputCap),
    );
    // Time a person spends answering a question does not count against the run (docs/approvals.md).
    const deadline = new Deadline(timeoutSec * 1000, timeoutSec * 1000, this.#clock);
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
    /** What the next call must hear, when this run's result never reaches the client. */
    let tellNext: string | undefined;
    let ending: Awaited<ReturnType<typeof awaitRun>> = { timedOut: false, cancelled: false, killed: false };
    try {
      ending = await awaitRun(box, id, result, {
        timeoutMs: timeoutSec * 1000,
        deadline,
        signal: req.signal,
        clock: this.#clock,
        onInterrupt: (why) =>
          log.info(why === "timeout" ? "run timed out, interrupting" : "run cancelled, interrupting", { session: this.id, run: id }),
      });
      if (ending.killed) {
        const grace = formatSeconds(INTERRUPT_GRACE_MS / 1000);
        sessionReset = `the code did not stop within ${grace} of an interrupt, so the sandbox was killed; all variables, imports and files in /tmp are gone and the next call starts a fresh session`;
        // A cancelled call's result never reaches the client: the next call must say what happened.
        if (ending.cancelled)
          tellNext = `the call before it was cancelled and its code did not stop within ${grace} of an interrupt, so the sandbox was killed`;
      }
    } catch (err) {
      if (!(err instanceof BridgeError) || err.code !== "SANDBOX_EXITED") throw err;
      const exit = await box.exited;
      if (req.signal?.aborted) tellNext = `the sandbox stopped while the call before it was being cancelled: ${exit.reason}`;
      sessionReset = `${err.message.replace(/^the sandbox stopped: /, "the sandbox stopped during this run: ")}; all variables and imports are gone and the next call starts a fresh session`;
      if (exit.stderrTail.trim()) log.debug("sandbox stderr at exit", { tail: exit.stderrTail.slice(-500) });
    } finally {
      // Whatever the run did, its proxied calls end with it.
      this.#gate.endRun();
      this.#life.endRun(tellNext);
    }
    const outcome = assembleOutcome({ ...ending, sessionReset, timeoutSec }, config, notes, Math.round(performance.now() - started));
    const hint = moduleNotFoundHint(outcome.error, this.#deps.installer ? config.packages : undefined, this.#packages.unavailable);
    if (hint) outcome.notes.push(hint);
    // A NameError in a new interpreter the result does not already call new (a reset, a loss noted above).
    const fresh =
      first &&
      !untold &&
      !req.reset &&
      freshNameErrorNote(outcome.error, {
        ageMs: this.#clock.now() - (readyAt ?? this.#clock.now()),
        firstOfSession: this.#runCounter === 1,
      });
    if (fresh) outcome.notes.push(fresh);
    if (ending.cancelled && !ending.killed && !sessionReset)
      this.#afterCancel = afterCancelNote({ ranMs: outcome.durationMs, interrupted: true, traceback: ending.frame?.error?.traceback });
    runLog.debug("run trace", {
      wait_ms: round1(waitedMs),
      exec_ms: round1(performance.now() - started - waitedMs),
      first_in_sandbox: first,
    });
    this.#life.armIdle();
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
      display: displayLimits(config),
    };
  }

  /** Start a sandbox for the session's life (sandbox-life.ts decides when); `trace`: the call that needs it. */
  async #start(trace?: SpanContext): Promise<Sandbox> {
    const span = this.#deps.telemetry?.span("sandbox start", { parent: trace, attributes: { "mcp_code_exec.session": this.id } });
    try {
      const box = await this.#startSandbox();
      span?.set({ "mcp_code_exec.sandbox": box.name });
      span?.end();
      return box;
    } catch (err) {
      span?.end(err instanceof Error ? err.message : String(err));
      throw err;
    }
  }

  async #startSandbox(): Promise<Sandbox> {
    const { log } = this.#deps;
    const t0 = performance.now();
    const { box, adapter, trace, packagesUnavailable } = await startSandbox({
      ...this.#deps,
      onRpc: (frame) => this.#gate.handle(frame),
      closed: () => this.#life.closed,
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
      at_ms: trace.atMs,
      ...trace.facts,
      ...prefixed("ms_", trace.phases),
    });
    this.#packages.unavailable = packagesUnavailable;
    this.#gate.newSandbox();
    return box;
  }

  /**
   * Take over this session's sandbox from another bridge (one that died, or this one before a restart),
   * state and all: true when the engine had one (sessions.ts asks for a handle it does not hold).
   */
  async adopt(): Promise<boolean> {
    const started = await adoptSandbox({
      ...this.#deps,
      onRpc: (frame) => this.#gate.handle(frame),
      closed: () => this.#life.closed,
    });
    if (!started) return false;
    this.#deps.log.info("sandbox adopted", { engine: started.adapter.name, name: started.box.name, session: this.#deps.identity?.handle });
    this.#packages.unavailable = started.packagesUnavailable;
    this.#gate.newSandbox();
    this.#life.adopt(started.box);
    return true;
  }

  /** Requests answered cost the host work and memory whether or not they succeed: a flood ends the sandbox. */
  #stopFlooding(reason: string): void {
    const box = this.#life.current;
    if (!box) return;
    this.#deps.log.warn("stopping a sandbox that floods the host with requests", { name: box.name, reason });
    this.#life.stop(reason);
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
