/**
 * The MCP face of the bridge: one tool, `run_python`. Its description is paid for on every prompt of
 * every client, so it stays short; everything else is discovered from code.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import * as z from "zod";
import type { Config } from "../config/env.ts";
import { BridgeError, renderError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { Renderer } from "../render/render.ts";
import type { Session } from "../session.ts";

export const TOOL_NAME = "run_python";

export const RUN_PYTHON_DESCRIPTION =
  "Run Python 3 in a persistent sandbox with no network. Variables, imports and functions persist " +
  "between calls; top-level await works; the last expression's value is returned, like a REPL. " +
  "stdout/stderr are captured (capped). reset=true starts a fresh interpreter.";

export interface BridgeServerDeps {
  config: Config;
  session: Session;
  render: Renderer;
  log: Logger;
  version: string;
}

export function createBridgeServer(deps: BridgeServerDeps): McpServer {
  const { config, session, render, log } = deps;
  const server = new McpServer(
    { name: "mcp-code-exec", version: deps.version },
    { capabilities: { tools: {} }, instructions: undefined },
  );
  server.registerTool(
    TOOL_NAME,
    {
      description: RUN_PYTHON_DESCRIPTION,
      inputSchema: {
        code: z.string().describe("Python source"),
        timeout: z.number().optional().describe(`Seconds (default ${config.timeoutSec}, max ${config.maxTimeoutSec})`),
        reset: z.boolean().optional().describe("Fresh interpreter first"),
      },
    },
    async (args, extra) => {
      const problem = checkTimeout(args.timeout, config);
      if (problem) return { content: [{ type: "text", text: problem }], isError: true };
      try {
        const outcome = await session.run({ code: args.code, timeoutSec: args.timeout, reset: args.reset, signal: extra.signal });
        const r = render(outcome);
        return { content: [{ type: "text", text: r.text }], structuredContent: r.structured, isError: r.isError };
      } catch (err) {
        const text = renderError(err);
        log.warn("run_python failed", { error: text });
        const structured = { error: { type: err instanceof BridgeError ? err.code : "Error", message: text, traceback: "" } };
        return { content: [{ type: "text", text }], structuredContent: structured, isError: true };
      }
    },
  );
  return server;
}

function checkTimeout(timeout: number | undefined, config: Config): string | undefined {
  if (timeout === undefined) return undefined;
  if (!Number.isFinite(timeout) || timeout <= 0) return `[mcp-code-exec] timeout must be a positive number of seconds; got ${timeout}`;
  if (timeout > config.maxTimeoutSec) {
    return `[mcp-code-exec] timeout ${timeout}s is above the maximum of ${config.maxTimeoutSec}s (MCP_BRIDGE_MAX_TIMEOUT); ask for at most ${config.maxTimeoutSec}, or split the work into several calls (state persists between them)`;
  }
  return undefined;
}
