/**
 * The run's progress stream (src/server/client-requests.ts): output lines and a heartbeat while the
 * code is silent, so clients that reset their request timeout on progress (opencode, the SDK's
 * `resetTimeoutOnProgress`) keep waiting for a long run. The real client is in test/clients/opencode.test.ts.
 */
import { expect, test } from "bun:test";
import type { ServerNotification } from "@modelcontextprotocol/sdk/types.js";
import { HEARTBEAT_MS, progressSender } from "../../src/server/client-requests.ts";

type Sent = { progress: number; message: string };

function recorder() {
  const sent: Sent[] = [];
  let wake: (() => void) | undefined;
  const send = async (n: ServerNotification) => {
    const p = n.params as { progressToken: string; progress: number; message: string };
    expect(p.progressToken).toBe("tok");
    sent.push({ progress: p.progress, message: p.message });
    wake?.();
  };
  /** Resolves once `count` notifications have been sent (a guard fails the test after 5 s). */
  const until = (count: number) =>
    new Promise<void>((resolve, reject) => {
      const guard = setTimeout(() => reject(new Error(`only ${sent.length} notifications: ${JSON.stringify(sent)}`)), 5_000);
      const check = () => {
        if (sent.length < count) return;
        clearTimeout(guard);
        wake = undefined;
        resolve();
      };
      wake = check;
      check();
    });
  return { sent, send, until };
}

test("a silent run sends a heartbeat; output resets it; progress only grows", async () => {
  const r = recorder();
  const p = progressSender("tok", r.send, { heartbeatMs: 40 });
  await r.until(1);
  expect(r.sent[0]!.message).toMatch(/^run_python still running \(\d+s\)$/);
  p.push("stdout", "line 1\nline 2\n");
  await p.flush();
  await r.until(3);
  expect(r.sent[1]!.message).toBe("line 1\nline 2");
  expect(r.sent[2]!.message).toMatch(/still running/);
  const progress = r.sent.map((s) => s.progress);
  expect(progress).toEqual([1, 3, 4]);
  p.end();
});

test("nothing is sent once the call has ended (or the client gave up on it)", async () => {
  const r = recorder();
  const p = progressSender("tok", r.send, { heartbeatMs: 20 });
  await r.until(1);
  p.end();
  const before = r.sent.length;
  p.push("stdout", "late output\n");
  await p.flush();
  // Several heartbeat periods: none may come (the call's result has gone out).
  await Bun.sleep(150);
  expect(r.sent.length).toBe(before);
});

test("clients that give up after the SDK's 60 s default hear from a silent run well before that", () => {
  expect(HEARTBEAT_MS).toBeLessThanOrEqual(20_000);
});
