/**
 * Giving memory back when the bridge is idle. JavaScriptCore collects lazily and keeps what it freed:
 * after start-up or a burst of calls the bridge sat on megabytes it no longer used. A full collection
 * while nothing happens costs a few milliseconds nobody waits for.
 */
import { SYSTEM_CLOCK, type CancelTimer, type Clock } from "../clock.ts";

/** A full garbage collection and heap shrink, where the runtime offers one (Bun); otherwise nothing. */
export function collectGarbage(): void {
  if (typeof Bun === "undefined") return;
  Bun.gc(true);
  (Bun as unknown as { shrink?: () => void }).shrink?.();
}

/**
 * Collects once the bridge has been idle for `idleMs` after some activity (`touch()`), so a busy bridge
 * is never interrupted and an idle one returns to its idle footprint.
 */
export class IdleCollector {
  #cancel: CancelTimer | undefined;
  #collect: () => void;
  #idleMs: number;
  #clock: Clock;

  constructor(idleMs: number, collect: () => void = collectGarbage, clock: Clock = SYSTEM_CLOCK) {
    this.#idleMs = idleMs;
    this.#collect = collect;
    this.#clock = clock;
  }

  /** Something happened: collect `idleMs` after the last such moment. */
  touch(): void {
    this.#cancel?.();
    this.#cancel = this.#clock.after(
      this.#idleMs,
      () => {
        this.#cancel = undefined;
        this.#collect();
      },
      { weak: true },
    );
  }

  stop(): void {
    this.#cancel?.();
    this.#cancel = undefined;
  }
}
