/**
 * What a run's output capture guarantees (local python: the real entrypoint, no engine, no isolation):
 * everything written before the run ended is in its result, from Python, C code and subprocesses, in
 * order; a flood is counted, not kept; and a writer that never stops cannot hold a run's result back.
 */
import { describe, expect, test } from "bun:test";
import { localSessionsClosedAfterEach } from "../support/local-session.ts";

const start = localSessionsClosedAfterEach();

describe("output capture (local python: no engine, no isolation)", () => {
  test("writes from Python, os.write and a subprocess all land in the run that made them, in order", async () => {
    const { session } = start();
    for (let i = 0; i < 20; i++) {
      const r = await session.run({
        code: `import os, subprocess, sys\nprint('a${i}')\nos.write(1, b'b${i}\\n')\nsubprocess.run(['echo', 'c${i}'])\nprint('e${i}', file=sys.stderr)`,
      });
      expect(r.stdout).toBe(`a${i}\nb${i}\nc${i}\n`);
      expect(r.stderr).toBe(`e${i}\n`);
    }
  });

  test("a burst far over the pipe's size and the cap is drained, kept up to the cap and counted", async () => {
    const { session } = start();
    const r = await session.run({ code: "import os\nfor _ in range(64):\n    os.write(1, b'x' * 65536)\nprint('done')" });
    expect(r.error).toBeUndefined();
    expect(r.stdout?.length).toBe(64 * 1024);
    expect(r.stdoutDropped).toBe(64 * 65536 + 5 - 64 * 1024);
  });

  test("a background writer that never stops does not hold up the next run", async () => {
    const { session } = start();
    await session.run({ code: "import subprocess\nflood = subprocess.Popen(['yes'])" });
    const t0 = performance.now();
    const r = await session.run({ code: "print('still here')\n1 + 1", timeoutSec: 10 });
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(r.error).toBeUndefined();
    expect(r.value).toBe("2");
    expect((await session.run({ code: "flood.kill(); flood.wait()" })).error).toBeUndefined();
    expect((await session.run({ code: "print('quiet again')" })).stdout).toContain("quiet again");
  });
});
