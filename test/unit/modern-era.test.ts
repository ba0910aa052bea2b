/**
 * The 2026-07-28 layer (src/server/modern-era.ts) between the wire and the SDK server, with both sides
 * played by the test: what the server is handed, and what the client gets. The flows with the real
 * bridge, sandbox and upstream are in test/e2e/modern-protocol.test.ts; here, the orderings those rarely
 * hit (an answer that comes while no request waits for it, notifications around a call) and the legacy
 * path left untouched.
 */
import { beforeEach, expect, test } from "bun:test";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { ModernEra } from "../../src/server/modern-era.ts";
import { Arrivals } from "../support/events.ts";

type Msg = Record<string, any>;
let toClient: Msg[];
/** The same messages, to wait for one (test/support/events.ts). */
let arrived: Arrivals<Msg>;
let toServer: Msg[];
let wire: Transport;
let era: ModernEra;
beforeEach(() => {
  toClient = [];
  arrived = new Arrivals<Msg>();
  toServer = [];
  wire = {
    start: async () => {},
    close: async () => {},
    send: async (m: JSONRPCMessage) => {
      toClient.push(m as Msg);
      arrived.push(m as Msg);
    },
  };
  era = new ModernEra(wire);
  era.onmessage = (m) => toServer.push(m as Msg);
});

const meta = (extra: Msg = {}) => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "c", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
  ...extra,
});
const fromClient = (m: Msg) => wire.onmessage!({ jsonrpc: "2.0", ...m } as JSONRPCMessage);
/** Settles once the client has been sent the message `match` accepts. */
const sent = (match: (m: Msg) => boolean) => arrived.find(match);
/** The client was asked question `key` (an input_required result). */
const asks = (key: string) => (m: Msg) => m.result?.resultType === "input_required" && key in (m.result.inputRequests ?? {});
/** The server side answers the initialize the layer made. */
const answerInit = () =>
  era.send({
    jsonrpc: "2.0",
    id: "mcx-initialize",
    result: { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "s", version: "9" } },
  } as JSONRPCMessage);

test("a legacy client's messages pass both ways untouched", async () => {
  const init = {
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "old", version: "1" } },
  };
  fromClient(init);
  expect(toServer).toEqual([{ jsonrpc: "2.0", ...init }]);
  await era.send({ jsonrpc: "2.0", id: 1, result: { protocolVersion: "2025-06-18" } } as JSONRPCMessage);
  await era.send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" } as JSONRPCMessage);
  await era.send({ jsonrpc: "2.0", id: 0, method: "elicitation/create", params: { message: "?" } } as JSONRPCMessage, {
    relatedRequestId: 1,
  });
  expect(toClient).toEqual([
    { jsonrpc: "2.0", id: 1, result: { protocolVersion: "2025-06-18" } },
    { jsonrpc: "2.0", method: "notifications/tools/list_changed" },
    { jsonrpc: "2.0", id: 0, method: "elicitation/create", params: { message: "?" } },
  ]);
});

test("the first modern request is preceded by an initialize made from its _meta; ids are ours inside, the client's outside", async () => {
  fromClient({ id: 7, method: "tools/list", params: { _meta: meta() } });
  expect(toServer.map((m) => m.method)).toEqual(["initialize", "notifications/initialized", "tools/list"]);
  expect(toServer[0]!.params).toEqual({
    protocolVersion: "2025-11-25",
    capabilities: { elicitation: { form: {} } },
    clientInfo: { name: "c", version: "1" },
  });
  const inner = toServer[2]!.id;
  expect(inner).not.toBe(7);
  await answerInit();
  await era.send({ jsonrpc: "2.0", id: inner, result: { tools: [] } } as JSONRPCMessage);
  expect(toClient).toEqual([
    {
      jsonrpc: "2.0",
      id: 7,
      result: {
        tools: [],
        resultType: "complete",
        _meta: { "io.modelcontextprotocol/serverInfo": { name: "s", version: "9" } },
        ttlMs: 3_600_000,
        cacheScope: "private",
      },
    },
  ]);
});

test("an answer that comes while the client has not come back yet answers its retry; nothing else is sent meanwhile", async () => {
  fromClient({ id: 1, method: "tools/call", params: { name: "run_python", arguments: {}, _meta: meta({ progressToken: "p1" }) } });
  await answerInit();
  const inner = toServer[2]!.id;
  await era.send({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "p1", progress: 1 } } as JSONRPCMessage, {
    relatedRequestId: inner,
  });
  await era.send({ jsonrpc: "2.0", id: 0, method: "elicitation/create", params: { message: "ok?" } } as JSONRPCMessage, {
    relatedRequestId: inner,
  });
  await sent(asks("elicitation_create_0"));
  const asked = toClient.at(-1)!;
  expect(asked).toMatchObject({
    id: 1,
    result: { resultType: "input_required", inputRequests: { elicitation_create_0: { method: "elicitation/create" } } },
  });
  const state = asked.result.requestState as string;
  // While no request waits: progress and log messages have nobody to go to, the server's cancellation of
  // its own question is never shown, and the call's answer is kept.
  const before = toClient.length;
  await era.send({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "p1", progress: 2 } } as JSONRPCMessage, {
    relatedRequestId: inner,
  });
  await era.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 0 } } as JSONRPCMessage, {
    relatedRequestId: inner,
  });
  await era.send({ jsonrpc: "2.0", id: inner, result: { content: [{ type: "text", text: "done" }] } } as JSONRPCMessage);
  expect(toClient.length).toBe(before);
  fromClient({
    id: 2,
    method: "tools/call",
    params: { name: "run_python", requestState: state, inputResponses: {}, _meta: meta({ progressToken: "p2" }) },
  });
  expect(toClient.at(-1)).toMatchObject({ id: 2, result: { resultType: "complete", content: [{ type: "text", text: "done" }] } });
  expect(toClient[0]).toMatchObject({ method: "notifications/progress", params: { progressToken: "p1", progress: 1 } });
});

test("a modern call's log messages reach the client only when its request set a log level; cancellations map to our ids", async () => {
  fromClient({ id: 1, method: "tools/call", params: { name: "run_python", _meta: meta() } });
  fromClient({ id: 2, method: "tools/call", params: { name: "run_python", _meta: meta({ "io.modelcontextprotocol/logLevel": "info" }) } });
  await answerInit();
  const [a, b] = [toServer[2]!.id, toServer[3]!.id];
  const log = { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "x" } } as JSONRPCMessage;
  await era.send(log, { relatedRequestId: a });
  await era.send(log, { relatedRequestId: b });
  await era.send({ jsonrpc: "2.0", method: "notifications/resources/list_changed" } as JSONRPCMessage);
  expect(toClient).toEqual([log]);
  fromClient({ method: "notifications/cancelled", params: { requestId: 2, reason: "user" } });
  expect(toServer.at(-1)).toEqual({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: b, reason: "user" } });
});

test("server/discover waits for the initialize answer and never repeats the server's identity outside _meta", async () => {
  fromClient({ id: "d", method: "server/discover", params: { _meta: meta() } });
  expect(toClient).toEqual([]);
  await answerInit();
  await sent((m) => m.id === "d");
  expect(toClient).toEqual([
    {
      jsonrpc: "2.0",
      id: "d",
      result: {
        capabilities: { tools: {} },
        resultType: "complete",
        _meta: { "io.modelcontextprotocol/serverInfo": { name: "s", version: "9" } },
        supportedVersions: ["2026-07-28", "2025-11-25"],
        ttlMs: 60_000,
        cacheScope: "private",
      },
    },
  ]);
});

test("2026-07-28's own shapes: not found is -32602, and a URL-mode question carries no elicitationId", async () => {
  fromClient({ id: 1, method: "resources/read", params: { uri: "resource://gone", _meta: meta() } });
  fromClient({ id: 2, method: "tools/call", params: { name: "run_python", _meta: meta() } });
  await answerInit();
  const [read, call] = [toServer[2]!.id, toServer[3]!.id];
  await era.send({ jsonrpc: "2.0", id: read, error: { code: -32002, message: "Resource not found: resource://gone" } } as JSONRPCMessage);
  expect(toClient.at(-1)).toEqual({ jsonrpc: "2.0", id: 1, error: { code: -32602, message: "Resource not found: resource://gone" } });
  const url = { mode: "url", message: "Sign in to github", url: "https://github.example/login", elicitationId: "e-1" };
  await era.send({ jsonrpc: "2.0", id: 5, method: "elicitation/create", params: url } as JSONRPCMessage, { relatedRequestId: call });
  await sent(asks("elicitation_create_5"));
  expect(toClient.at(-1)!.result.inputRequests).toEqual({
    elicitation_create_5: {
      method: "elicitation/create",
      params: { mode: "url", message: "Sign in to github", url: "https://github.example/login" },
    },
  });
});

test("a call the client cancels is forgotten: an answer that comes anyway is not sent, and nothing is kept for it", async () => {
  fromClient({ id: 9, method: "tools/call", params: { name: "run_python", _meta: meta() } });
  await answerInit();
  const inner = toServer[2]!.id;
  fromClient({ method: "notifications/cancelled", params: { requestId: 9, reason: "timeout" } });
  expect(toServer.at(-1)).toEqual({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: inner, reason: "timeout" } });
  await era.send({ jsonrpc: "2.0", id: inner, result: { content: [] } } as JSONRPCMessage);
  expect(toClient).toEqual([]);
  // The client may use its id again for a new request, which is a new call.
  fromClient({ id: 9, method: "tools/list", params: { _meta: meta() } });
  await era.send({ jsonrpc: "2.0", id: toServer.at(-1)!.id, result: { tools: [] } } as JSONRPCMessage);
  expect(toClient).toMatchObject([{ id: 9, result: { tools: [], resultType: "complete" } }]);
});

test("a bare response carrying a held question's id answers nothing: only the retry with the requestState does", async () => {
  fromClient({ id: 1, method: "tools/call", params: { name: "run_python", arguments: {}, _meta: meta() } });
  await answerInit();
  const inner = toServer[2]!.id;
  await era.send({ jsonrpc: "2.0", id: 5, method: "elicitation/create", params: { message: "allow?" } } as JSONRPCMessage, {
    relatedRequestId: inner,
  });
  await sent(asks("elicitation_create_5"));
  const asked = toClient.at(-1)!;
  expect(asked.result.inputRequests).toHaveProperty("elicitation_create_5");
  const before = toServer.length;
  // The id shown in inputRequests, answered as if the question had been a request: not passed on.
  fromClient({ id: 5, result: { action: "accept", content: { decision: "session" } } });
  fromClient({ id: 99, result: { action: "accept" } });
  expect(toServer.length).toBe(before);
  fromClient({
    id: 2,
    method: "tools/call",
    params: {
      name: "run_python",
      requestState: asked.result.requestState,
      inputResponses: { elicitation_create_5: { action: "decline" } },
      _meta: meta(),
    },
  });
  expect(toServer.at(-1)).toEqual({ jsonrpc: "2.0", id: 5, result: { action: "decline" } });
});
