/**
 * `bun run test:fast`: the unit and core suites, with no engine, no image and no compiled binary. The
 * engine CLIs are made unavailable for the run (as root: a private mount namespace puts /dev/null over
 * them, so not even the bridge's search of install folders finds one); the binary may not be built.
 * The core suites (real python processes, timeouts) run beside the unit suites, one `bun test` each, so
 * both cores work. Extra arguments go to each `bun test`. The per-test timeout is the full suite's
 * (120 s), a guard only: the CPU-bound fuzz suites take 20-40 s on a 2-core machine at load 10, and
 * one took 74 s at load 14 with two CPU hogs beside it.
 */
import { writeSync } from "node:fs";
import { join } from "node:path";
import { CAN_HIDE_ENGINES, withoutEngines } from "../test/support/hide-engines.ts";

const GROUPS = [["test/core"], ["test/unit", "test/ci"]];
if (!CAN_HIDE_ENGINES) console.error("[test:fast] not root: engines stay visible; the fast suites do not use them");

const runs = GROUPS.map(async (suites) => {
  const argv = ["bun", "test", "--timeout", "120000", ...suites, ...process.argv.slice(2)];
  const proc = Bun.spawn(CAN_HIDE_ENGINES ? withoutEngines(argv) : argv, {
    cwd: join(import.meta.dir, ".."),
    env: { ...process.env, MCP_TEST_NO_BINARY: "1", MCP_TEST_ENGINES: "" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { suites, out: `${out}${err}`, code };
});

let failed = 0;
let passed = 0;
for (const r of await Promise.all(runs)) {
  writeSync(1, `\n=== ${r.suites.join(" ")} ===\n${r.out}`); // synchronous: process.exit must not cut it off
  passed += Number(/^\s*(\d+) pass$/m.exec(r.out)?.[1] ?? 0);
  failed += Number(/^\s*(\d+) fail$/m.exec(r.out)?.[1] ?? 0) + (r.code !== 0 && !/ fail$/m.test(r.out) ? 1 : 0);
}
writeSync(1, `\ntest:fast: ${passed} passed, ${failed} failed\n`);
process.exit(failed ? 1 : 0);
