/**
 * The ladder a run climbs when it does not finish in time or is cancelled: interrupt (KeyboardInterrupt
 * in the code), a grace period, then the sandbox is killed. Knows nothing of what the run was for.
 */
import type { ResultFrame } from "../sandbox/frames.ts";
import { INTERRUPT } from "../sandbox/protocol.ts";
import type { Sandbox } from "../sandbox/sandbox.ts";
import { SYSTEM_CLOCK, type Clock } from "../clock.ts";
import { Deadline } from "./deadline.ts";

/** How long an interrupted run has to end before the sandbox is killed (the contract's, protocol.ts). */
export const INTERRUPT_GRACE_MS: number = INTERRUPT.grace_ms;

export interface LadderResult {
  frame?: ResultFrame;
  timedOut: boolean;
  cancelled: boolean;
  /** The code ignored the interrupt and the sandbox was killed: its state is gone. */
  killed: boolean;
}

/**
 * Wait for run `id`'s result; rejects as `result` does when the sandbox dies. The run's time is
 * `opts.deadline` (held while a person is asked something) or `opts.timeoutMs`.
 */
export async function awaitRun(
  box: Sandbox,
  id: number,
  result: Promise<ResultFrame>,
  opts: {
    timeoutMs: number;
    deadline?: Deadline;
    signal?: AbortSignal;
    onInterrupt?: (why: "timeout" | "cancelled") => void;
    /** What the grace (and a deadline made here) is measured on. */
    clock?: Clock;
  },
): Promise<LadderResult> {
  const clock = opts.clock ?? SYSTEM_CLOCK;
  const deadline = opts.deadline ?? new Deadline(opts.timeoutMs, opts.timeoutMs, clock);
  const first = await raceTimeout(result, deadline, opts.signal);
  if (first.kind === "done") return { frame: first.value, timedOut: false, cancelled: false, killed: false };
  const timedOut = first.kind === "timeout";
  opts.onInterrupt?.(timedOut ? "timeout" : "cancelled");
  box.interrupt(id);
  const second = await raceTimeout(result, new Deadline(INTERRUPT_GRACE_MS, INTERRUPT_GRACE_MS, clock));
  if (second.kind === "done") return { frame: second.value, timedOut, cancelled: !timedOut, killed: false };
  await box.kill(timedOut ? "timeout" : "cancelled");
  return { timedOut, cancelled: !timedOut, killed: true };
}

type Race<T> = { kind: "done"; value: T } | { kind: "timeout" } | { kind: "aborted" };

function raceTimeout<T>(p: Promise<T>, deadline: Deadline, signal?: AbortSignal): Promise<Race<T>> {
  return new Promise((resolve, reject) => {
    void deadline.expired.then(() => resolve({ kind: "timeout" }));
    const onAbort = () => resolve({ kind: "aborted" });
    if (signal?.aborted) onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });
    p.then(
      (value) => resolve({ kind: "done", value }),
      (err) => reject(err),
    ).finally(() => {
      deadline.cancel();
      signal?.removeEventListener("abort", onAbort);
    });
  });
}
