/**
 * JSON-RPC errors as they go on the wire: a spec code and a plain message. The SDK's McpError puts
 * "MCP error <code>:" into its message, and clients add the same prefix again when they rebuild it, so
 * handlers throw WireError instead: the client shows "MCP error -32602: <our message>" once.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  isJSONRPCRequest,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  ReadResourceRequestSchema,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";

/** MCP's code for a resource that does not exist (spec: Resources, Error Handling). */
export const RESOURCE_NOT_FOUND = -32002;

export class WireError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.name = "WireError";
    this.code = code;
  }
}

/** The SDK schema of every request this server answers; their params are checked before dispatch. */
const REQUEST_SCHEMAS = {
  initialize: InitializeRequestSchema,
  ping: PingRequestSchema,
  "tools/list": ListToolsRequestSchema,
  "tools/call": CallToolRequestSchema,
  "resources/list": ListResourcesRequestSchema,
  "resources/templates/list": ListResourceTemplatesRequestSchema,
  "resources/read": ReadResourceRequestSchema,
} as const;

type Issue = { path: PropertyKey[]; message: string };

/**
 * Malformed params answered with -32602 and `path: message` lines. Without this the SDK answers them
 * with -32603 (internal error) and a JSON dump of the validation issues.
 */
export function invalidParams(message: JSONRPCMessage): JSONRPCMessage | undefined {
  if (!isJSONRPCRequest(message)) return undefined;
  const schema = REQUEST_SCHEMAS[message.method as keyof typeof REQUEST_SCHEMAS];
  if (!schema) return undefined;
  const parsed = schema.safeParse(message);
  if (parsed.success) return undefined;
  const issues = (parsed.error as { issues: Issue[] }).issues.map(
    (i) => `${i.path.map(String).join(".") || "params"}: ${i.message.replace(/^Invalid input: /, "")}`,
  );
  return {
    jsonrpc: "2.0",
    id: message.id,
    error: { code: ErrorCode.InvalidParams, message: `invalid params for ${message.method}: ${issues.join("; ")}` },
  };
}

/** The transport, with requests whose params do not parse answered here instead of reaching the server. */
export function guardParams(inner: Transport): Transport {
  const outer = {
    start: () => inner.start(),
    send: (m: JSONRPCMessage, o?: Parameters<Transport["send"]>[1]) => inner.send(m, o),
    close: () => inner.close(),
    setProtocolVersion: (v: string) => inner.setProtocolVersion?.(v),
  } as Transport;
  Object.defineProperties(outer, {
    sessionId: { get: () => inner.sessionId },
    onclose: { get: () => inner.onclose, set: (h) => void (inner.onclose = h) },
    onerror: { get: () => inner.onerror, set: (h) => void (inner.onerror = h) },
    onmessage: {
      get: () => inner.onmessage,
      set: (handler: Transport["onmessage"]) => {
        inner.onmessage =
          handler &&
          ((message, extra) => {
            const refusal = invalidParams(message);
            if (refusal) inner.send(refusal).catch((err) => inner.onerror?.(err as Error));
            else handler(message, extra);
          });
      },
    },
  });
  return outer;
}
