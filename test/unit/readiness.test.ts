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
const engineWith =
  (present: boolean, delayMs = 0) =>
  async () => {
    await Bun.sleep(delayMs);
    return { adapter: { name: "fake", imageExists: async () => present, imageHint: () => "pull it" }, info: {} } as unknown as Selected;
  };

test("a missing image is found before the handshake, with the engine's hint", async () => {
  const r = await startupReadiness({ config: config(), engine: engineWith(false), log }, 2_000);
  expect(r.problem).toBe("the sandbox image img:1 is not in fake: pull it, or set MCP_BRIDGE_IMAGE to an image that is");
});

test("the next start uses the last answer without waiting for the engine, and leaves a fresh one", async () => {
  const c = config();
  expect(await startupReadiness({ config: c, engine: engineWith(true), log }, 2_000)).toEqual({ ready: true });
  await Bun.sleep(50); // the result is written after the check resolves
  const t0 = performance.now();
  expect(await startupReadiness({ config: c, engine: engineWith(false, 1_500), log }, 5_000)).toEqual({ ready: true });
  expect(performance.now() - t0).toBeLessThan(1_000); // it did not wait for the 1.5 s engine
  await Bun.sleep(1_700); // that background check found the image gone
  const t1 = performance.now();
  expect((await startupReadiness({ config: c, engine: engineWith(true, 1_500), log }, 5_000)).problem).toContain("img:1 is not in fake");
  expect(performance.now() - t1).toBeLessThan(1_000);
});

test("an engine slower than the wait leaves the answer open on a first start", async () => {
  expect(await startupReadiness({ config: config(), engine: engineWith(false, 500), log }, 50)).toEqual({});
});

test("after a start that found the image missing, a slow engine still gets the problem into the instructions", async () => {
  const c = config();
  expect((await startupReadiness({ config: c, engine: engineWith(false, 100), log }, 50)).problem).toBeUndefined();
  await Bun.sleep(200); // that check finished in the background and left its answer
  const r = await startupReadiness({ config: c, engine: engineWith(false, 500), log }, 50);
  expect(r.problem).toContain("img:1 is not in fake");
});
