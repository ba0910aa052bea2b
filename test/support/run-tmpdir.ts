/**
 * Preloaded by `bun test` (bunfig.toml): every temporary folder a test makes (there are ~150 `mkdtemp`
 * calls across the suites, most never removed) goes into one folder of this run's own, removed when the
 * run ends, so running the tests does not leave dozens of folders in /tmp each time. A run that was
 * killed leaves its folder behind; the next run removes the folders of runs whose process is gone.
 *
 * Node's `os.tmpdir()` and `child_process` read TMPDIR when called; `Bun.spawn` without an `env` passes
 * the environment the process started with, so a bridge spawned that way still uses the system's
 * temporary folder (and cleans up after itself there, as it does for users).
 */
import { afterAll } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processAlive } from "./processes.ts";

const PREFIX = "mcx-test-run-";
const base = tmpdir();

for (const name of readdirSync(base)) {
  const pid = name.startsWith(PREFIX) ? Number(name.slice(PREFIX.length).split("-")[0]) : Number.NaN;
  if (Number.isInteger(pid) && pid > 0 && !processAlive(pid)) rmSync(join(base, name), { recursive: true, force: true });
}

const dir = mkdtempSync(join(base, `${PREFIX}${process.pid}-`));
process.env.TMPDIR = dir;

afterAll(() => {
  if (process.env.MCX_KEEP_TEST_TMP) console.error(`test temporary files kept in ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
});
