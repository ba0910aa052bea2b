/**
 * What a run may ask of the MCP client that started it, over the same connection and tied to its
 * run_python request (so a Streamable HTTP client gets them on that request's stream): questions to its
 * user (elicitation, form and URL mode), sampling, and the run's progress stream, where the code's
 * output and the upstream servers' progress go while the run lasts.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type {
  CreateMessageRequest,
  CreateMessageResult,
  ElicitRequestFormParams,
  ElicitRequestURLParams,
  ElicitResult,
  RequestId,
  ServerNotification,
} from "@modelcontextprotocol/sdk/types.js";

export interface ClientChannel {
  /** The client's name as it introduced itself (for messages). */
  readonly name: string;
  /** What the client declared it can do (read when asked: it is known only after initialize). */
  can(): { form: boolean; url: boolean; sampling: boolean };
  /** A question to the user; rejects with the SDK's errors (timeout, cancelled, refused). */
  elicit(
    params: ElicitRequestFormParams | ElicitRequestURLParams,
    opts: { signal?: AbortSignal; timeoutMs: number },
  ): Promise<ElicitResult>;
  /** Tell the client a URL-mode question it showed has been completed. */
  elicitationComplete(elicitationId: string): Promise<void>;
  createMessage(params: CreateMessageRequest["params"], opts: { signal?: AbortSignal; timeoutMs: number }): Promise<CreateMessageResult>;
  /** A line in the run's progress stream (only the latest per `key` within an interval); nothing without a progress token. */
  progress(key: string, message: string): void;
  /** The code's output, streamed as progress; undefined without a progress token. */
  readonly output: ((stream: "stdout" | "stderr", text: string) => void) | undefined;
  /** Send what is buffered; call before the result goes out. */
  flush(): Promise<void>;
  /** The call is over, or the client gave up on it: no more progress (the heartbeat stops). Call on every path, after flush. */
  end(): void;
}

export interface ClientRequestContext {
  /** The run_python request these belong to. */
  requestId: RequestId;
  progressToken?: string | number;
  sendNotification: (n: ServerNotification) => Promise<void>;
}

export function clientChannel(server: Server, ctx: ClientRequestContext): ClientChannel {
  const progress =
    ctx.progressToken === undefined ? undefined : progressSender(ctx.progressToken, ctx.sendNotification, { heartbeatMs: HEARTBEAT_MS });
  const related = { relatedRequestId: ctx.requestId };
  return {
    get name() {
      return server.getClientVersion()?.name ?? "the MCP client";
    },
    can() {
      const caps = server.getClientCapabilities();
      return { form: !!caps?.elicitation?.form, url: !!caps?.elicitation?.url, sampling: !!caps?.sampling };
    },
    elicit: (params, opts) => server.elicitInput(params, { ...related, signal: opts.signal, timeout: opts.timeoutMs }),
    elicitationComplete: async (id) => server.createElicitationCompletionNotifier(id, related)(),
    createMessage: (params, opts) =>
      server.createMessage(params, { ...related, signal: opts.signal, timeout: opts.timeoutMs }) as Promise<CreateMessageResult>,
    progress: (key, message) => progress?.note(key, message),
    output: progress?.push,
    flush: () => progress?.flush() ?? Promise.resolve(),
    end: () => progress?.end(),
  };
}

/**
 * Streams stdout/stderr lines and upstream progress as progress notifications while the code runs,
 * coalesced so a chatty loop sends at most one notification per PROGRESS_INTERVAL_MS. `progress` counts
 * the lines sent, and each heartbeat, so it only grows.
 */
const PROGRESS_INTERVAL_MS = 100;

/**
 * A run that says nothing for this long still sends progress. Clients built on the MCP SDK give up on
 * a request after 60 s (its default) unless progress resets the clock (`resetTimeoutOnProgress`, which
 * opencode sets): without a heartbeat a silent 75 s run was cancelled at 60 s, though a run may last
 * MCP_BRIDGE_MAX_TIMEOUT (120 s). Every 15 s leaves room for clients that wait less than 60 s.
 */
export const HEARTBEAT_MS = 15_000;

export function progressSender(
  token: string | number,
  send: (n: ServerNotification) => Promise<void>,
  opts: { heartbeatMs?: number } = {},
) {
  let buffered = "";
  const notes = new Map<string, string>();
  let progress = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let heartbeat: ReturnType<typeof setTimeout> | undefined;
  let ended = false;
  const started = performance.now();
  let chain: Promise<void> = Promise.resolve();
  const emit = (message: string, lines: number) => {
    if (ended) return chain;
    progress += lines;
    chain = chain.then(() =>
      send({ method: "notifications/progress", params: { progressToken: token, progress, message } }).catch(() => {}),
    );
    beatLater();
    return chain;
  };
  // Re-armed by everything sent, so a run that prints often sends no heartbeat at all.
  const beatLater = () => {
    if (heartbeat) clearTimeout(heartbeat);
    heartbeat = undefined;
    if (ended || !opts.heartbeatMs) return;
    heartbeat = setTimeout(() => {
      heartbeat = undefined;
      if (!ended) void emit(`run_python still running (${Math.round((performance.now() - started) / 1000)}s)`, 1);
    }, opts.heartbeatMs);
    (heartbeat as { unref?: () => void }).unref?.();
  };
  const flushNow = () => {
    timer = undefined;
    const parts = [buffered.replace(/\n$/, ""), ...notes.values()].filter(Boolean);
    buffered = "";
    notes.clear();
    if (!parts.length) return chain;
    const message = parts.join("\n");
    return emit(message, message.split("\n").length);
  };
  beatLater();
  return {
    push(stream: "stdout" | "stderr", text: string) {
      buffered += stream === "stderr" ? text.replace(/^(?=.)/gm, "[stderr] ") : text;
      timer ??= setTimeout(flushNow, PROGRESS_INTERVAL_MS);
    },
    note(key: string, message: string) {
      // Output before the note goes out before it: a partial line ends where the note starts.
      if (buffered && !buffered.endsWith("\n")) buffered += "\n";
      notes.set(key, message.replace(/\s+/g, " ").slice(0, 500));
      timer ??= setTimeout(flushNow, PROGRESS_INTERVAL_MS);
    },
    flush(): Promise<void> {
      if (timer) clearTimeout(timer);
      return flushNow();
    },
    end(): void {
      ended = true;
      if (timer) clearTimeout(timer);
      if (heartbeat) clearTimeout(heartbeat);
      timer = heartbeat = undefined;
    },
  };
}
