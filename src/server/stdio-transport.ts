/**
 * MCP over our stdin/stdout, newline-delimited JSON-RPC. Unlike the SDK's stdio transport, a message
 * over the size cap does not close the connection: it is skipped as it streams in (never held whole),
 * and the request it carried gets a JSON-RPC error naming the limit, so the session and the client
 * keep going. Lines that are not JSON or not JSON-RPC are answered the same way when their id can be
 * found. Moves bytes only; what the messages mean is the SDK server's business.
 */
import type { Readable, Writable } from "node:stream";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { checkEnvelope, JSONRPC_ERROR } from "./jsonrpc-envelope.ts";
import { RequestIdScanner } from "./request-id-scanner.ts";

export interface StdioTransportOptions {
  stdin: Readable;
  stdout: Writable;
  /** Largest message accepted, in bytes. */
  maxMessageBytes: number;
  /** Told after each message sent (the bridge's idle garbage collection counts from there). */
  onSent?: () => void;
  /** Told about every message refused, for the log. */
  onRefused?: (what: { reason: string; bytes: number; method?: string; answered: boolean }) => void;
}

export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  #opts: StdioTransportOptions;
  #chunks: Buffer[] = [];
  #size = 0;
  /** Set while skipping a message over the cap. */
  #oversized: RequestIdScanner | undefined;
  #closed = false;
  /** Requests received and not answered yet (nor cancelled by the client), by id. */
  #unanswered = new Set<string | number>();
  #allAnswered: Array<() => void> = [];
  #inputEnded = false;
  /** The input has ended (the client closed its end); told once, after a last line without a newline was read. */
  oninputend?: () => void;

  constructor(opts: StdioTransportOptions) {
    this.#opts = opts;
  }

  async start(): Promise<void> {
    this.#opts.stdin.on("data", this.#onData);
    this.#opts.stdin.on("error", this.#onError);
    this.#opts.stdin.once("end", this.#onEnd);
    this.#opts.stdin.once("close", this.#onEnd);
  }

  /** How many requests received are waiting for their answer. */
  get unanswered(): number {
    return this.#unanswered.size;
  }

  /** Settles once every request received so far has been answered (or cancelled by the client). */
  allAnswered(): Promise<void> {
    if (this.#unanswered.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#allAnswered.push(resolve));
  }

  #settle(id: unknown): void {
    if (typeof id !== "string" && typeof id !== "number") return;
    if (!this.#unanswered.delete(id) || this.#unanswered.size > 0) return;
    for (const resolve of this.#allAnswered.splice(0)) resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    this.#opts.onSent?.();
    const m = message as { id?: unknown; method?: unknown };
    if (m.method === undefined) this.#settle(m.id);
    return new Promise((resolve) => {
      if (this.#closed) return resolve();
      if (this.#opts.stdout.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.#opts.stdout.once("drain", resolve);
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#opts.stdin.off("data", this.#onData);
    this.#opts.stdin.off("error", this.#onError);
    this.#opts.stdin.off("end", this.#onEnd);
    this.#opts.stdin.off("close", this.#onEnd);
    if (this.#opts.stdin.listenerCount("data") === 0) this.#opts.stdin.pause();
    this.#chunks = [];
    this.onclose?.();
  }

  #onError = (err: Error) => this.onerror?.(err);

  #onEnd = () => {
    if (this.#inputEnded) return;
    this.#inputEnded = true;
    // A last message without its newline (`printf '...' | mcp-code-exec`) is a message all the same.
    if (this.#size > 0 || this.#oversized) this.#endOfLine();
    this.oninputend?.();
  };

  #onData = (chunk: Buffer) => {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(10, start);
      const end = nl === -1 ? chunk.length : nl;
      const piece = chunk.subarray(start, end);
      if (this.#oversized) this.#oversized.push(piece);
      else if (this.#size + piece.length > this.#opts.maxMessageBytes) {
        // Over the cap: from here on only the id is looked for; nothing more is kept.
        this.#oversized = new RequestIdScanner();
        for (const c of this.#chunks) this.#oversized.push(c);
        this.#oversized.push(piece);
        this.#chunks = [];
      } else this.#chunks.push(piece);
      this.#size += piece.length;
      if (nl === -1) break;
      this.#endOfLine();
      start = nl + 1;
    }
  };

  #endOfLine(): void {
    const size = this.#size;
    const scanner = this.#oversized;
    const line = scanner ? "" : Buffer.concat(this.#chunks, size).toString("utf8").replace(/\r$/, "");
    this.#chunks = [];
    this.#size = 0;
    this.#oversized = undefined;
    if (scanner) {
      const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;
      this.#refuse(
        scanner,
        size,
        JSONRPC_ERROR.InvalidRequest,
        `the message is ${mib(size)}, over this server's ${mib(this.#opts.maxMessageBytes)} limit (MCP_BRIDGE_MAX_MESSAGE); nothing was run. Pass large data another way: mount a folder with MCP_BRIDGE_WORKSPACE and read files from /workspace, or send the code in parts over several calls (variables persist between calls)`,
      );
      return;
    }
    if (!line.trim()) return;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (err) {
      this.#refuse(scan(line), size, JSONRPC_ERROR.ParseError, `the message is not valid JSON: ${(err as Error).message}`);
      return;
    }
    const checked = checkEnvelope(raw);
    if (!checked.ok) {
      this.#refuse(
        scan(line),
        size,
        JSONRPC_ERROR.InvalidRequest,
        `the message is not a JSON-RPC 2.0 request, notification or response: ${checked.problem}`,
      );
      return;
    }
    const m = checked.message as { id?: unknown; method?: unknown; params?: { requestId?: unknown } };
    if (typeof m.method === "string" && (typeof m.id === "string" || typeof m.id === "number")) this.#unanswered.add(m.id);
    // A request the client cancelled gets no answer (MCP): it is no longer waited for.
    if (m.method === "notifications/cancelled") this.#settle(m.params?.requestId);
    this.onmessage?.(checked.message);
  }

  /** Answer the refused message's request when it had an id (a notification gets no answer). */
  #refuse(scanner: RequestIdScanner, bytes: number, code: number, message: string): void {
    const id = scanner.id;
    const method = scanner.method;
    this.#opts.onRefused?.({ reason: message, bytes, method, answered: id !== undefined });
    if (id === undefined) return;
    void this.send({ jsonrpc: "2.0", id, error: { code, message } });
  }
}

function scan(line: string): RequestIdScanner {
  const s = new RequestIdScanner();
  s.push(new TextEncoder().encode(line));
  return s;
}
