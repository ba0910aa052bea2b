/**
 * The session core on the test-only local-python engine: the real entrypoint, Sandbox, Session and the
 * request handler, in about a second. What a real engine adds (isolation, limits) is tested in e2e/.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { INTERRUPT_GRACE_MS } from "../../src/session/ladder.ts";
import { localSessionsClosedAfterEach } from "../support/local-session.ts";
import { ManualClock } from "../support/manual-clock.ts";

const session = localSessionsClosedAfterEach();
const start = (env: Record<string, string> = {}, clock?: ManualClock) => session(env, { clock });

/** A line for code to print where it has started (it is streamed at once). */
const SAY_STARTED = "print('started', flush=True)";

/** Streamed output, and a promise that settles once the code has said SAY_STARTED. */
function startedSignal(): { onOutput: (stream: string, text: string) => void; started: Promise<void> } {
  const { promise, resolve } = Promise.withResolvers<void>();
  let seen = "";
  return {
    onOutput: (_stream, text) => {
      seen += text;
      if (seen.includes("started\n")) resolve();
    },
    started: promise,
  };
}

describe("session (local python: no engine, no isolation)", () => {
  test("state persists between runs; the last expression's value comes back", async () => {
    const { session } = start();
    expect((await session.run({ code: "x = 20" })).error).toBeUndefined();
    const r = await session.run({ code: "print('hi')\nx * 2 + 2" });
    expect(r.stdout).toBe("hi\n");
    expect(r.value).toBe("42");
  });

  test("a timeout interrupts the code and keeps the session (test clock)", async () => {
    const clock = new ManualClock();
    const { session } = start({}, clock);
    await session.run({ code: "kept = 'yes'" });
    const run = startedSignal();
    const pending = session.run({
      code: `import time\n${SAY_STARTED}\nwhile True: time.sleep(0.01)`,
      timeoutSec: 30,
      onOutput: run.onOutput,
    });
    await run.started;
    await clock.advance(30_000);
    const r = await pending;
    expect(r.timedOut).toBe(true);
    expect(r.error?.message).toContain("the session and its variables were kept");
    expect((await session.run({ code: "kept" })).value).toBe("'yes'");
  });

  // While an async run awaits, its event loop reads the host's frames itself (entrypoint/interpreter.py
  // _loop_reads); the reader thread reads them when the loop is blocked. Both ways an interrupt lands.
  // The timeout comes once the code says it is where the test means (test clock).
  test.each([
    ["the event loop waits (it reads the interrupt itself)", `import asyncio\n${SAY_STARTED}\nawait asyncio.sleep(60)`],
    [
      "sync code blocks the event loop (the reader thread reads it)",
      `import asyncio, time\nasync def stuck():\n    ${SAY_STARTED}\n    time.sleep(60)\nawait stuck()`,
    ],
    [
      "replies keep coming while it waits",
      `import asyncio\nfrom mcp import runtime\nasync def chatty():\n    ${SAY_STARTED}\n    while True:\n        await runtime.list_servers()\nawait chatty()`,
    ],
  ])("a timeout interrupts an async run when %s, and the session is kept", async (_what, code) => {
    const clock = new ManualClock();
    const { session } = start({}, clock);
    await session.run({ code: "kept = 'yes'" });
    const run = startedSignal();
    const pending = session.run({ code, timeoutSec: 30, onOutput: run.onOutput });
    await run.started;
    await clock.advance(30_000);
    const r = await pending;
    expect(r.timedOut).toBe(true);
    expect(r.error?.message).toContain("the session and its variables were kept");
    expect((await session.run({ code: "kept" })).value).toBe("'yes'");
    // The loop is usable again: awaited replies still arrive.
    const again = await session.run({
      code: "import asyncio\nfrom mcp import runtime\nlen(await asyncio.gather(*[runtime.list_servers() for _ in range(200)]))",
    });
    expect(again.value).toBe("200");
  });

  // A package whose import is interrupted part way leaves the submodules it loaded; imported again, it
  // would find them unbound (asyncio: "name 'base_events' is not defined") for the rest of the session.
  test("an interrupt in the middle of a package's import leaves the package importable", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcx-pkg-"));
    mkdirSync(join(dir, "halfpkg"));
    writeFileSync(join(dir, "halfpkg", "__init__.py"), "from .first import *\nfrom .second import *\nNAMES = first.__name__\n");
    writeFileSync(join(dir, "halfpkg", "first.py"), "ONE = 1\n");
    const flag = JSON.stringify(join(dir, "interrupted"));
    writeFileSync(
      join(dir, "halfpkg", "second.py"),
      `import os\nif not os.path.exists(${flag}):\n    open(${flag}, "w").close()\n    raise KeyboardInterrupt\n`,
    );
    const { session } = start();
    const first = await session.run({ code: `import sys\nsys.path.insert(0, ${JSON.stringify(dir)})\nimport halfpkg` });
    expect(first.error?.type).toBe("KeyboardInterrupt");
    const again = await session.run({ code: "import halfpkg\nhalfpkg.NAMES" });
    expect(again.error).toBeUndefined();
    expect(again.value).toBe("'halfpkg.first'");
  });

  // While the loop reads, the reader thread only looks now and then; a _sync helper called from async
  // code blocks that loop until its reply comes, so it reads the reply itself on the main thread.
  test("a _sync helper inside async code, between awaited requests, gets every reply; the next run is not held up", async () => {
    const { session } = start();
    const r = await session.run({
      code: [
        "import asyncio, time",
        "from mcp import runtime",
        "async def mixed():",
        "    t = time.monotonic()",
        "    got = []",
        "    for _ in range(400):",
        "        got.append(await runtime.list_servers())",
        "        got.append(runtime.list_servers_sync())",
        "    return got, time.monotonic() - t",
        "got, took = await mixed()",
        "len(got), got.count([])",
      ].join("\n"),
      timeoutSec: 30,
    });
    expect(r.error).toBeUndefined();
    expect(r.value).toBe("(800, 800)");
    // Were the blocked loop's replies read only at the thread's looks (every 10 ms), 400 of them would take 2-4 s.
    expect((await session.run({ code: "took < 1.5" })).value).toBe("True");
    expect((await session.run({ code: "print('next')" })).stdout).toBe("next\n");
  });

  test("code that ignores the interrupt is killed; the result and only that result says the state is gone (test clock)", async () => {
    const clock = new ManualClock();
    const { session } = start({}, clock);
    await session.run({ code: "doomed = 1" });
    const run = startedSignal();
    const pending = session.run({
      code: `import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n${SAY_STARTED}\nwhile True: time.sleep(0.01)`,
      timeoutSec: 30,
      onOutput: run.onOutput,
    });
    await run.started;
    await clock.advance(30_000); // the run's timeout: interrupted, which it ignores
    await clock.advance(INTERRUPT_GRACE_MS); // the grace: killed
    const r = await pending;
    expect(r.timedOut).toBe(true);
    expect(r.sessionReset).toContain("the sandbox was killed");
    const next = await session.run({ code: "'doomed' in globals()" });
    expect(next.value).toBe("False");
    expect(next.notes.join(" ")).not.toContain("lost");
  });

  // A SIGINT that lands after the code last looked for signals but just before it blocks (here in
  // time.sleep, right where it lets go of the GIL and the interrupting thread gets it) runs only the C
  // handler: Python's would wait for the sleep to end, and the sandbox was killed after the 2 s grace. A
  // cancel sent as the code starts hits that window about every other time at one delay on this machine.
  test("a cancel that lands just as the code blocks still stops it: the session is never killed for it", async () => {
    const { session } = start();
    await session.run({ code: "kept = 'yes'" });
    const lost: number[] = [];
    for (let i = 0; i < 120; i++) {
      const abort = new AbortController();
      const pending = session.run({ code: "import time\ntime.sleep(30)", signal: abort.signal });
      await new Promise((r) => setImmediate(r));
      const delayMs = (i % 12) * 0.025;
      for (const t0 = performance.now(); performance.now() - t0 < delayMs; );
      abort.abort();
      const r = await pending;
      expect(r.cancelled).toBe(true);
      if (r.sessionReset) {
        lost.push(delayMs);
        await session.run({ code: "kept = 'yes'" });
      }
    }
    expect(lost).toEqual([]);
    expect((await session.run({ code: "kept" })).value).toBe("'yes'");
  }, 120_000);

  test("code that catches the interrupt gets one KeyboardInterrupt, and its cleanup runs to the end", async () => {
    const { session } = start();
    const abort = new AbortController();
    const run = startedSignal();
    const code = `import time\ntry:\n    ${SAY_STARTED}\n    time.sleep(30)\nexcept KeyboardInterrupt:\n    time.sleep(0.5)\n    print('cleaned up')`;
    const pending = session.run({ code, onOutput: run.onOutput, signal: abort.signal });
    await run.started;
    abort.abort();
    const r = await pending;
    expect(r.stdout).toBe("started\ncleaned up\n");
    expect(r.sessionReset).toBeUndefined();
  }, 20_000);

  test("a cancel that has to kill the sandbox is reported on the next call (the cancelled call's result never reaches the client; test clock)", async () => {
    const clock = new ManualClock();
    const { session } = start({}, clock);
    await session.run({ code: "doomed = 1" });
    const abort = new AbortController();
    // The interrupt is ignored from before the code says it started.
    const run = startedSignal();
    const pending = session.run({
      code: `import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n${SAY_STARTED}\nwhile True: time.sleep(0.01)`,
      onOutput: run.onOutput,
      signal: abort.signal,
    });
    await run.started;
    abort.abort();
    await clock.advance(INTERRUPT_GRACE_MS); // the interrupt's grace: killed
    expect((await pending).cancelled).toBe(true);
    const next = await session.run({ code: "'doomed' in globals()" });
    expect(next.value).toBe("False");
    expect(next.notes.join(" ")).toContain("earlier session state was lost (the call before it was cancelled and its code did not stop");
  }, 20_000);

  test("os._exit ends the sandbox: this run says so, the next starts fresh without repeating it", async () => {
    const { session } = start();
    const r = await session.run({ code: "import os\nos._exit(7)" });
    expect(r.error?.type).toBe("SandboxExited");
    expect(r.sessionReset).toContain("exited with code 7");
    const next = await session.run({ code: "1 + 1" });
    expect(next.value).toBe("2");
    expect(next.notes).toEqual([]);
  });

  // The init's cap is real time, counted from the sandbox's start: 5 s leaves a loaded machine room to
  // start it and run the first call before it. Its end is a process of the local engine's that this
  // process cannot wait on, so it is polled for.
  test("the lifetime cap ends the sandbox from its init; the next call says state was lost and why", async () => {
    const local = start({ MCP_BRIDGE_CONTAINER_LIFETIME: "5" });
    const { session } = local;
    expect((await session.run({ code: "capped = 1" })).error).toBeUndefined();
    for (let i = 0; i < 300 && (await local.running()) > 0; i++) await Bun.sleep(100);
    expect(await local.running()).toBe(0);
    const next = await session.run({ code: "'capped' in globals()" });
    expect(next.value).toBe("False");
    expect(next.notes.join(" ")).toContain("lifetime cap");
  }, 60_000);

  test("a call in the sandbox's last second before the cap starts fresh, never in the dying sandbox (test clock)", async () => {
    // The init ends the sandbox at the cap counted from its own start, before it was ready: a run sent
    // in the last second of the cap would race its end (and was reported as "stopped during this run").
    // The init's cap is real time (60 s, never reached here); the bridge's is on the test clock.
    const clock = new ManualClock();
    const { session } = start({ MCP_BRIDGE_CONTAINER_LIFETIME: "60" }, clock);
    await session.run({ code: "capped = 1" });
    await clock.advance(58_900);
    const before = await session.run({ code: "'capped' in globals()" });
    expect([before.value, before.notes]).toEqual(["True", []]);
    await clock.advance(200);
    const next = await session.run({ code: "'capped' in globals()" });
    expect(next.error).toBeUndefined();
    expect(next.value).toBe("False");
    expect(next.notes.join(" ")).toContain("lifetime cap of 60s");
  });

  test("the bridge ends the sandbox at the lifetime cap by itself, whatever its init does; the next call says so (test clock)", async () => {
    const clock = new ManualClock();
    const local = start({ MCP_BRIDGE_CONTAINER_LIFETIME: "60" }, clock);
    await local.session.run({ code: "capped = 1" });
    const removed = local.nextRemoval();
    await clock.advance(60_000);
    await removed;
    const next = await local.session.run({ code: "'capped' in globals()" });
    expect(next.value).toBe("False");
    expect(next.notes.join(" ")).toContain("lifetime cap of 60s (MCP_BRIDGE_CONTAINER_LIFETIME)");
  });

  test("an idle sandbox is stopped; the next call says state was lost and why, once (test clock)", async () => {
    const clock = new ManualClock();
    const local = start({ MCP_BRIDGE_RUNTIME_IDLE_TIMEOUT: "30" }, clock);
    await local.session.run({ code: "idle_var = 1" });
    await clock.advance(29_000);
    // A run restarts the idle count.
    expect((await local.session.run({ code: "'idle_var' in globals()" })).value).toBe("True");
    await clock.advance(29_000);
    expect((await local.session.run({ code: "'idle_var' in globals()" })).value).toBe("True");
    const removed = local.nextRemoval();
    await clock.advance(30_000);
    await removed;
    const next = await local.session.run({ code: "'idle_var' in globals()" });
    expect(next.value).toBe("False");
    expect(next.notes.join(" ")).toContain("stopped after 30s idle (MCP_BRIDGE_RUNTIME_IDLE_TIMEOUT)");
    expect((await local.session.run({ code: "1" })).notes).toEqual([]);
  });

  test("reset starts a fresh interpreter and says so", async () => {
    const { session } = start();
    await session.run({ code: "gone = 1" });
    const r = await session.run({ code: "'gone' in globals()", reset: true });
    expect(r.value).toBe("False");
    expect(r.notes).toEqual(["Session reset: this run started in a fresh interpreter."]);
  });

  test("runs queue: the second waits for the first; a cancelled queued run never runs", async () => {
    const { session } = start();
    const a = session.run({ code: "import time\ntime.sleep(0.3)\norder = ['a']" });
    const abort = new AbortController();
    const b = session.run({ code: "order.append('b')", signal: abort.signal });
    abort.abort();
    const c = session.run({ code: "order" });
    expect((await a).error).toBeUndefined();
    expect((await b).error?.type).toBe("Cancelled");
    expect((await c).value).toBe("['a']");
  });

  test("close() while the sandbox is still starting: nothing is left running", async () => {
    const { session } = start();
    session.warm();
    await session.close();
    await expect(session.run({ code: "1" })).rejects.toThrow("the session is closed");
  });
});
