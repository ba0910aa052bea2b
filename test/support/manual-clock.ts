/**
 * A clock that moves only when a test says so (src/session/clock.ts): deadlines, the interrupt's grace,
 * the idle stop and the lifetime cap fire when the test advances past them, never by waiting. Not a
 * fake of anything the product meets: the bridge runs on the system clock, tests name it "test clock".
 */
import type { CancelTimer, Clock } from "../../src/clock.ts";

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
}

export class ManualClock implements Clock {
  #now = 0;
  #seq = 0;
  #timers: Timer[] = [];

  now(): number {
    return this.#now;
  }

  after(ms: number, fn: () => void): CancelTimer {
    const timer = { at: this.#now + Math.max(0, ms), seq: this.#seq++, fn };
    this.#timers.push(timer);
    return () => {
      this.#timers = this.#timers.filter((t) => t !== timer);
    };
  }

  /** Timers waiting to fire. */
  get pending(): number {
    return this.#timers.length;
  }

  /**
   * Move time forward by `ms`, firing each timer that falls due, in order, with the clock at its time.
   * Between timers, promise callbacks run (what a fired timer starts gets to go on, as with real time).
   */
  async advance(ms: number): Promise<void> {
    const end = this.#now + ms;
    for (;;) {
      await settle();
      const next = this.#timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!next) break;
      this.#timers = this.#timers.filter((t) => t !== next);
      this.#now = next.at;
      next.fn();
    }
    this.#now = end;
    await settle();
  }
}

/** Let promise callbacks queued so far run (one macrotask turn). */
function settle(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}
