/**
 * The life of a session's sandbox, owned in one place: none → starting → ready → used → gone, and
 * round again. Only this file changes which sandbox is current and whether the next call must hear
 * that state was lost: the sandbox's exit, the idle stop, the lifetime cap, a reset, a flood and
 * shutdown all pass through it. The sandbox tells it of its exit before any run waiting on it hears
 * (Sandbox.onExit), so the state is settled by the time a run asks what happened. Time comes from an
 * injected clock (clock.ts).
 */
import { BridgeError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { Sandbox, SandboxExit } from "../sandbox/sandbox.ts";
import type { SpanContext } from "../telemetry/telemetry.ts";
import type { CancelTimer, Clock } from "../clock.ts";
import { formatSeconds } from "./outcome.ts";

/** Where the session's sandbox is in its life. */
export type LifeState =
  /** No sandbox, and nothing the next call must hear (never started, reset). */
  | { kind: "none" }
  /** Being started; `untold`: why the previous sandbox's state was lost, for the next run to say. */
  | { kind: "starting"; started: Promise<Sandbox>; untold?: string }
  /** Running with no run yet: stopping it loses nothing the model knows about. */
  | { kind: "ready"; box: Sandbox; readyAt: number; untold?: string }
  /** A run has happened (`running`: one is under way): stopping it loses state the model knows about. */
  | { kind: "used"; box: Sandbox; readyAt: number; running: boolean }
  /** Ended; `tell`: the next call must say that state was lost, and `reason` why. */
  | { kind: "gone"; reason: string; tell: boolean };

type Live = Extract<LifeState, { box: Sandbox }>;

export interface SandboxLifeDeps {
  /** Start a sandbox (engine, image, channel, its logs); its life is watched from then on. `trace`: the call that needs it. */
  start: (trace?: SpanContext) => Promise<Sandbox>;
  clock: Clock;
  /** MCP_BRIDGE_CONTAINER_LIFETIME: the sandbox is stopped this long after it is ready. */
  lifetimeSec: number;
  /** MCP_BRIDGE_RUNTIME_IDLE_TIMEOUT: a sandbox no run used for this long is stopped. */
  idleTimeoutSec: number;
  log: Logger;
}

export class SandboxLife {
  #deps: SandboxLifeDeps;
  #state: LifeState = { kind: "none" };
  #closed = false;
  #cancelIdle: CancelTimer | undefined;
  #lost: string | undefined;

  constructor(deps: SandboxLifeDeps) {
    this.#deps = deps;
  }

  /** Where the sandbox is now (a copy: only this class changes it). */
  get state(): Readonly<LifeState> {
    return { ...this.#state };
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Why a sandbox that had state the model knows about (a run happened) ended without the bridge
   * choosing to drop that state (it died, its pod was deleted, it was stopped for flooding or at its
   * cap), once one did. A session named by handle then ends (sessions.ts) instead of going on in a
   * fresh interpreter under the old name.
   */
  get lost(): string | undefined {
    return this.#lost;
  }

  /** The running sandbox, if there is one. */
  get current(): Sandbox | undefined {
    return live(this.#state)?.box;
  }

  /**
   * Start a sandbox in the background when there is none; one that no run uses is stopped as idle.
   * Settles (never rejects) when that start has ended, either way.
   */
  warm(onError: (err: unknown) => void): Promise<void> {
    const kind = this.#state.kind;
    if (this.#closed || (kind !== "none" && kind !== "gone")) return Promise.resolve();
    return this.ensure()
      .then(() => this.armIdle())
      .catch((err) => {
        if (!this.#closed) onError(err);
      });
  }

  /** The sandbox for the next run: the current one, or a new one (also when the current is about to reach its cap). */
  async ensure(trace?: SpanContext): Promise<Sandbox> {
    this.#clearIdle();
    if (this.#closed) throw new BridgeError("SANDBOX_START", "the session is closed");
    const now = live(this.#state);
    if (now?.box.ending) {
      // Being stopped (it flooded the bridge, it reached the cap) or already gone (its init ended it at
      // the cap) with its exit not settled yet: a run sent now would be lost with it. Its end is settled
      // first (what the next call must hear), then the run starts fresh.
      await now.box.exited;
    } else if (now && this.#nearLifetimeCap(now.readyAt)) {
      // Its init ends it at the cap, counted from before it was ready: a run sent now would find it
      // gone (or be cut short) before the bridge hears that it died. Retired first, the run starts fresh.
      await now.box.kill(this.#capReason(), { reportLoss: true });
    }
    if (this.#closed) throw new BridgeError("SANDBOX_START", "the session is closed");
    const s = this.#state;
    if (s.kind === "ready" || s.kind === "used") return s.box;
    if (s.kind === "starting") return s.started;
    const started = this.#start(trace);
    this.#state = { kind: "starting", started, untold: s.kind === "gone" && s.tell ? s.reason : undefined };
    return started;
  }

  /**
   * A run is sent to `box` (what ensure() gave). Returns why earlier state was lost, if the client has
   * not heard yet, whether this is the sandbox's first run, and when the sandbox was ready (clock time).
   */
  beginRun(box: Sandbox): { untold?: string; first: boolean; readyAt?: number } {
    const s = this.#state;
    if ((s.kind === "ready" || s.kind === "used") && s.box === box) {
      this.#state = { kind: "used", box, readyAt: s.readyAt, running: true };
      return { untold: s.kind === "ready" ? s.untold : undefined, first: s.kind === "ready", readyAt: s.readyAt };
    }
    // It ended since ensure(): the run finds it stopped and says so; a loss before it is told now.
    if (s.kind === "gone" && s.tell) {
      this.#state = { ...s, tell: false };
      return { untold: s.reason, first: false };
    }
    return { first: false };
  }

  /**
   * The run ended. A sandbox that ended during it was reported by the run itself, unless the run's
   * result never reaches the client (it was cancelled): then `tellNext` is what the next call says.
   */
  endRun(tellNext?: string): void {
    const s = this.#state;
    if (s.kind === "used") this.#state = { ...s, running: false };
    else if (tellNext === undefined) return;
    else if (s.kind === "gone") this.#state = { kind: "gone", reason: tellNext, tell: true };
    else if (s.kind === "starting" || s.kind === "ready") this.#state = { ...s, untold: tellNext };
  }

  /** Stop the sandbox if no run comes within the idle timeout. */
  armIdle(): void {
    this.#clearIdle();
    const s = live(this.#state);
    if (!s) return;
    const box = s.box;
    this.#cancelIdle = this.#deps.clock.after(this.#deps.idleTimeoutSec * 1000, () => this.#idle(box), { weak: true });
  }

  /** Stop the sandbox for a reason no run reports (it floods the host): the next call hears it. */
  stop(reason: string): void {
    void live(this.#state)?.box.kill(reason, { reportLoss: true });
  }

  /** Forget the sandbox and its state on purpose (the run that asked says so). */
  async reset(reason: string): Promise<void> {
    this.#clearIdle();
    let s = this.#state;
    if (s.kind === "starting") {
      await s.started.catch(() => undefined);
      s = this.#state;
    }
    this.#state = { kind: "none" };
    const box = live(s)?.box;
    if (box?.alive) await box.kill(reason);
  }

  /**
   * Stop for good. A sandbox still starting is not waited for: its start removes it as soon as it exists.
   * `leave`: the bridge is shutting down, and a sandbox its engine keeps past the bridge (kubernetes) is
   * left running for another bridge to adopt within its lease (Sandbox.leave) instead of removed.
   */
  async close(opts: { leave?: boolean } = {}): Promise<void> {
    this.#closed = true;
    this.#clearIdle();
    const s = this.#state;
    const box = s.kind === "starting" ? await s.started.catch(() => undefined) : live(s)?.box;
    this.#state = { kind: "gone", reason: "the session is closed", tell: false };
    if (box && opts.leave) await box.leave("bridge shutting down");
    else if (box) await box.kill("bridge shutting down");
  }

  async #start(trace?: SpanContext): Promise<Sandbox> {
    let box: Sandbox;
    try {
      box = await this.#deps.start(trace);
    } catch (err) {
      // Nothing started: a loss not told yet still waits for the next call.
      const s = this.#state;
      if (s.kind === "starting") this.#state = s.untold ? { kind: "gone", reason: s.untold, tell: true } : { kind: "none" };
      throw err;
    }
    if (this.#closed) {
      await box.kill("bridge shutting down");
      throw new BridgeError("SANDBOX_START", "the session closed while the sandbox was starting");
    }
    const s = this.#state;
    this.#state = { kind: "ready", box, readyAt: this.#deps.clock.now(), untold: s.kind === "starting" ? s.untold : undefined };
    this.#watch(box);
    return box;
  }

  /**
   * A sandbox another bridge started for this session, with its state (sandbox-start.ts adoptSandbox):
   * current from now on, as used (losing it loses state the model knows about).
   */
  adopt(box: Sandbox): void {
    if (this.#state.kind !== "none") throw new Error(`adopt: the session already has a sandbox (${this.#state.kind})`);
    this.#state = { kind: "used", box, readyAt: this.#deps.clock.now(), running: false };
    this.#watch(box);
  }

  /** Watch a sandbox that became current: the bridge's own lifetime cap, and its exit. */
  #watch(box: Sandbox): void {
    // The sandbox's init enforces the lifetime cap inside; the bridge does too, from outside the
    // sandbox's reach (code there can stop its init under gVisor, which lets signals reach PID 1).
    const cancelCap = this.#deps.clock.after(this.#deps.lifetimeSec * 1000, () => void box.kill(this.#capReason(), { reportLoss: true }), {
      weak: true,
    });
    box.onExit((exit) => {
      cancelCap();
      this.#exited(box, exit);
    });
  }

  #exited(box: Sandbox, exit: SandboxExit): void {
    const s = live(this.#state);
    // One retired already (idle, reset, shutdown): whoever retired it decided what the next call hears.
    if (s?.box !== box) return;
    this.#clearIdle();
    if (s.kind === "used" && !this.#closed && (!exit.killedByUs || exit.reportLoss)) this.#lost ??= exit.reason;
    if (s.kind === "ready") {
      this.#state = s.untold ? { kind: "gone", reason: s.untold, tell: true } : { kind: "gone", reason: exit.reason, tell: false };
      return;
    }
    // A run under way reports the end itself. Otherwise the next call hears of it, unless we stopped the
    // sandbox on purpose (the run that did so said why) — one stopped for flooding the bridge lost its
    // state through its own doing, and that is told.
    const tell = !s.running && !this.#closed && (!exit.killedByUs || exit.reportLoss);
    this.#state = { kind: "gone", reason: exit.reason, tell };
  }

  #idle(box: Sandbox): void {
    const s = live(this.#state);
    if (s?.box !== box || (s.kind === "used" && s.running)) return;
    const idleSec = this.#deps.idleTimeoutSec;
    this.#deps.log.info("stopping idle sandbox", { name: box.name, idleSec });
    const reason = `the sandbox was stopped after ${formatSeconds(idleSec)} idle (MCP_BRIDGE_RUNTIME_IDLE_TIMEOUT)`;
    if (s.kind === "used") this.#state = { kind: "gone", reason, tell: true };
    else this.#state = s.untold ? { kind: "gone", reason: s.untold, tell: true } : { kind: "gone", reason, tell: false };
    void box.kill("idle");
  }

  /** Less than a second (a tenth of the cap, if shorter) before the sandbox's lifetime cap. */
  #nearLifetimeCap(readyAt: number): boolean {
    const capMs = this.#deps.lifetimeSec * 1000;
    return this.#deps.clock.now() - readyAt >= capMs - Math.min(1000, capMs / 10);
  }

  #capReason(): string {
    return `it reached its lifetime cap of ${formatSeconds(this.#deps.lifetimeSec)} (MCP_BRIDGE_CONTAINER_LIFETIME)`;
  }

  #clearIdle(): void {
    this.#cancelIdle?.();
    this.#cancelIdle = undefined;
  }
}

function live(s: LifeState): Live | undefined {
  return s.kind === "ready" || s.kind === "used" ? s : undefined;
}
