/**
 * Giving memory back when the bridge is idle. JavaScriptCore collects lazily and keeps what it freed:
 * after start-up or a burst of calls the bridge sat on megabytes it no longer used. A full collection
 * while nothing happens costs a few milliseconds nobody waits for.
 */

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
  #timer: ReturnType<typeof setTimeout> | undefined;
  #collect: () => void;
  #idleMs: number;

  constructor(idleMs: number, collect: () => void = collectGarbage) {
    this.#idleMs = idleMs;
    this.#collect = collect;
  }

  /** Something happened: collect `idleMs` after the last such moment. */
  touch(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#collect();
    }, this.#idleMs);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
