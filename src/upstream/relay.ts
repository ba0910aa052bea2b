/**
 * What an upstream server sends while one of our calls to it is in flight, carried to the run that made
 * the call: its questions for the user (elicitation) and sampling requests, its progress and its log
 * messages. Over stdio nothing in a server's request says which of our calls it is about, so a request
 * goes to the run whose calls are in flight; with calls from several runs in flight it is refused
 * rather than shown to the wrong person. While a question is open, the calls' timeouts stop.
 */
import {
  ErrorCode,
  McpError,
  type CreateMessageRequest,
  type CreateMessageResult,
  type ElicitRequest,
  type ElicitResult,
  type LoggingMessageNotification,
  type Progress,
} from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../log.ts";
import type { Deadline } from "../session/deadline.ts";

/** The run's side of one call: where the upstream's messages about it go. */
export interface CallRelay {
  /** The run that made the call. */
  readonly runId: string;
  /** The call's logger (its lines carry the run and call ids). */
  readonly log: Logger;
  progress(p: Progress): void;
  /** Ask the run's user (form or URL mode); rejects with the reason when that cannot be done. */
  elicit(params: ElicitRequest["params"], signal: AbortSignal): Promise<ElicitResult>;
  /** The upstream says a URL-mode question it asked is done. */
  elicitationComplete(elicitationId: string): void;
  sample(params: CreateMessageRequest["params"], signal: AbortSignal): Promise<CreateMessageResult>;
}

interface Call {
  relay?: CallRelay;
  deadline: Deadline;
}

const MAX_LOG_DATA = 2_000;

export class InFlightCalls {
  #calls = new Set<Call>();

  constructor(readonly server: string) {}

  /** Track a call until the returned function is called. */
  add(call: Call): () => void {
    this.#calls.add(call);
    return () => this.#calls.delete(call);
  }

  async elicit(params: ElicitRequest["params"], signal: AbortSignal): Promise<ElicitResult> {
    const { relay, calls } = this.#owner("a question for the user (elicitation/create)");
    return held(calls, () => relay.elicit(params, signal));
  }

  async sample(params: CreateMessageRequest["params"], signal: AbortSignal): Promise<CreateMessageResult> {
    const { relay, calls } = this.#owner("a sampling request (sampling/createMessage)");
    return held(calls, () => relay.sample(params, signal));
  }

  elicitationComplete(elicitationId: string): void {
    for (const c of this.#calls) c.relay?.elicitationComplete(elicitationId);
  }

  /** An upstream log message, into our log with the run and call ids when exactly one call is in flight. */
  log(params: LoggingMessageNotification["params"], fallback: Logger): void {
    const relays = [...this.#calls].map((c) => c.relay).filter((r): r is CallRelay => r !== undefined);
    const log =
      relays.length === 1
        ? relays[0]!.log
        : fallback.child({ server: this.server, runs: [...new Set(relays.map((r) => r.runId))].join(",") || undefined });
    const text = typeof params.data === "string" ? params.data : safeJson(params.data);
    const fields = {
      upstream_level: params.level,
      logger: params.logger,
      data: text.length > MAX_LOG_DATA ? `${text.slice(0, MAX_LOG_DATA)}…` : text,
    };
    const level = params.level;
    if (level === "debug") log.debug("upstream log", fields);
    else if (level === "info" || level === "notice") log.info("upstream log", fields);
    else if (level === "warning") log.warn("upstream log", fields);
    else log.error("upstream log", fields);
  }

  #owner(what: string): { relay: CallRelay; calls: Call[] } {
    const calls = [...this.#calls].filter((c) => c.relay);
    if (!calls.length) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `mcp-code-exec relays ${what} only while sandbox code waits on a tool call to ${this.server}, and none is in flight`,
      );
    }
    const runs = new Set(calls.map((c) => c.relay!.runId));
    if (runs.size > 1) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `mcp-code-exec cannot relay ${what}: calls from ${runs.size} runs are in flight to ${this.server}, and nothing tells which one it is about`,
      );
    }
    return { relay: calls[calls.length - 1]!.relay!, calls };
  }
}

/** Stop the calls' timeouts while a person is being asked. */
async function held<T>(calls: Call[], ask: () => Promise<T>): Promise<T> {
  const releases = calls.map((c) => c.deadline.hold());
  try {
    return await ask();
  } finally {
    for (const r of releases) r();
  }
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}
