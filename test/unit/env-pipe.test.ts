/**
 * Reading an envFile that is a named pipe when its server starts (src/upstream/env-pipe.ts), the way
 * 1Password serves mounted .env files: the writer opens the pipe once a reader does, after the user
 * authorizes the read, and writes the secrets once.
 */
import { afterAll, afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readEnvPipe } from "../../src/upstream/env-pipe.ts";

const dir = mkdtempSync(join(tmpdir(), "env-pipe-"));
// A writer blocks in open() until someone reads: one the code under test never read must not outlive the test.
const writers: Array<ReturnType<typeof Bun.spawn>> = [];
const writer = (script: string) => {
  const w = Bun.spawn(["sh", "-c", script]);
  writers.push(w);
  return w;
};
afterEach(() => {
  for (const w of writers.splice(0)) if (w.exitCode === null) w.kill(9);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const fifo = (name: string) => {
  const p = join(dir, name);
  expect(Bun.spawnSync(["mkfifo", p]).exitCode).toBe(0);
  return p;
};

test("the secrets a writer puts through the pipe, once someone reads (after a person's approval)", async () => {
  const p = fifo("ok.env");
  const w = writer(`sleep 0.3; printf 'TOKEN="a b"\\nOTHER=2\\n' > '${p}'`);
  expect(await readEnvPipe(p, 10_000)).toEqual({ TOKEN: "a b", OTHER: "2" });
  expect(await w.exited).toBe(0);
});

test("read with a PATH that has no cat on it (a desktop launcher's)", async () => {
  const p = fifo("path.env");
  const w = writer(`printf 'A=1\\n' > '${p}'`);
  const saved = process.env.PATH;
  process.env.PATH = "/nonexistent";
  try {
    expect(await readEnvPipe(p, 10_000)).toEqual({ A: "1" });
  } finally {
    process.env.PATH = saved;
  }
  expect(await w.exited).toBe(0);
});

test("nothing comes within the time: a clear error, and the reader does not stay behind", async () => {
  const p = fifo("silent.env");
  const t0 = performance.now();
  const err = await readEnvPipe(p, 400).catch((e: Error) => e);
  expect(performance.now() - t0).toBeLessThan(5_000);
  expect(String(err)).toContain(`its envFile ${p} is a named pipe and nothing came through it within 400 ms`);
  expect(String(err)).toContain("authorize the read, or unlock 1Password");
  const readers = Bun.spawnSync(["pgrep", "-f", `cat ${p}`])
    .stdout.toString()
    .trim();
  expect(readers).toBe("");
});
