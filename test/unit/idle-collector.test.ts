/** The idle collector: once after activity stops, never while it goes on, never without activity (test clock). */
import { expect, test } from "bun:test";
import { collectGarbage, IdleCollector } from "../../src/host/memory.ts";
import { ManualClock } from "../support/manual-clock.ts";

test("collects once, idleMs after the last touch; nothing before the first touch", async () => {
  const clock = new ManualClock();
  let n = 0;
  const c = new IdleCollector(40, () => n++, clock);
  await clock.advance(60);
  expect(n).toBe(0);
  for (let i = 0; i < 5; i++) {
    c.touch();
    await clock.advance(15);
  }
  expect(n).toBe(0);
  await clock.advance(24);
  expect(n).toBe(0);
  await clock.advance(1);
  expect(n).toBe(1);
  await clock.advance(60);
  expect(n).toBe(1);
  c.touch();
  c.stop();
  await clock.advance(60);
  expect(n).toBe(1);
});

test("collectGarbage runs under Bun without throwing", () => {
  expect(() => collectGarbage()).not.toThrow();
});
