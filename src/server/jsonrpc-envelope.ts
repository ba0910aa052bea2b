/**
 * Is a parsed line a JSON-RPC 2.0 message as MCP defines it (the SDK's JSONRPCMessageSchema): a
 * request, a notification, a result or an error? Checked by hand because the first zod parse of that
 * union costs tens of milliseconds of schema set-up at start-up, on the way to the `initialize` answer;
 * test/unit/jsonrpc-envelope.test.ts holds this to the SDK's schema message by message. What the
 * message means (its params) is the SDK server's business.
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** JSON-RPC 2.0's error codes (the SDK's ErrorCode, which lives in a module too costly to load at start-up). */
export const JSONRPC_ERROR = { ParseError: -32700, InvalidRequest: -32600, MethodNotFound: -32601, InvalidParams: -32602 } as const;

export type EnvelopeCheck = { ok: true; message: JSONRPCMessage } | { ok: false; problem: string };

const REQUEST_KEYS = new Set(["jsonrpc", "id", "method", "params"]);
const NOTIFICATION_KEYS = new Set(["jsonrpc", "method", "params"]);
const RESULT_KEYS = new Set(["jsonrpc", "id", "result"]);
const ERROR_KEYS = new Set(["jsonrpc", "id", "error"]);
const RELATED_TASK = "io.modelcontextprotocol/related-task";

export function checkEnvelope(raw: unknown): EnvelopeCheck {
  const problem = envelopeProblem(raw);
  return problem === undefined ? { ok: true, message: raw as JSONRPCMessage } : { ok: false, problem };
}

function envelopeProblem(raw: unknown): string | undefined {
  if (!isObject(raw)) return "(message): expected an object";
  if (raw.jsonrpc !== "2.0") return 'jsonrpc: must be "2.0"';
  if ("method" in raw) {
    const request = "id" in raw;
    const extra = unknownKey(raw, request ? REQUEST_KEYS : NOTIFICATION_KEYS);
    if (extra !== undefined) return `${extra}: not allowed in a ${request ? "request" : "notification"}`;
    if (request && !isId(raw.id)) return "id: must be a string or an integer";
    if (typeof raw.method !== "string") return "method: must be a string";
    if (raw.params !== undefined) {
      if (!isObject(raw.params)) return "params: must be an object";
      return metaProblem(raw.params._meta, "params._meta");
    }
    return undefined;
  }
  if ("result" in raw) {
    const extra = unknownKey(raw, RESULT_KEYS);
    if (extra !== undefined) return `${extra}: not allowed in a response`;
    if (!isId(raw.id)) return "id: must be a string or an integer";
    if (!isObject(raw.result)) return "result: must be an object";
    return metaProblem(raw.result._meta, "result._meta");
  }
  if ("error" in raw) {
    const extra = unknownKey(raw, ERROR_KEYS);
    if (extra !== undefined) return `${extra}: not allowed in an error response`;
    if (raw.id !== undefined && !isId(raw.id)) return "id: must be a string or an integer";
    const error = raw.error;
    if (!isObject(error)) return "error: must be an object";
    if (!Number.isSafeInteger(error.code)) return "error.code: must be an integer";
    if (typeof error.message !== "string") return "error.message: must be a string";
    return undefined;
  }
  return "(message): neither a request, a notification nor a response (no method, result or error)";
}

function metaProblem(meta: unknown, path: string): string | undefined {
  if (meta === undefined) return undefined;
  if (!isObject(meta)) return `${path}: must be an object`;
  if (meta.progressToken !== undefined && !isId(meta.progressToken)) return `${path}.progressToken: must be a string or an integer`;
  const task = meta[RELATED_TASK];
  if (task !== undefined && !(isObject(task) && typeof task.taskId === "string")) return `${path}.${RELATED_TASK}.taskId: must be a string`;
  return undefined;
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

function isId(x: unknown): boolean {
  return typeof x === "string" || Number.isSafeInteger(x);
}

function unknownKey(o: Record<string, unknown>, allowed: Set<string>): string | undefined {
  for (const k in o) if (!allowed.has(k)) return k;
  return undefined;
}
