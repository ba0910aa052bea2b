/**
 * `serve --http` making room for one-shot clients (legacy-sessions.ts `reclaim`) never takes the
 * protocol session whose own request asks for the room. The client here is bare 2025-11-25 HTTP, as a
 * minimal client speaks it: no standalone SSE stream, so between requests its session holds nothing.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ENGINES } from "../support/env.ts";
import { startHttpBridge, type HttpBridge } from "../support/http-bridge.ts";

const TOKEN = `reclaim-${crypto.randomUUID()}`;
let b: HttpBridge;

beforeAll(async () => {
  const home = mkdtempSync(join(tmpdir(), "mcx-http-reclaim-"));
  b = await startHttpBridge({
    HOME: home,
    MCP_BRIDGE_STATE_DIR: join(home, "state"),
    MCP_BRIDGE_RUNTIME: ENGINES[0]!,
    MCP_BRIDGE_PREWARM: "0",
    MCP_BRIDGE_HTTP_TOKENS: `alice=${TOKEN}`,
    MCP_BRIDGE_MAX_SESSIONS_PER_USER: "2",
  });
}, 60_000);
afterAll(async () => {
  expect(await b?.close()).toBe(0);
});

/** A protocol session over bare HTTP: initialize, then calls whose SSE answers are read to the end. */
async function bareSession(url: string) {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    authorization: `Bearer ${TOKEN}`,
  };
  const post = (body: unknown) => fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
  const init = await post({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bare", version: "1" } },
  });
  headers["mcp-session-id"] = init.headers.get("mcp-session-id")!;
  headers["mcp-protocol-version"] = "2025-11-25";
  await init.text();
  await (await post({ jsonrpc: "2.0", method: "notifications/initialized" })).text();
  let id = 1;
  return async (args: Record<string, unknown>) => {
    const r = await post({ jsonrpc: "2.0", id: id++, method: "tools/call", params: { name: "run_python", arguments: args } });
    const events = (await r.text())
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => JSON.parse(l.slice(6)) as { id?: number; result?: { content: Array<{ text?: string }>; isError?: boolean } });
    const answer = events.find((e) => e.id !== undefined);
    return { status: r.status, text: answer?.result?.content.map((c) => c.text ?? "").join("\n"), isError: answer?.result?.isError };
  };
}

test("at the session limit, a call on a session with nothing else in use is refused, and its session (and state) stay", async () => {
  const call = await bareSession(b.url);
  expect((await call({ code: "a = 'mine'" })).isError).toBe(false); // its default session
  expect((await call({ code: "1", session: "new" })).isError).toBe(false); // the user's second
  const third = await call({ code: "2", session: "new" });
  expect(third.status).toBe(200);
  expect(third.text).toContain("you have 2 sessions open, the most one user may (MCP_BRIDGE_MAX_SESSIONS_PER_USER)");
  const after = await call({ code: "a" });
  expect(after.text).toContain("'mine'");
}, 120_000);
