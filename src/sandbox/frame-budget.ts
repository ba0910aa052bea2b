/**
 * What the bridge spends reading one sandbox's output, bounded. The sandbox is hostile: it may write
 * tiny frames, empty lines or forged frames as fast as the pipe takes them, on stdout or its real
 * stderr. Past any of these budgets the sandbox is stopped (and the session told why); below them the
 * reading loop hands the event loop back every few milliseconds, so pings, other sessions and
 * signals are served while a sandbox writes.
 */

/** The budget, per sandbox: per second of wall time, except malformed frames (per sandbox life). */
export const FRAME_BUDGET = {
  framesPerSecond: 20_000,
  bytesPerSecond: 64 * 1024 * 1024,
  /** Time the bridge spends in the reading loop, per second. */
  cpuMsPerSecond: 500,
  stderrBytesPerSecond: 1024 * 1024,
  /** The runtime never sends one; a few may come from code writing to the protocol fd. */
  malformedFrames: 200,
  /** Longest stretch of reading before the event loop gets a turn. */
  sliceMs: 5,
} as const;

const fmt = (n: number) => n.toLocaleString("en-US");

export class FrameBudget {
  #windowStart = performance.now();
  #frames = 0;
  #bytes = 0;
  #cpuMs = 0;
  #stderr = 0;
  #malformed = 0;
  #sliceStart = performance.now();
  #exceeded: string | undefined;

  /** `onExceeded` is called once, with a reason a model can read. */
  constructor(readonly onExceeded: (reason: string) => void) {}

  get exceeded(): boolean {
    return this.#exceeded !== undefined;
  }

  frame(bytes: number): void {
    this.#roll();
    this.#frames++;
    this.#bytes += bytes;
    if (this.#frames > FRAME_BUDGET.framesPerSecond)
      this.#exceed(`it sent more than ${fmt(FRAME_BUDGET.framesPerSecond)} frames in one second`);
    else if (this.#bytes > FRAME_BUDGET.bytesPerSecond)
      this.#exceed(`it sent more than ${FRAME_BUDGET.bytesPerSecond / 1048576} MiB in one second`);
  }

  malformed(): void {
    if (++this.#malformed > FRAME_BUDGET.malformedFrames)
      this.#exceed(`it wrote more than ${FRAME_BUDGET.malformedFrames} malformed frames to the protocol channel`);
  }

  stderr(bytes: number): void {
    this.#roll();
    this.#stderr += bytes;
    if (this.#stderr > FRAME_BUDGET.stderrBytesPerSecond)
      this.#exceed(`it wrote more than ${FRAME_BUDGET.stderrBytesPerSecond / 1048576} MiB to its diagnostic stream in one second`);
  }

  /** Time spent reading since the last call; true when the event loop is due a turn. */
  spent(ms: number): boolean {
    this.#roll();
    this.#cpuMs += ms;
    if (this.#cpuMs > FRAME_BUDGET.cpuMsPerSecond)
      this.#exceed(`reading its output took more than ${FRAME_BUDGET.cpuMsPerSecond} ms of the bridge's CPU in one second`);
    const now = performance.now();
    if (now - this.#sliceStart < FRAME_BUDGET.sliceMs) return false;
    this.#sliceStart = now;
    return true;
  }

  /** The slice starts again after the event loop had its turn. */
  resumed(): void {
    this.#sliceStart = performance.now();
  }

  #roll(): void {
    const now = performance.now();
    if (now - this.#windowStart < 1000) return;
    this.#windowStart = now;
    this.#frames = 0;
    this.#bytes = 0;
    this.#cpuMs = 0;
    this.#stderr = 0;
  }

  #exceed(why: string): void {
    if (this.#exceeded) return;
    this.#exceeded = why;
    this.onExceeded(
      `${why} (the bridge's budget for a sandbox: ${fmt(FRAME_BUDGET.framesPerSecond)} frames, ${FRAME_BUDGET.bytesPerSecond / 1048576} MiB and ${FRAME_BUDGET.cpuMsPerSecond} ms of its CPU per second, ${FRAME_BUDGET.malformedFrames} malformed frames in all), so it was stopped`,
    );
  }
}

/** A turn for timers, I/O and signal handlers (a ReadableStream with data always ready never gives one). */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
