/**
 * A countdown that stops while a person is being asked something. A run's timeout and a proxied call's
 * timeout measure the time the code and the servers spend, not the time a human takes to read a
 * question: holding the deadline pauses it, releasing the last hold resumes it with what was left.
 */
import { SYSTEM_CLOCK, type CancelTimer, type Clock } from "../clock.ts";

export class Deadline {
  /** Settles once the countdown reaches zero (never, if it is cancelled first). */
  readonly expired: Promise<void>;
  #left: number;
  #since = 0;
  #timer: CancelTimer | undefined;
  #holds = 0;
  #fire!: () => void;
  #done = false;
  #heldMs = 0;
  #heldSince = 0;
  /** Active time the countdown may run in all, restarts included. */
  #budget: number;
  #spent = 0;
  #clock: Clock;

  /** `maxTotalMs` bounds the active time across restart() calls (default: `ms`, no restarts). */
  constructor(
    readonly ms: number,
    maxTotalMs = ms,
    clock: Clock = SYSTEM_CLOCK,
  ) {
    this.#clock = clock;
    this.#left = ms;
    this.#budget = Math.max(ms, maxTotalMs);
    this.expired = new Promise((resolve) => {
      this.#fire = resolve;
    });
    this.#arm();
  }

  /** Pause until the returned function is called (holds nest; the last release resumes). */
  hold(): () => void {
    if (this.#holds++ === 0 && !this.#done) {
      this.#pause();
      this.#heldSince = this.#clock.now();
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.#holds === 0 && !this.#done) {
        this.#heldMs += this.#clock.now() - this.#heldSince;
        this.#arm();
      }
    };
  }

  /** The full countdown again (a server reported progress), within the total budget. */
  restart(): void {
    if (this.#done) return;
    const running = this.#timer !== undefined;
    if (running) this.#pause();
    this.#left = Math.min(this.ms, this.#budget - this.#spent);
    if (running) this.#arm();
  }

  /** Stop for good; `expired` never settles. */
  cancel(): void {
    this.#done = true;
    this.#timer?.();
    this.#timer = undefined;
  }

  /** Milliseconds spent held so far. */
  get heldMs(): number {
    return this.#heldMs + (this.#holds > 0 && !this.#done ? this.#clock.now() - this.#heldSince : 0);
  }

  #arm(): void {
    this.#since = this.#clock.now();
    this.#timer = this.#clock.after(this.#left, () => {
      this.#timer = undefined;
      this.#done = true;
      this.#fire();
    });
  }

  #pause(): void {
    if (!this.#timer) return;
    this.#timer();
    this.#timer = undefined;
    const ran = this.#clock.now() - this.#since;
    this.#spent += ran;
    this.#left -= ran;
  }
}
