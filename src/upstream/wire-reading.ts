/**
 * Reading what a stdio upstream sends, on the proxied call's hot path, without the SDK's two zod passes:
 *
 * - the SDK's stdio ReadBuffer copies everything it holds on every chunk (Buffer.concat: quadratic in
 *   the chunks of a large result) and checks each line against the whole JSON-RPC union with zod, which
 *   the SDK's Protocol checks again, message by message, before it routes it (isJSONRPCResultResponse,
 *   isJSONRPCRequest, ...). LineBuffer keeps the chunks until a newline arrives, scans each byte once,
 *   and leaves the routing checks to the Protocol.
 * - `Client.callTool` checks the result against CallToolResultSchema with zod (a union per content
 *   block). CALL_TOOL_RESULT checks the same things a reader of the result relies on, by hand.
 *
 * Both see untrusted input: a line that is not JSON, or not a JSON-RPC object, is an error for that line
 * only; a result that is not a CallToolResult fails its call with a message saying what is wrong.
 */
import type { CallToolResult, JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { RequestIdScanner } from "../server/request-id-scanner.ts";

const NEWLINE = 10;

/** What the SDK's ReadBuffer does (append, readMessage, clear), with the same overflow message; read by stdio-client.ts. */
export class LineBuffer {
  readonly #max: number;
  #chunks: Buffer[] = [];
  #size = 0;
  /** Chunks before this index, and bytes of it before #scanAt, hold no newline. */
  #scanChunk = 0;
  #scanAt = 0;

  constructor(maxBufferSize: number) {
    this.#max = maxBufferSize;
  }

  append(chunk: Buffer): void {
    if (this.#size + chunk.length > this.#max) {
      this.clear();
      // upstream-server.ts tells an overflow by this message (the SDK's own).
      throw new Error(`ReadBuffer exceeded maximum size of ${this.#max} bytes`);
    }
    if (chunk.length === 0) return;
    this.#chunks.push(chunk);
    this.#size += chunk.length;
  }

  readMessage(): JSONRPCMessage | null {
    const chunks = this.#chunks;
    for (let c = this.#scanChunk; c < chunks.length; c++) {
      const chunk = chunks[c]!;
      const nl = chunk.indexOf(NEWLINE, c === this.#scanChunk ? this.#scanAt : 0);
      if (nl < 0) continue;
      const line = c === 0 ? chunk.subarray(0, nl) : Buffer.concat([...chunks.slice(0, c), chunk.subarray(0, nl)]);
      const rest = chunk.subarray(nl + 1);
      this.#chunks = rest.length > 0 ? [rest, ...chunks.slice(c + 1)] : chunks.slice(c + 1);
      this.#size -= line.length + 1;
      this.#scanChunk = 0;
      this.#scanAt = 0;
      return readLine(line);
    }
    this.#scanChunk = Math.max(0, chunks.length - 1);
    this.#scanAt = chunks.length > 0 ? chunks[chunks.length - 1]!.length : 0;
    return null;
  }

  clear(): void {
    this.#chunks = [];
    this.#size = 0;
    this.#scanChunk = 0;
    this.#scanAt = 0;
  }
}

/**
 * One line as a message. A line that cannot be read but names the id of an answer becomes an error
 * answer to that request, so the call waiting for it fails now with the reason instead of at its
 * timeout; any other unreadable line is an error for that line only.
 */
function readLine(line: Buffer): JSONRPCMessage {
  try {
    return parseLine(line.toString("utf8"));
  } catch (err) {
    const scan = new RequestIdScanner();
    scan.push(line);
    if (scan.id === undefined || scan.method !== undefined) throw err;
    return {
      jsonrpc: "2.0",
      id: scan.id,
      error: { code: -32700, message: `the server's answer could not be read: ${(err as Error).message.slice(0, 200)}` },
    } as JSONRPCMessage;
  }
}

function parseLine(text: string): JSONRPCMessage {
  const line = text.endsWith("\r") ? text.slice(0, -1) : text;
  const msg = JSON.parse(line) as unknown;
  if (typeof msg !== "object" || msg === null || Array.isArray(msg) || (msg as { jsonrpc?: unknown }).jsonrpc !== "2.0")
    throw new Error(`not a JSON-RPC 2.0 message: ${line.slice(0, 120)}`);
  return msg as JSONRPCMessage;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** What is wrong with one content block, or undefined when it is a block of a known type with its fields. */
function blockProblem(b: unknown): string | undefined {
  if (!isObject(b)) return "is not an object";
  const str = (k: string) => typeof b[k] === "string";
  switch (b.type) {
    case "text":
      return str("text") ? undefined : "is a text block without a string `text`";
    case "image":
    case "audio":
      return str("data") && str("mimeType") ? undefined : `is an ${b.type} block without string \`data\` and \`mimeType\``;
    case "resource_link":
      return str("uri") && str("name") ? undefined : "is a resource_link without string `uri` and `name`";
    case "resource": {
      const r = b.resource;
      if (!isObject(r) || typeof r.uri !== "string") return "is a resource block without a `resource` that has a string `uri`";
      return typeof r.text === "string" || typeof r.blob === "string"
        ? undefined
        : "is a resource block whose resource has neither `text` nor `blob`";
    }
    default:
      return `has an unknown type ${JSON.stringify(b.type)?.slice(0, 40)}`;
  }
}

/** Why `v` is not a CallToolResult, or undefined. */
export function callToolResultProblem(v: unknown): string | undefined {
  if (!isObject(v)) return "the result is not an object";
  if (v.content !== undefined) {
    if (!Array.isArray(v.content)) return "`content` is not a list";
    for (let i = 0; i < v.content.length; i++) {
      const p = blockProblem(v.content[i]);
      if (p) return `content[${i}] ${p}`;
    }
  }
  if (v.structuredContent !== undefined && !isObject(v.structuredContent)) return "`structuredContent` is not an object";
  if (v.isError !== undefined && typeof v.isError !== "boolean") return "`isError` is not true or false";
  if (v._meta !== undefined && !isObject(v._meta)) return "`_meta` is not an object";
  return undefined;
}

/**
 * A result schema for `Client.callTool` (the SDK calls `safeParse` on schemas that are not zod 4): the
 * checks above, and `content` defaulting to [] as the SDK's schema does.
 */
export const CALL_TOOL_RESULT = {
  safeParse(data: unknown): { success: true; data: CallToolResult } | { success: false; error: Error } {
    const problem = callToolResultProblem(data);
    if (problem) return { success: false, error: new Error(`the tool's result is not a CallToolResult: ${problem}`) };
    const r = data as CallToolResult;
    if (r.content === undefined) r.content = [];
    return { success: true, data: r };
  },
};
