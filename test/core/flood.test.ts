/**
 * A sandbox that floods the protocol channel (tiny frames, empty lines, forged ready frames) from a
 * thread that outlives its run: the bridge's event loop keeps its turns, the sandbox is stopped once
 * it is over the budget, and the next call says why and that the state is gone. Local python engine.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { fill, floodAfterRun } from "../security/attacks.ts";
import { localSession, type LocalSession } from "../support/local-session.ts";

let open: LocalSession[] = [];
afterEach(async () => {
  await Promise.all(open.map((s) => s.close()));
  open = [];
});

/**
 * The attack suite's flood, aimed at the runtime's private descriptors (protocol out, diagnostics: 201
 * and up; under the local engine they are sockets, not the FIFOs an engine gives).
 */
const flood = (line: string) =>
  `${fill(floodAfterRun(line, "[int(fd) for fd in os.listdir('/proc/self/fd') if int(fd) >= 201]"), { canary: "", hostHome: "", bridgePid: 0 })}\nstate = "set before the flood"`;

/** The largest gap between 10 ms timer ticks until `done` settles: how long the event loop was kept from its turn. */
async function worstTimerLag(done: Promise<unknown>): Promise<number> {
  let worst = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - 10);
    last = now;
  }, 10);
  await done;
  clearInterval(timer);
  return Math.max(worst, performance.now() - last - 10);
}

describe.each([
  ["tiny frames", "x\n"],
  ["empty lines", "\n"],
  ["forged ready frames", '{"t":"ready","protocol":1,"python":"3"}\n'],
])("a flood of %s after the run returned", (_name, line) => {
  test("the event loop keeps its turns; the sandbox is stopped; the next call says why", async () => {
    const local = localSession();
    open.push(local);
    const stopped = local.nextRemoval();
    const first = await local.session.run({ code: flood(line) });
    expect(first.error).toBeUndefined();
    // Before the budget, such a flood kept the event loop from its turn for 15-45 s. Measured until the
    // bridge stops the sandbox; the bound is loose for loaded machines, bench/flood.ts measures the real
    // figure against the 100 ms target.
    expect(await worstTimerLag(stopped)).toBeLessThan(1000);
    const next = await local.session.run({ code: "'state' in globals()" });
    expect(next.value).toBe("False");
    expect(next.notes.join(" ")).toMatch(/earlier session state was lost \(it (sent more than|wrote more than|reading its output took)/);
    expect(next.notes.join(" ")).toContain("so it was stopped");
  }, 30_000);
});
