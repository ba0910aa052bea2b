/**
 * Where the milliseconds of a sandbox start go. The session marks each step as it ends (engine,
 * image, profile, argv, spawn); the sandbox adds what happened inside the container from the wall-clock
 * marks of its ready frame; the first run adds its round trip. Logged at DEBUG as one line
 * (`sandbox start trace`), which bench/latency.ts reads back.
 */
import type { ReadyFrame } from "./frames.ts";

/** Wall-clock milliseconds with sub-millisecond precision (comparable with the sandbox's time.time()). */
export const wallMs = (): number => performance.timeOrigin + performance.now();

export class StartTrace {
  /** When the start began, in milliseconds since this process started (comparable with other such marks in the log). */
  readonly atMs: number = round(performance.now());
  readonly #t0 = wallMs();
  #last = this.#t0;
  /** Milliseconds per step, in the order they happened. */
  readonly phases: Record<string, number> = {};
  /** Facts about the start (cache hits, engine) logged beside the phases. */
  readonly facts: Record<string, string | number | boolean> = {};

  /** The step `phase` ended now (or at `atMs`, wall clock). */
  mark(phase: string, atMs = wallMs()): void {
    this.phases[phase] = round(Math.max(0, atMs - this.#last));
    this.#last = Math.max(this.#last, atMs);
  }

  /**
   * Steps inside the container, from the ready frame's marks: `container` (engine work and interpreter
   * start, from spawn to the bootstrap's first line), then each mark the entrypoint reached. Marks from
   * a clock that disagrees with ours (gVisor keeps its own) are dropped rather than shown wrong.
   */
  markBoot(spawnedAtMs: number, boot: ReadyFrame["boot"], receivedAtMs: number): void {
    const marks = Object.entries(boot ?? {}).filter((e): e is [string, number] => typeof e[1] === "number");
    const sane = marks.length > 0 && marks.every(([, s]) => s * 1000 >= spawnedAtMs - 5 && s * 1000 <= receivedAtMs + 5);
    if (sane) {
      const [first, ...rest] = marks;
      this.mark("container", first![1] * 1000);
      for (const [name, s] of rest) this.mark(`boot_${name}`, s * 1000);
    }
    this.mark("ready_frame", receivedAtMs);
  }

  get totalMs(): number {
    return round(this.#last - this.#t0);
  }
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
