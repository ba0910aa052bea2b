/**
 * The MCP face of the bridge: one tool, `run_python`. Its description is paid for on every prompt of
 * every client, so it stays short; everything else is discovered from code.
 */
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ServerNotification } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";
import type { Config } from "../config/env.ts";
import { BridgeError, renderError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { attachments, type Renderer } from "../render/render.ts";
import type { Metrics } from "../metrics.ts";
import type { Session } from "../session/session.ts";
import type { UpstreamPool } from "../upstream/pool.ts";
import { checkRunRequest } from "./request-checks.ts";
import { capabilitySummary } from "../upstream/sandbox-rpc.ts";

export const TOOL_NAME = "run_python";

export const RUN_PYTHON_DESCRIPTION =
  "Run Python 3 in a persistent sandbox (no network). State persists across calls; top-level await " +
  "works; the last expression's value is returned. Tools of other MCP servers are callable from code: " +
  "pass servers=[names] to load them, then `await mcp_<name>.<tool>(**kwargs)`. Discover with " +
  "`from mcp import runtime`: runtime.list_servers_sync(), runtime.search_tool_docs_sync('what you " +
  "need'), runtime.query_tool_docs_sync(server, tool, detail='signature'), help(mcp_<name>.<tool>). " +
  "Failed calls raise McpToolError. Loop, retry and filter in code; print only what matters.";

export const CAPABILITIES_URI = "resource://mcp-code-exec/capabilities";
export const STATS_URI = "resource://mcp-code-exec/stats";

const CHECKLIST = [
  "Checklist:",
  "1. runtime.search_tool_docs_sync('what you need') to find tools across every server.",
  "2. runtime.query_tool_docs_sync(server, tool, detail='signature') for the exact arguments.",
  "3. run_python(servers=[server], code=...) and await mcp_<alias>.<tool>(...); use asyncio.gather for many calls.",
  "4. Keep intermediate data in variables; print summaries, not raw dumps.",
].join("\n");

export interface BridgeServerDeps {
  config: Config;
  session: Session;
  render: Renderer;
  log: Logger;
  version: string;
  pool: () => UpstreamPool;
  metrics?: Metrics;
}

export function createBridgeServer(deps: BridgeServerDeps): McpServer {
  const { config, session, render, log } = deps;
  const server = new McpServer(
    { name: "mcp-code-exec", version: deps.version },
    { capabilities: { tools: {}, resources: {} } },
  );
  server.registerTool(
    TOOL_NAME,
    {
      description: RUN_PYTHON_DESCRIPTION,
      inputSchema: {
        code: z.string().describe("Python source"),
        timeout: z.number().optional().describe(`Seconds (default ${config.timeoutSec}, max ${config.maxTimeoutSec})`),
        reset: z.boolean().optional().describe("Fresh interpreter first"),
        servers: z.array(z.string()).optional().describe("MCP servers to load"),
      },
    },
    async (args, extra) => {
      const problem = checkRunRequest(args, config, deps.pool);
      if (problem) return { content: [{ type: "text", text: problem }], isError: true };
      try {
        const progressToken = extra._meta?.progressToken;
        const progress = progressToken === undefined ? undefined : progressSender(progressToken, extra.sendNotification);
        const outcome = await session.run({
          code: args.code,
          timeoutSec: args.timeout,
          reset: args.reset,
          servers: args.servers,
          signal: extra.signal,
          onOutput: progress?.push,
        });
        await progress?.flush();
        const r = render(outcome);
        return { content: [{ type: "text", text: r.text }, ...attachments(outcome)], structuredContent: r.structured, isError: r.isError };
      } catch (err) {
        const text = renderError(err);
        log.warn("run_python failed", { error: text });
        const structured = { error: { type: err instanceof BridgeError ? err.code : "Error", message: text, traceback: "" } };
        return { content: [{ type: "text", text }], structuredContent: structured, isError: true };
      }
    },
  );
  server.registerResource(
    "capabilities",
    CAPABILITIES_URI,
    { description: "What run_python's sandbox offers: helpers, configured servers, a checklist", mimeType: "text/plain" },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: `${capabilitySummary(deps.pool(), session.loadedServers)}\n\n${CHECKLIST}` }] }),
  );
  // Saved skills (runtime.save_skill), one resource each, as in the MCP Skills extension.
  server.registerResource(
    "skill",
    new ResourceTemplate("skill://{name}", {
      list: async () => ({
        resources: deps.pool().skills.list().map((s) => ({ uri: `skill://${s.name}`, name: s.name, description: s.description, mimeType: "text/x-python" })),
      }),
    }),
    { description: "A skill saved with runtime.save_skill: its description and Python source", mimeType: "text/x-python" },
    async (uri, { name }) => {
      const skill = deps.pool().skills.get(String(name));
      if (!skill) throw new Error(`no skill named ${JSON.stringify(String(name))}; list them with resources/list or \`mcp-code-exec skills list\``);
      return { contents: [{ uri: uri.href, mimeType: "text/x-python", text: `"""${skill.description}"""\n\n${skill.source}` }] };
    },
  );
  if (deps.metrics) {
    const metrics = deps.metrics;
    server.registerResource(
      "stats",
      STATS_URI,
      { description: "Counters of this bridge: runs, errors, timeouts, container starts, upstream restarts, proxied-call latency", mimeType: "application/json" },
      async (uri) => ({ contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(metrics.snapshot(), null, 2) }] }),
    );
  }
  return server;
}

/**
 * Streams stdout/stderr lines as progress notifications while the code runs, coalesced so a chatty
 * loop sends at most one notification per PROGRESS_INTERVAL_MS.
 */
const PROGRESS_INTERVAL_MS = 100;

function progressSender(token: string | number, send: (n: ServerNotification) => Promise<void>) {
  let buffered = "";
  let lines = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let chain: Promise<void> = Promise.resolve();
  const flushNow = () => {
    timer = undefined;
    if (!buffered) return chain;
    const message = buffered.replace(/\n$/, "");
    buffered = "";
    lines += message.split("\n").length;
    chain = chain.then(() => send({ method: "notifications/progress", params: { progressToken: token, progress: lines, message } }).catch(() => {}));
    return chain;
  };
  return {
    push(stream: "stdout" | "stderr", text: string) {
      buffered += stream === "stderr" ? text.replace(/^(?=.)/gm, "[stderr] ") : text;
      timer ??= setTimeout(flushNow, PROGRESS_INTERVAL_MS);
    },
    flush(): Promise<void> {
      if (timer) clearTimeout(timer);
      return flushNow();
    },
  };
}
