/**
 * The time the bridge's rules are measured in: a run's deadline, the interrupt's grace, the sandbox's
 * idle stop and lifetime cap, the idle garbage collection. Injected (SessionDeps.clock and the like),
 * so a test moves time forward instead of sleeping through it; the bridge itself runs on SYSTEM_CLOCK.
 */

/** Stops a timer that has not fired yet; calling it again (or after it fired) does nothing. */
export type CancelTimer = () => void;

export interface Clock {
  /** Milliseconds on a monotonic scale (only differences mean anything). */
  now(): number;
  /**
   * Call `fn` once, `ms` from now. `weak`: the timer alone does not keep the process alive (idle and
   * lifetime timers: a bridge with nothing else to do may end before them).
   */
  after(ms: number, fn: () => void, opts?: { weak?: boolean }): CancelTimer;
}

export const SYSTEM_CLOCK: Clock = {
  now: () => performance.now(),
  after(ms, fn, opts) {
    const timer = setTimeout(fn, Math.max(0, ms));
    if (opts?.weak) (timer as { unref?: () => void }).unref?.();
    return () => clearTimeout(timer);
  },
};
