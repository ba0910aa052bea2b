/**
 * The bridge's own stdio transport (src/server/stdio-transport.ts) at the end of its input: which
 * requests are still waiting for an answer, and a last line without its newline.
 */
import { describe, expect, test } from "bun:test";
import { PassThrough } from "node:stream";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { StdioTransport } from "../../src/server/stdio-transport.ts";

function transport() {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const t = new StdioTransport({ stdin, stdout, maxMessageBytes: 1 << 20 });
  const received: JSONRPCMessage[] = [];
  t.onmessage = (m) => received.push(m);
  const ended = new Promise<void>((resolve) => (t.oninputend = resolve));
  return { t, stdin, received, ended };
}

const request = (id: number | string, method = "ping") => `${JSON.stringify({ jsonrpc: "2.0", id, method })}\n`;
const settled = async (p: Promise<void>) => {
  let done = false;
  void p.then(() => (done = true));
  // Two turns of the event loop: a settled promise has run its callbacks by then.
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  return done;
};

describe("the requests waiting for an answer", () => {
  test("counted as they arrive, settled by their answers (ids as numbers and as strings)", async () => {
    const { t, stdin } = transport();
    await t.start();
    stdin.write(request(1) + request("a") + JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
    await new Promise((r) => setImmediate(r));
    expect(t.unanswered).toBe(2);
    const all = t.allAnswered();
    await t.send({ jsonrpc: "2.0", id: 1, result: {} });
    expect(await settled(all)).toBe(false);
    // "1" is not 1: a string id is its own request.
    await t.send({ jsonrpc: "2.0", id: "1", result: {} });
    expect(t.unanswered).toBe(1);
    await t.send({ jsonrpc: "2.0", id: "a", error: { code: -32601, message: "no" } });
    expect(t.unanswered).toBe(0);
    expect(await settled(all)).toBe(true);
  });

  test("a request the client cancelled is not waited for", async () => {
    const { t, stdin } = transport();
    await t.start();
    stdin.write(request(7, "tools/call"));
    stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7 } })}\n`);
    await new Promise((r) => setImmediate(r));
    expect(t.unanswered).toBe(0);
    expect(await settled(t.allAnswered())).toBe(true);
  });

  test("the input's end is told once, after a last line without its newline was read as a message", async () => {
    const { t, stdin, received, ended } = transport();
    await t.start();
    let told = 0;
    const inner = t.oninputend;
    t.oninputend = () => {
      told++;
      inner?.();
    };
    stdin.end(request(1).trimEnd());
    await ended;
    expect(received).toEqual([{ jsonrpc: "2.0", id: 1, method: "ping" }]);
    expect(t.unanswered).toBe(1);
    stdin.destroy();
    await new Promise((r) => setImmediate(r));
    expect(told).toBe(1);
  });
});
