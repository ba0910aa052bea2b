/** The idle collector: once after activity stops, never while it goes on, never without activity. */
import { expect, test } from "bun:test";
import { collectGarbage, IdleCollector } from "../../src/host/memory.ts";

test("collects once, idleMs after the last touch; nothing before the first touch", async () => {
  let n = 0;
  const c = new IdleCollector(40, () => n++);
  await Bun.sleep(60);
  expect(n).toBe(0);
  for (let i = 0; i < 5; i++) {
    c.touch();
    await Bun.sleep(15);
  }
  expect(n).toBe(0);
  await Bun.sleep(60);
  expect(n).toBe(1);
  await Bun.sleep(60);
  expect(n).toBe(1);
  c.touch();
  c.stop();
  await Bun.sleep(60);
  expect(n).toBe(1);
});

test("collectGarbage runs under Bun without throwing", () => {
  expect(() => collectGarbage()).not.toThrow();
});
