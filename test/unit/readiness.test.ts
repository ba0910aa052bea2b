/** The startup check, with a fake engine (its answers are the point here; the real engines are in e2e). */
import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config/env.ts";
import { createLogger } from "../../src/log.ts";
import type { Selected } from "../../src/engines/registry.ts";
import { startupReadiness } from "../../src/server/readiness.ts";

const log = createLogger("ERROR", "text");
const config = () =>
  loadConfig({ MCP_BRIDGE_STATE_DIR: mkdtempSync(join(tmpdir(), "mcx-ready-")), MCP_BRIDGE_IMAGE: "img:1" }, "/nonexistent");
/** An engine that answers at once (`present`), or only when the test calls answer(). */
function engineWith(present: boolean, opts: { held?: boolean } = {}) {
  const gate = Promise.withResolvers<void>();
  if (!opts.held) gate.resolve();
  const engine = async () => {
    await gate.promise;
    return { adapter: { name: "fake", imageExists: async () => present, imageHint: () => "pull it" }, info: {} } as unknown as Selected;
  };
  return { engine, answer: () => gate.resolve() };
}

/** startupReadiness, and when its check (which may outlive the answer) has left its answer. */
function ready(c: ReturnType<typeof config>, engine: () => Promise<Selected>, waitMs: number) {
  const checked = Promise.withResolvers<void>();
  const answer = startupReadiness({ config: c, engine, log, onChecked: () => checked.resolve() }, waitMs);
  return { answer, checked: checked.promise };
}

test("a missing image is found before the handshake, with the engine's hint", async () => {
  const r = await startupReadiness({ config: config(), engine: engineWith(false).engine, log }, 2_000);
  expect(r.problem).toBe("the sandbox image img:1 is not in fake: pull it, or set MCP_BRIDGE_IMAGE to an image that is");
});

test("the next start uses the last answer without waiting for the engine, and leaves a fresh one", async () => {
  const c = config();
  const first = ready(c, engineWith(true).engine, 2_000);
  expect(await first.answer).toEqual({ ready: true });
  await first.checked;
  // The engine has not answered at all (and the wait is long): the answer is the last start's.
  const gone = engineWith(false, { held: true });
  const second = ready(c, gone.engine, 60_000);
  expect(await second.answer).toEqual({ ready: true });
  gone.answer();
  await second.checked; // that check found the image gone
  const third = ready(c, engineWith(true, { held: true }).engine, 60_000);
  expect((await third.answer).problem).toContain("img:1 is not in fake");
});

test("an engine slower than the wait leaves the answer open on a first start", async () => {
  expect(await startupReadiness({ config: config(), engine: engineWith(false, { held: true }).engine, log }, 50)).toEqual({});
});

test("after a start that found the image missing, a slow engine still gets the problem into the instructions", async () => {
  const c = config();
  const slow = engineWith(false, { held: true });
  const first = ready(c, slow.engine, 50);
  expect((await first.answer).problem).toBeUndefined();
  slow.answer();
  await first.checked; // that check finished in the background and left its answer
  const r = await ready(c, engineWith(false, { held: true }).engine, 50).answer;
  expect(r.problem).toContain("img:1 is not in fake");
});
