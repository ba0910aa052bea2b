/**
 * What a result says about the interpreter's state when the model could not know it (src/session/
 * state-notes.ts), on the test-only local-python engine: after a run the client cancelled (its result
 * never reached the model), and on a NameError in a new interpreter.
 */
import { expect, test } from "bun:test";
import { localSessionsClosedAfterEach, type LocalSession } from "../support/local-session.ts";

const start = localSessionsClosedAfterEach();

/** Cancel a run once its code has printed `started` (the code is running, past its first lines). */
async function cancelWhenStarted(session: LocalSession["session"], code: string) {
  const abort = new AbortController();
  let started!: () => void;
  const running = new Promise<void>((resolve) => {
    started = resolve;
  });
  const pending = session.run({
    code,
    signal: abort.signal,
    onOutput: (_stream, text) => {
      if (text.includes("started")) started();
    },
  });
  await running;
  abort.abort();
  return pending;
}

test("after a cancelled run, the next says where its code was interrupted and that the variables were kept; once", async () => {
  const { session } = start();
  // The print and the sleep share a line: the output reaches the host while print may still be returning,
  // so a cancel sent on seeing it can land in either (it landed in the print once, at load 17).
  const cancelled = await cancelWhenStarted(session, "import time\nx = 42\nprint('started', flush=True); time.sleep(30)\nx = 43");
  expect(cancelled.cancelled).toBe(true);
  const next = await session.run({ code: "x" });
  expect(next.value).toBe("42");
  expect(next.notes).toHaveLength(1);
  expect(next.notes[0]).toMatch(
    /^Note: the client cancelled the previous call after [\d.]+s; its code was interrupted at line 3 and the session kept its variables/,
  );
  expect((await session.run({ code: "x" })).notes).toEqual([]);
});

test("a run cancelled while it waited never ran, and the next result says so", async () => {
  const { session } = start();
  const first = session.run({ code: "import time\ntime.sleep(0.3)\nx = 1" });
  const abort = new AbortController();
  const queued = session.run({ code: "x = 2", signal: abort.signal });
  abort.abort();
  await first;
  expect((await queued).cancelled).toBe(true);
  const next = await session.run({ code: "x" });
  expect(next.value).toBe("1");
  expect(next.notes.join(" ")).toContain("before its code started; none of it ran, and the session's variables are as they were");
});

test("reset after a cancelled run says only that the interpreter is fresh", async () => {
  const { session } = start();
  await cancelWhenStarted(session, "print('started', flush=True)\nimport time\ntime.sleep(30)");
  expect((await session.run({ code: "1", reset: true })).notes).toEqual(["Session reset: this run started in a fresh interpreter."]);
});

test("a NameError in the first call of a new interpreter says nothing from before is there; later NameErrors are plain", async () => {
  const { session } = start();
  const first = await session.run({ code: "x + 1" });
  expect(first.error?.type).toBe("NameError");
  expect(first.notes.join(" ")).toMatch(/^Note: this call was the first in a new interpreter \(started \d+s ago\)/);
  const later = await session.run({ code: "y + 1" });
  expect(later.error?.type).toBe("NameError");
  expect(later.notes).toEqual([]);
  // Other errors in a first call carry no such note.
  const other = start().session;
  expect((await other.run({ code: "1 / 0" })).notes).toEqual([]);
});

test("a NameError after the sandbox was killed points at the earlier result that said so", async () => {
  const { session } = start();
  await session.run({ code: "x = 1" });
  const killed = await session.run({
    code: "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: time.sleep(0.01)",
    timeoutSec: 0.5,
  });
  expect(killed.sessionReset).toContain("the sandbox was killed");
  const next = await session.run({ code: "x" });
  expect(next.error?.type).toBe("NameError");
  expect(next.notes).toHaveLength(1);
  expect(next.notes[0]).toContain("the one before it ended, as an earlier result said");
});
