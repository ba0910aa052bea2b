/**
 * One configured upstream MCP server, reached through the SDK's client transports. It starts on first
 * need, stays warm, is restarted after a crash (the call in flight fails with a clear error, the next
 * one works) and is closed with the bridge.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CreateMessageRequestSchema,
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListToolsResultSchema,
  LoggingMessageNotificationSchema,
  McpError,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { describeAuthFailure, type UpstreamAuth } from "../auth/upstream-auth.ts";
import type { ServerEntry } from "../config/servers.ts";
import type { ErrorKind } from "../sandbox/protocol.ts";
import type { Logger } from "../log.ts";
import type { EarlyStart, EarlyUpstreams } from "./early-upstreams.ts";
import type { UpstreamProcesses } from "./processes.ts";
import { StdioClient, stdioLaunch, StdioProcess } from "./stdio-client.ts";
import { Deadline } from "../session/deadline.ts";
import { CredentialScrubber, TooDeepError } from "./credential-scrub.ts";
import { gateTransport, NotificationGate } from "./notification-gate.ts";
import { InFlightCalls, type CallRelay } from "./relay.ts";
import { CALL_TOOL_RESULT } from "./wire-reading.ts";

export type { CallRelay } from "./relay.ts";

/**
 * How long the failure of a start made ahead of need (warm()) is kept for the use it was made for:
 * longer than any sandbox start (the run that asked waits for its sandbox first).
 */
const HELD_FAILURE_MS = 60_000;

/** The SDK's own request timeout is not used for tool calls (ours pauses while a person answers). */
const NO_SDK_TIMEOUT = 2 ** 31 - 1;

export type UpstreamStatus = "stopped" | "starting" | "running" | "crashed";

export class UpstreamError extends Error {
  /** Read by the sandbox to pick the Python exception class (src/sandbox/protocol.ts). */
  readonly kind: ErrorKind;
  readonly details: Record<string, unknown>;
  constructor(kind: ErrorKind, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = "UpstreamError";
    this.kind = kind;
    this.details = details;
  }
}

export interface UpstreamOptions {
  log: Logger;
  version: string;
  connectTimeoutMs: number;
  /** Called when the server says its tool list changed, or after a fresh list was fetched. */
  onTools: (tools: Tool[]) => void;
  /** Headers, headersHelper and OAuth for remote servers; without it only static headers are sent. */
  auth?: UpstreamAuth;
  /** Told about each server process started and ended (so none outlives the bridge). */
  processes?: UpstreamProcesses;
  /** Servers started as the first call arrived: the first start of this one takes its process. */
  early?: EarlyUpstreams;
}

const STDERR_TAIL = 4096;
/** Largest message read from a stdio server (the SDK's default is 10 MiB). */
const MAX_UPSTREAM_MESSAGE = 24 * 1024 * 1024;
/** What servers on the official SDKs read in one message by default (their stdio ReadBuffer): over it, they hang up. */
const SDK_SERVER_READ_LIMIT = 10 * 1024 * 1024;

/** Why a server may have hung up on a call: its arguments were more than such a server reads. */
function largeRequestHint(args: Record<string, unknown>): string {
  let bytes = 0;
  try {
    bytes = Buffer.byteLength(JSON.stringify(args));
  } catch {
    return "";
  }
  if (bytes <= SDK_SERVER_READ_LIMIT * 0.9) return "";
  return `; the call's arguments were ${(bytes / 1048576).toFixed(1)} MiB, and MCP servers built on the official SDKs hang up on a message over ${SDK_SERVER_READ_LIMIT / 1048576} MiB: pass less at once (a path or a URL instead of the content, or several calls)`;
}

export class UpstreamServer {
  readonly entry: ServerEntry;
  #opts: UpstreamOptions;
  #client: Client | undefined;
  #connecting: Promise<Client> | undefined;
  #stderr = "";
  #status: UpstreamStatus = "stopped";
  #restarts = 0;
  #lastError: string | undefined;
  #closed = false;
  /** The last connection closed because the server sent a message over MAX_UPSTREAM_MESSAGE. */
  #overflowed = false;
  /** Calls in flight, so the server's questions, progress and logs reach the run that made them. */
  #inFlight: InFlightCalls;
  /** The credentials sent to this server, removed from what it sends back. */
  #scrub = new CredentialScrubber();
  #refreshing = false;
  #refreshAgain = false;
  /** A start made ahead of need (warm()), and whether a use has joined it. */
  #warming: { promise: Promise<Client>; joined: boolean } | undefined;
  /** A start made ahead of need failed unheard: the next use hears this failure instead of starting it again. */
  #held: { error: unknown; until: number } | undefined;

  constructor(entry: ServerEntry, opts: UpstreamOptions) {
    this.entry = entry;
    this.#opts = opts;
    this.#inFlight = new InFlightCalls(entry.name);
    this.#scrub.addTransport(entry.transport);
  }

  get status(): UpstreamStatus {
    return this.#status;
  }

  get restarts(): number {
    return this.#restarts;
  }

  get lastError(): string | undefined {
    return this.#lastError && this.#scrub.text(this.#lastError);
  }

  /** One refresh at a time: changes announced during one are taken by one more after it. */
  async #refreshTools(): Promise<void> {
    if (this.#refreshing) {
      this.#refreshAgain = true;
      return;
    }
    this.#refreshing = true;
    try {
      do {
        this.#refreshAgain = false;
        await this.listTools().catch((err) =>
          this.#opts.log.warn("tool list refresh failed", { server: this.entry.name, error: String(err) }),
        );
      } while (this.#refreshAgain && !this.#closed);
    } finally {
      this.#refreshing = false;
    }
  }

  /** The server's tools (every page), without any credential the bridge sends it. */
  async listTools(): Promise<Tool[]> {
    try {
      return await this.#listTools();
    } catch (err) {
      throw this.#scrubbed(err);
    }
  }

  async #listTools(): Promise<Tool[]> {
    const client = await this.#connect();
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      // A plain tools/list: Client.listTools also compiles a JSON Schema validator for each output schema
      // (~20 ms of CPU for the first, right as a first call's proxied call is made), to check results
      // that a tool list read from the cache would not have checked either (sandbox code reads them).
      const page = await client.request({ method: "tools/list", params: cursor ? { cursor } : {} }, ListToolsResultSchema, {
        timeout: this.#opts.connectTimeoutMs,
      });
      tools.push(...this.#scrub.deep(page.tools));
      cursor = page.nextCursor;
    } while (cursor && tools.length < 10_000);
    this.#opts.onTools(tools);
    return tools;
  }

  /**
   * Call a tool. `signal` is the run's: when it aborts, the SDK sends notifications/cancelled with this
   * call's own request id. `relay` carries the server's questions, progress and logs to the run. The
   * timeout restarts on progress (never past five times itself) and stops while a person answers the
   * server's question.
   */
  async callTool(
    tool: string,
    args: Record<string, unknown>,
    timeoutMs: number,
    signal?: AbortSignal,
    relay?: CallRelay,
    traceparent?: string,
  ): Promise<CallToolResult> {
    // Whatever comes back, result or error, loses the credentials the bridge sent (credential-scrub.ts).
    try {
      return this.#scrub.deep(await this.#callTool(tool, args, timeoutMs, signal, relay, traceparent));
    } catch (err) {
      if (err instanceof TooDeepError)
        throw new UpstreamError(
          "protocol",
          `${this.entry.name}.${tool} returned a result ${err.message}, which the bridge does not pass on`,
          {
            server: this.entry.name,
            tool,
          },
        );
      throw this.#scrubbed(err);
    }
  }

  /** `err` with its message scrubbed (the same error object: its class and kind still tell what it was). */
  #scrubbed(err: unknown): unknown {
    if (err instanceof Error && !this.#scrub.empty) err.message = this.#scrub.text(err.message);
    return err;
  }

  async #callTool(
    tool: string,
    args: Record<string, unknown>,
    timeoutMs: number,
    signal?: AbortSignal,
    relay?: CallRelay,
    traceparent?: string,
  ): Promise<CallToolResult> {
    const client = await this.#connect();
    // The SDK never detaches its abort listener, so handing it the run's signal would send
    // notifications/cancelled for every finished call when the run ends. A per-call signal, linked to
    // the run's only while the call is in flight, cancels what is still running and nothing else.
    const local = new AbortController();
    const deadline = new Deadline(timeoutMs, timeoutMs * 5);
    let timedOut = false;
    void deadline.expired.then(() => {
      timedOut = true;
      local.abort(new McpError(ErrorCode.RequestTimeout, `no answer within ${Math.round(timeoutMs / 1000)}s`));
    });
    const onAbort = () => local.abort(signal?.reason ?? new Error("the run ended"));
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
    const done = this.#inFlight.add({ relay, deadline });
    try {
      const params = traceparent ? { name: tool, arguments: args, _meta: { traceparent } } : { name: tool, arguments: args };
      return (await client.callTool(params, CALL_TOOL_RESULT as unknown as Parameters<Client["callTool"]>[1], {
        timeout: NO_SDK_TIMEOUT,
        signal: local.signal,
        onprogress: (p) => {
          deadline.restart();
          relay?.progress(this.#scrub.deep(p));
        },
      })) as CallToolResult;
    } catch (err) {
      const message = (err as Error).message ?? String(err);
      const authFailure = describeAuthFailure(err, this.entry);
      if (authFailure) throw new UpstreamError(authFailure.kind, authFailure.message, { server: this.entry.name, tool });
      if (timedOut) {
        throw new UpstreamError(
          "timeout",
          `${this.entry.name}.${tool} did not answer within ${Math.round(timeoutMs / 1000)}s (MCP_BRIDGE_TOOL_TIMEOUT)`,
          { server: this.entry.name, tool },
        );
      }
      if (signal?.aborted) {
        throw new UpstreamError("cancelled", `${this.entry.name}.${tool} was cancelled: the run that made it ended`, {
          server: this.entry.name,
          tool,
        });
      }
      if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
        throw new UpstreamError("timeout", `${this.entry.name}.${tool} did not answer within ${Math.round(timeoutMs / 1000)}s`, {
          server: this.entry.name,
          tool,
        });
      }
      if (err instanceof McpError && err.code === ErrorCode.InvalidParams) {
        throw new UpstreamError("invalid_arguments", `${this.entry.name}.${tool} refused its arguments: ${message}`, {
          server: this.entry.name,
          tool,
        });
      }
      if (this.#status !== "running") {
        if (this.#overflowed) {
          throw new UpstreamError(
            "protocol",
            `${this.entry.name}.${tool} sent a message over ${MAX_UPSTREAM_MESSAGE / 1048576} MiB, more than the bridge reads from a server; ask it for less (a page, a filter, a limit). The server was restarted`,
            { server: this.entry.name, tool },
          );
        }
        throw new UpstreamError(
          "crashed",
          `server ${this.entry.name} stopped during the call to ${tool}${this.#stderrHint()}${largeRequestHint(args)}; it will be restarted on the next call`,
          { server: this.entry.name, tool },
        );
      }
      throw new UpstreamError("protocol", `${this.entry.name}.${tool} failed: ${message}`, { server: this.entry.name, tool });
    } finally {
      done();
      deadline.cancel();
      signal?.removeEventListener("abort", onAbort);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client ?? (await this.#connecting?.catch(() => undefined));
    this.#client = undefined;
    this.#status = "stopped";
    await client?.close().catch(() => {});
  }

  /**
   * Start the server now, ahead of its first use (a run that names it is waiting for its sandbox). A
   * start that fails is not made twice: the use it was made for hears the same failure, as if it had
   * started the server itself (unless a use joined the start and heard it already). `listTools`: its
   * tool list is fetched too once it is up (what a run's proxies ask first, when no cache has it).
   * Settles (never rejects) once the start has ended and its failure, if any, is kept.
   */
  warm(opts: { listTools?: boolean } = {}): Promise<void> {
    if (this.#closed || this.#client || this.#connecting || (this.#held && Date.now() < this.#held.until)) return Promise.resolve();
    const warming = { promise: this.#connect(), joined: false };
    this.#warming = warming;
    return warming.promise.then(
      () => {
        if (this.#warming === warming) this.#warming = undefined;
        if (opts.listTools) this.listTools().catch(() => {});
      },
      (error: unknown) => {
        if (this.#warming !== warming) return;
        this.#warming = undefined;
        if (!warming.joined) this.#held = { error, until: Date.now() + HELD_FAILURE_MS };
      },
    );
  }

  #connect(): Promise<Client> {
    if (this.#closed) return Promise.reject(new UpstreamError("closed", `server ${this.entry.name} is shut down`));
    if (this.#client) return Promise.resolve(this.#client);
    const held = this.#held;
    this.#held = undefined;
    if (held && !this.#connecting && Date.now() < held.until) return Promise.reject(held.error);
    if (this.#connecting && this.#warming?.promise === this.#connecting) this.#warming.joined = true;
    this.#connecting ??= this.#start().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  async #start(): Promise<Client> {
    const { log } = this.#opts;
    if (this.#status === "crashed") this.#restarts++;
    this.#status = "starting";
    this.#stderr = "";
    // Questions and sampling are relayed to the MCP client of the run whose call is in flight, and
    // refused with a reason when that client cannot take them (relay.ts).
    const client = new Client(
      { name: "mcp-code-exec", version: this.#opts.version },
      { capabilities: { elicitation: { form: {}, url: {} }, sampling: {} } },
    );
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      log.info("upstream tool list changed", { server: this.entry.name });
      await this.#refreshTools();
    });
    client.setRequestHandler(ElicitRequestSchema, (req, extra) => this.#inFlight.elicit(this.#scrub.deep(req.params), extra.signal));
    client.setRequestHandler(CreateMessageRequestSchema, (req, extra) => this.#inFlight.sample(this.#scrub.deep(req.params), extra.signal));
    client.setNotificationHandler(ElicitationCompleteNotificationSchema, async (n) =>
      this.#inFlight.elicitationComplete(n.params.elicitationId),
    );
    client.setNotificationHandler(LoggingMessageNotificationSchema, async (n) => this.#inFlight.log(this.#scrub.deep(n.params), log));
    this.#overflowed = false;
    client.onerror = (err) => {
      // The SDK's stdio transport closes the connection on a message over its buffer.
      if (/ReadBuffer exceeded/.test(String(err?.message ?? err))) this.#overflowed = true;
    };
    client.onclose = () => {
      if (this.#client === client) this.#client = undefined;
      if (!this.#closed && this.#status === "running") {
        this.#status = "crashed";
        this.#lastError = `exited${this.#stderrHint()}`;
        log.warn("upstream server stopped", { server: this.entry.name, stderr: this.#scrub.text(this.#stderr.slice(-500)) });
      }
    };
    let t0 = performance.now();
    // Started as the call that names it arrived (early-upstreams.ts, which logged its start): taken once.
    const early = this.entry.transport.type === "stdio" ? this.#opts.early?.claim(this.entry.name) : undefined;
    if (!early) log.debug("starting upstream server", { server: this.entry.name });
    try {
      // What the server sends unasked is bounded before the SDK handles it (notification-gate.ts).
      const raw = await this.#transport(early);
      const transport = gateTransport(raw, new NotificationGate(this.entry.name, log));
      await client.connect(transport, { timeout: this.#opts.connectTimeoutMs });
      // A process started before this start began (early-upstreams.ts) is timed from its spawn.
      if (raw instanceof StdioClient && raw.process && raw.process.startedAt < t0) t0 = raw.process.startedAt;
    } catch (err) {
      this.#status = "crashed";
      await client.close().catch(() => {});
      const msg = (err as Error).message ?? String(err);
      const authFailure = describeAuthFailure(err, this.entry);
      this.#lastError = authFailure?.message ?? msg;
      if (authFailure) throw new UpstreamError(authFailure.kind, authFailure.message, { server: this.entry.name });
      throw new UpstreamError(
        "start_failed",
        `server ${this.entry.name} did not start: ${msg}${this.#stderrHint()} (defined in ${this.entry.source})`,
        { server: this.entry.name },
      );
    }
    this.#status = "running";
    this.#client = client;
    log.info("upstream server connected", { server: this.entry.name, ms: Math.round(performance.now() - t0) });
    return client;
  }

  async #transport(early?: Promise<EarlyStart>): Promise<Transport> {
    const t = this.entry.transport;
    if (t.type === "stdio") {
      const transport = new StdioClient(async () => {
        const { launch, process } = early ? await early : { launch: await stdioLaunch(t), process: undefined };
        this.#scrub.addTransport({ ...t, env: launch.fromPipe, args: [] });
        if (launch.foundIn)
          this.#opts.log.info("upstream command not on PATH, found elsewhere", {
            server: this.entry.name,
            command: t.command,
            found_in: launch.foundIn,
          });
        return process ?? new StdioProcess(launch);
      }, MAX_UPSTREAM_MESSAGE);
      transport.stderr.on("data", (d: Buffer) => {
        this.#stderr = (this.#stderr + d.toString()).slice(-STDERR_TAIL);
      });
      const processes = this.#opts.processes;
      if (processes) {
        // The process exists once start() returns, before the server has answered anything.
        const start = transport.start.bind(transport);
        transport.start = async () => {
          await start();
          const pid = transport.pid;
          if (pid === null) return;
          processes.started(pid);
          const onclose = transport.onclose;
          transport.onclose = () => {
            processes.ended(pid);
            onclose?.();
          };
        };
      }
      return transport;
    }
    if (!this.#opts.auth) {
      const requestInit = { headers: t.headers };
      return t.type === "sse"
        ? new SSEClientTransport(new URL(t.url), { requestInit })
        : new StreamableHTTPClientTransport(new URL(t.url), { requestInit });
    }
    // Headers reach only the server's origin (through `fetch`); the OAuth tokens only the provider.
    const { fetch, authProvider } = await this.#opts.auth.connect(this.entry, (headers) => this.#scrub.addHeaders(headers));
    return t.type === "sse"
      ? new SSEClientTransport(new URL(t.url), { fetch, authProvider })
      : new StreamableHTTPClientTransport(new URL(t.url), { fetch, authProvider });
  }

  #stderrHint(): string {
    const tail = this.#stderr.trim().split("\n").slice(-3).join(" | ");
    return tail ? ` (stderr: ${tail.slice(0, 400)})` : "";
  }
}
