/** The queue of the sandbox's requests: 64 answered at a time, the rest in order, a flood refused. */
import { expect, test } from "bun:test";
import type { RpcFrame } from "../../src/sandbox/frames.ts";
import { MAX_RPC_IN_FLIGHT, RPC_CONCURRENCY, RpcQueue } from "../../src/sandbox/rpc-queue.ts";

const frame = (n: number): RpcFrame => ({ t: "rpc", id: `r${n}`, run: 1, method: "tools.list", params: {} });
/** Let queued microtasks and promise callbacks run. */
const settle = () => new Promise((r) => setImmediate(r));

function answering() {
  const started: string[] = [];
  const finish = new Map<string, () => void>();
  let floods = 0;
  const queue = new RpcQueue(
    (f) => {
      started.push(f.id);
      const { promise, resolve } = Promise.withResolvers<void>();
      finish.set(f.id, resolve);
      return promise;
    },
    () => floods++,
  );
  return { queue, started, finish, floods: () => floods };
}

test(`${RPC_CONCURRENCY} requests are answered at once, the rest wait their turn in order`, async () => {
  expect(RPC_CONCURRENCY).toBe(64);
  const { queue, started, finish } = answering();
  for (let i = 0; i < 200; i++) queue.push(frame(i));
  // Answering starts a microtask later, outside the loop that read the frames.
  expect(started).toEqual([]);
  await settle();
  expect(started).toEqual(Array.from({ length: 64 }, (_, i) => `r${i}`));
  finish.get("r5")!();
  finish.get("r0")!();
  await settle();
  expect(started.slice(64)).toEqual(["r64", "r65"]);
  for (const id of started) finish.get(id)!();
  await settle();
  expect(started.length).toBe(66 + 64);
  for (let round = 0; round < 3; round++) {
    for (const id of started) finish.get(id)!();
    await settle();
  }
  expect(started).toEqual(Array.from({ length: 200 }, (_, i) => `r${i}`));
});

test(`past ${MAX_RPC_IN_FLIGHT} requests waiting or being answered, each one more is refused as a flood`, async () => {
  const { queue, started, finish, floods } = answering();
  for (let i = 0; i < MAX_RPC_IN_FLIGHT + 3; i++) queue.push(frame(i));
  expect(floods()).toBe(3);
  await settle();
  expect(started.length).toBe(RPC_CONCURRENCY);
  // One answered makes room for one more.
  finish.get("r0")!();
  await settle();
  queue.push(frame(-1));
  expect(floods()).toBe(3);
  queue.push(frame(-2));
  expect(floods()).toBe(4);
});
