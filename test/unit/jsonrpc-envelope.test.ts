/** The hand-written JSON-RPC envelope check accepts and refuses exactly what the SDK's schema does. */
import { describe, expect, test } from "bun:test";
import { ErrorCode, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { checkEnvelope, JSONRPC_ERROR } from "../../src/server/jsonrpc-envelope.ts";

const SAMPLES: unknown[] = [
  {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
  },
  { jsonrpc: "2.0", id: "a", method: "tools/call", params: { name: "run_python", arguments: { code: "1" }, _meta: { progressToken: 7 } } },
  { jsonrpc: "2.0", id: 2, method: "tools/list" },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 3, reason: "x" } },
  { jsonrpc: "2.0", id: 3, result: {} },
  { jsonrpc: "2.0", id: 3, result: { _meta: { progressToken: "p" }, anything: [1] } },
  { jsonrpc: "2.0", id: 4, error: { code: -32600, message: "bad", data: { x: 1 } } },
  { jsonrpc: "2.0", error: { code: -32700, message: "parse error" } },
  { jsonrpc: "2.0", id: 5, method: "x", params: { _meta: { "io.modelcontextprotocol/related-task": { taskId: "t" } } } },
  // refused
  null,
  [],
  "x",
  5,
  {},
  { jsonrpc: "1.0", id: 1, method: "tools/list" },
  { id: 1, method: "tools/list" },
  { jsonrpc: "2.0", id: null, method: "tools/list" },
  { jsonrpc: "2.0", id: 1.5, method: "tools/list" },
  { jsonrpc: "2.0", id: {}, method: "tools/list" },
  { jsonrpc: "2.0", id: 1, method: 5 },
  { jsonrpc: "2.0", id: 1, method: "x", params: null },
  { jsonrpc: "2.0", id: 1, method: "x", params: [1, 2] },
  { jsonrpc: "2.0", id: 1, method: "x", params: { _meta: { progressToken: 1.5 } } },
  { jsonrpc: "2.0", id: 1, method: "x", params: { _meta: "no" } },
  { jsonrpc: "2.0", id: 1, method: "x", params: { _meta: { "io.modelcontextprotocol/related-task": { taskId: 1 } } } },
  { jsonrpc: "2.0", id: 1, method: "x", extra: true },
  { jsonrpc: "2.0", method: "x", result: {} },
  { jsonrpc: "2.0", id: 1, result: {}, error: { code: 1, message: "m" } },
  { jsonrpc: "2.0", id: 1, result: [] },
  { jsonrpc: "2.0", id: 1, result: null },
  { jsonrpc: "2.0", result: {} },
  { jsonrpc: "2.0", id: null, error: { code: -32700, message: "m" } },
  { jsonrpc: "2.0", id: 1, error: { code: 1.5, message: "m" } },
  { jsonrpc: "2.0", id: 1, error: { code: 1, message: 2 } },
  { jsonrpc: "2.0", id: 1, error: "no" },
  { jsonrpc: "2.0", id: 2 ** 60, method: "x" },
  JSON.parse('{"jsonrpc":"2.0","id":1,"method":"x","__proto__":{"polluted":true}}'),
];

describe("checkEnvelope", () => {
  test.each(SAMPLES.map((s) => [JSON.stringify(s), s]))("%s: same verdict as the SDK's JSONRPCMessageSchema", (_label, sample) => {
    const ours = checkEnvelope(sample);
    expect(ours.ok).toBe(JSONRPCMessageSchema.safeParse(sample).success);
    if (!ours.ok) expect(ours.problem.length).toBeGreaterThan(5);
  });
});

test("our JSON-RPC error codes are the SDK's", () => {
  expect(JSONRPC_ERROR).toEqual({
    ParseError: ErrorCode.ParseError,
    InvalidRequest: ErrorCode.InvalidRequest,
    MethodNotFound: ErrorCode.MethodNotFound,
    InvalidParams: ErrorCode.InvalidParams,
  });
});
