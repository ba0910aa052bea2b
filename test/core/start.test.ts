/**
 * What a sandbox start costs and where it goes, on the test-only local-python engine (the real
 * entrypoint, no engine, no isolation): the DEBUG trace, and the imports deferred until a cell needs
 * them or the sandbox is idle, with the event loop code expects.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../../src/app.ts";
import { createLogger } from "../../src/log.ts";
import type { Session } from "../../src/session/session.ts";
import { fileSays } from "../support/events.ts";
import { localPythonEngine } from "../support/local-python-adapter.ts";

let sessions: Session[] = [];
afterEach(async () => {
  await Promise.all(sessions.map((s) => s.close()));
  sessions = [];
});

function start() {
  const home = mkdtempSync(join(tmpdir(), "mcx-start-"));
  const app = createApp(
    { PATH: process.env.PATH, HOME: home, MCP_BRIDGE_STATE_DIR: join(home, "state"), MCP_BRIDGE_LOG_LEVEL: "DEBUG" },
    home,
  );
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger("DEBUG", "json", (l) => lines.push(JSON.parse(l) as Record<string, unknown>));
  const session = app.newSession({ engine: localPythonEngine().selected, log });
  sessions.push(session);
  return { session, lines };
}

describe("sandbox start (local python: no engine, no isolation)", () => {
  test("a start logs where its milliseconds went, inside the sandbox too, and the first run's share", async () => {
    const { session, lines } = start();
    expect((await session.run({ code: "1" })).value).toBe("1");
    const trace = lines.find((l) => l.msg === "sandbox start trace")!;
    expect(trace).toBeDefined();
    for (const phase of [
      "engine",
      "profile",
      "argv",
      "container",
      "boot_read",
      "boot_compiled",
      "boot_imported",
      "boot_ready",
      "ready_frame",
    ]) {
      expect(typeof trace[`ms_${phase}`]).toBe("number");
    }
    const phases = Object.entries(trace)
      .filter(([k]) => k.startsWith("ms_"))
      .reduce((sum, [, v]) => sum + (v as number), 0);
    expect(Math.abs(phases - (trace.total_ms as number))).toBeLessThan(1);
    const run = lines.find((l) => l.msg === "run trace")!;
    expect(run).toMatchObject({ first_in_sandbox: true });
    expect(run.wait_ms as number).toBeGreaterThanOrEqual(trace.total_ms as number);
    await session.run({ code: "2" });
    expect(lines.filter((l) => l.msg === "run trace").at(-1)).toMatchObject({ first_in_sandbox: false });
  });

  test("asyncio is not imported for a first run that does not await; it is once the sandbox is idle", async () => {
    const { session } = start();
    // A thread of the run's own says when the idle sandbox has imported it (the local engine shares
    // the host's files): the next run is sent then, not after a guess at how long the import takes.
    const marker = join(mkdtempSync(join(tmpdir(), "mcx-preload-")), "asyncio-imported");
    const watch = `import threading, time\ndef _watch():\n    while 'asyncio' not in sys.modules: time.sleep(0.005)\n    open(${JSON.stringify(marker)}, 'w').close()\nthreading.Thread(target=_watch, daemon=True).start()`;
    // The sandbox imports it once idle for 0.1 s: on a busy machine the first run can come later than
    // that, and find it imported by then. What must never be: imported with no idle loop made, i.e. by the run.
    const first = await session.run({
      code: `import sys\nimport _mcp_host as _h\n${watch}\n'asyncio' in sys.modules, _h.rpc.__globals__['MAIN_LOOP'] is not None`,
    });
    expect(["(False, False)", "(True, True)"]).toContain(first.value ?? first.error?.message ?? "no value");
    await fileSays(marker, () => true);
    expect((await session.run({ code: "'asyncio' in sys.modules" })).value).toBe("True");
  });

  test("the first cell can await; later cells share its loop", async () => {
    const { session } = start();
    const first = await session.run({ code: "import asyncio\nawait asyncio.sleep(0)\nloop = asyncio.get_running_loop()\n42" });
    expect(first.error).toBeUndefined();
    expect(first.value).toBe("42");
    expect((await session.run({ code: "await asyncio.sleep(0)\nnow = asyncio.get_running_loop()\nnow is loop" })).value).toBe("True");
    // A forgotten await on the last line is still awaited.
    expect((await session.run({ code: "asyncio.sleep(0, 'slept')" })).value).toBe("'slept'");
  });

  test("a loop user code set itself is the one top-level await runs on", async () => {
    const { session } = start();
    await session.run({ code: "import asyncio\nmine = asyncio.new_event_loop()\nasyncio.set_event_loop(mine)" });
    expect((await session.run({ code: "await asyncio.sleep(0)\nnow = asyncio.get_running_loop()\nnow is mine" })).value).toBe("True");
  });

  test("errors still come back with the user's frames only", async () => {
    const { session } = start();
    const r = await session.run({ code: "def f():\n    raise ValueError('boom')\nf()" });
    expect(r.error?.type).toBe("ValueError");
    expect(r.error?.traceback).toContain("line 2, in f");
    expect(r.error?.traceback).not.toContain("mcp-entrypoint");
  });
});
