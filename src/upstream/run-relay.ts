/**
 * The run's side of an upstream's messages about one call (see relay.ts): its questions go to the MCP
 * client that started the run, prefixed with the server's name, while the run's clock stops; sampling
 * goes there too (deprecated in the newest spec revision: forwarded as is, nothing more); progress
 * joins the run's progress stream. What the client cannot take is refused with the reason.
 */
import { ErrorCode, McpError, type Progress } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../log.ts";
import type { RunScope } from "../session/request-gate.ts";
import type { CallRelay } from "./relay.ts";

export function runRelay(run: RunScope, server: string, tool: string, callId: string, log: Logger, askTimeoutMs: number): CallRelay {
  /** Ask the client, the run's clock held; errors become answers the upstream can read. */
  const viaClient = async <T>(what: string, upstreamSignal: AbortSignal, ask: (signal: AbortSignal) => Promise<T>): Promise<T> => {
    const release = run.holdClock();
    try {
      return await ask(AbortSignal.any([run.signal, upstreamSignal]));
    } catch (err) {
      if (upstreamSignal.aborted) throw err;
      if (run.signal.aborted)
        throw new McpError(ErrorCode.InternalError, `the sandbox run that made the call ended before ${what} was answered`);
      if (err instanceof McpError && err.code === ErrorCode.RequestTimeout)
        throw new McpError(
          ErrorCode.RequestTimeout,
          `${what} got no answer within ${Math.round(askTimeoutMs / 1000)}s (MCP_BRIDGE_ASK_TIMEOUT)`,
        );
      throw new McpError(
        ErrorCode.InternalError,
        `${run.client?.name ?? "the client"} answered ${what} with an error: ${(err as Error).message}`,
      );
    } finally {
      release();
    }
  };
  const clientOrRefuse = (what: string, can: "form" | "url" | "sampling") => {
    const client = run.client;
    if (!client)
      throw new McpError(
        ErrorCode.InvalidRequest,
        `${what} cannot be relayed: mcp-code-exec is running without an MCP client (mcp-code-exec exec)`,
      );
    if (!client.can()[can]) {
      const lacks = can === "sampling" ? "sampling" : `${can}-mode elicitation`;
      throw new McpError(
        ErrorCode.InvalidRequest,
        `${what} cannot be relayed: ${client.name}, the MCP client running mcp-code-exec, does not support ${lacks}`,
      );
    }
    return client;
  };
  return {
    runId: run.runId,
    log,
    progress(p: Progress) {
      const count = `${p.progress}${p.total === undefined ? "" : `/${p.total}`}`;
      run.client?.progress(callId, `${server}.${tool}: ${p.message ? `${p.message} (${count})` : count}`);
    },
    elicit(params, signal) {
      const mode = params.mode === "url" ? "url" : "form";
      const client = clientOrRefuse(`${server}'s question for the user`, mode);
      log.info("relaying a question from the upstream", { mode });
      // Only the question itself goes on: the upstream's _meta (its progress token) and task belong to it.
      const { _meta: _m, task: _t, ...question } = params as typeof params & { task?: unknown };
      const named = { ...question, message: `${server} asks: ${params.message}` } as Parameters<typeof client.elicit>[0];
      return viaClient("the question", signal, (s) => client.elicit(named, { signal: s, timeoutMs: askTimeoutMs }));
    },
    elicitationComplete(id) {
      const client = run.client;
      if (client?.can().url) void client.elicitationComplete(id).catch(() => {});
    },
    sample(params, signal) {
      const client = clientOrRefuse(`${server}'s sampling request`, "sampling");
      log.info("relaying a sampling request from the upstream");
      const { _meta: _m, task: _t, ...request } = params as typeof params & { task?: unknown };
      return viaClient("the sampling request", signal, (s) => client.createMessage(request, { signal: s, timeoutMs: askTimeoutMs }));
    },
  };
}
