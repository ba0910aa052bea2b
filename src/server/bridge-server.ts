/**
 * The MCP face of the bridge: one tool, `run_python`. Its description is paid for on every prompt of
 * every client, so it stays short; everything else is discovered from code.
 *
 * Built on the SDK's low-level Server so that what we advertise is what we do: no `listChanged` (the
 * tool and resource lists never change), spec error codes with plain messages (see wire.ts), and
 * `structuredContent` only when MCP_BRIDGE_STRUCTURED_CONTENT asks for it (docs/clients.md: "What the model sees").
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import type { Config } from "../config/env.ts";
import { BridgeError, renderError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { attachments, type Renderer } from "../render/render.ts";
import type { Metrics } from "../metrics.ts";
import { SessionError, type Sessions } from "../session/sessions.ts";
import { NO_TELEMETRY, parseTraceparent, type Telemetry } from "../telemetry/telemetry.ts";
import type { UpstreamPool } from "../upstream/pool.ts";
import { clientChannel } from "./client-requests.ts";
import { checkRunRequest } from "./request-checks.ts";
import { capabilitySummary } from "../upstream/sandbox-rpc.ts";
import { type Handshake, runPythonArgs, TOOL_NAME } from "./handshake.ts";
import { lazyJsonSchemaValidator } from "./lazy-validator.ts";
import { RESOURCE_NOT_FOUND, WireError } from "./wire.ts";

export const CAPABILITIES_URI = "resource://mcp-code-exec/capabilities";
export const STATS_URI = "resource://mcp-code-exec/stats";
const SKILL_SCHEME = "skill://";

const CHECKLIST = [
  "Checklist:",
  "1. runtime.search_tool_docs_sync('what you need') to find tools across every server.",
  "2. runtime.query_tool_docs_sync(server, tool, detail='signature') for the exact arguments.",
  "3. run_python(servers=[server], code=...) and await mcp_<alias>.<tool>(...); use asyncio.gather for many calls.",
  "4. Keep intermediate data in variables; print summaries, not raw dumps.",
].join("\n");

export interface BridgeServerDeps {
  config: Config;
  /** Python sessions by handle (session/sessions.ts). */
  sessions: Sessions;
  /** Who calls through this server: "local" over stdio, the signed-in principal over HTTP. */
  principal: string;
  /** This connection, whose default session a call without `session` uses. */
  connection: string;
  render: Renderer;
  log: Logger;
  /** What the server says about itself (tool, capabilities, instructions), also used by the handshake front. */
  handshake: Handshake;
  pool: () => UpstreamPool;
  metrics?: Metrics;
  /** Every result names its session (a bridge serving many users); else only when the call named one. */
  showSessions?: boolean;
  /** Refuses a run_python call the caller may not make now (a quota), with why and when to retry. */
  admit?: () => string | undefined;
  telemetry?: Telemetry;
  /** Told of the servers each run_python call names (the bridge remembers them for the next session). */
  onServersNamed?: (names: readonly string[]) => void;
}

export function createBridgeServer(deps: BridgeServerDeps): Server {
  const { config, sessions, render, log } = deps;
  const telemetry = deps.telemetry ?? NO_TELEMETRY;
  const argsSchema = runPythonArgs(config);
  const { tool } = deps.handshake;
  const resources = [
    {
      uri: CAPABILITIES_URI,
      name: "capabilities",
      description: "What run_python's sandbox offers: helpers, configured servers, a checklist",
      mimeType: "text/plain",
    },
    ...(deps.metrics
      ? [
          {
            uri: STATS_URI,
            name: "stats",
            description: "Counters of this bridge: runs, errors, timeouts, container starts, upstream restarts, proxied-call latency",
            mimeType: "application/json",
          },
        ]
      : []),
  ];
  const server = new Server(deps.handshake.serverInfo, {
    capabilities: deps.handshake.capabilities,
    instructions: deps.handshake.instructions,
    jsonSchemaValidator: lazyJsonSchemaValidator(),
  });
  const result = (
    text: string,
    isError: boolean,
    structured: Record<string, unknown>,
    extra: CallToolResult["content"] = [],
  ): CallToolResult => ({
    content: [{ type: "text", text }, ...extra],
    ...(config.structuredContent || geminiWouldBreak(server.getClientVersion()?.name, text) ? { structuredContent: structured } : {}),
    isError,
  });

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [tool] }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    if (request.params.name !== TOOL_NAME)
      throw new WireError(ErrorCode.InvalidParams, `unknown tool "${request.params.name}": this server has one tool, ${TOOL_NAME}`);
    // Bad arguments are a tool error the model can read and correct (spec 2025-11-25), not a protocol error.
    const parsed = argsSchema.safeParse(request.params.arguments ?? {});
    if (!parsed.success) {
      const text = `[mcp-code-exec] invalid arguments for ${TOOL_NAME}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "arguments"}: ${i.message.replace(/^Invalid input: /, "")}`).join("; ")}`;
      return result(text, true, { error: { type: "InvalidArguments", message: text, traceback: "" } });
    }
    const args = parsed.data;
    const held = deps.admit?.();
    if (held) return result(`[mcp-code-exec] ${held}`, true, { error: { type: "QuotaExceeded", message: held, traceback: "" } });
    const problem = checkRunRequest(args, config, deps.pool);
    if (problem) return result(problem, true, { error: { type: "InvalidArguments", message: problem, traceback: "" } });
    let resolved;
    try {
      resolved = await sessions.resolveAdopting(deps.principal, deps.connection, args.session);
    } catch (err) {
      if (!(err instanceof SessionError)) throw err;
      const text = `[mcp-code-exec] ${err.message}`;
      const type = {
        limit: "SessionLimit",
        full: "ServerFull",
        unknown: "SessionNotFound",
        expired: "SessionNotFound",
        lost: "SessionLost",
      }[err.problem];
      return result(text, true, { error: { type, message: text, traceback: "" } });
    }
    // One span per call, a child of the client's when its _meta carries a W3C traceparent.
    const span = telemetry.span("tools/call run_python", {
      parent: parseTraceparent(request.params._meta?.traceparent),
      kind: "server",
      attributes: {
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": TOOL_NAME,
        "mcp_code_exec.session": resolved.handle,
        ...(deps.principal === "local" ? {} : { "enduser.id": deps.principal }),
      },
    });
    const t0 = performance.now();
    let outcome: "ok" | "error" | "timeout" = "error";
    // With a progress token, the call sends progress from now on (output, and a heartbeat while silent).
    const client = clientChannel(server, {
      requestId: extra.requestId,
      progressToken: request.params._meta?.progressToken,
      sendNotification: extra.sendNotification,
    });
    // A client that cancelled the call no longer knows its progress token (the SDK's client calls that an error).
    extra.signal.addEventListener("abort", () => client.end(), { once: true });
    if (args.servers?.length) deps.onServersNamed?.(args.servers);
    try {
      const run = await resolved.session.run({
        code: args.code,
        timeoutSec: args.timeout,
        reset: args.reset,
        servers: args.servers,
        signal: extra.signal,
        onOutput: client.output,
        client,
        trace: span.context,
      });
      await client.flush();
      if (resolved.lost)
        run.notes.unshift(`Note: earlier session state was lost (${resolved.lost}); this run started in a fresh interpreter.`);
      // A caller that names sessions, or any caller of a bridge serving many, is told which one ran.
      if (args.session !== undefined || deps.showSessions) run.session = resolved.handle;
      const r = render(run);
      outcome = run.timedOut ? "timeout" : r.isError ? "error" : "ok";
      span.set({ "mcp_code_exec.outcome": outcome, ...(run.error ? { "error.type": run.error.type } : {}) });
      span.end(r.isError ? (run.error?.type ?? "error") : undefined);
      return result(r.text, r.isError, r.structured, attachments(run));
    } catch (err) {
      const text = renderError(err);
      log.warn("run_python failed", { error: text });
      span.end(text);
      return result(text, true, { error: { type: err instanceof BridgeError ? err.code : "Error", message: text, traceback: "" } });
    } finally {
      client.end();
      resolved.release();
      telemetry.count("mcp_code_exec.runs", 1, { outcome });
      telemetry.record("mcp_code_exec.run.duration", performance.now() - t0, { outcome });
    }
  });
  // Saved skills (runtime.save_skill), one resource each, as in the MCP Skills extension.
  const skills = () =>
    deps
      .pool()
      .skills.list()
      .map((s) => ({ uri: `${SKILL_SCHEME}${s.name}`, name: s.name, description: s.description, mimeType: "text/x-python" }));
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [...resources, ...skills()] }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        name: "skill",
        uriTemplate: `${SKILL_SCHEME}{name}`,
        description: "A skill saved with runtime.save_skill: its description and Python source",
        mimeType: "text/x-python",
      },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    const uri = request.params.uri;
    if (uri === CAPABILITIES_URI) {
      return {
        contents: [
          {
            uri,
            mimeType: "text/plain",
            text: `${capabilitySummary(deps.pool(), sessions.peekDefault(deps.principal, deps.connection)?.loadedServers ?? new Set())}\n\n${CHECKLIST}`,
          },
        ],
      };
    }
    if (uri === STATS_URI && deps.metrics) {
      return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify(deps.metrics.snapshot(), null, 2) }] };
    }
    if (uri.startsWith(SKILL_SCHEME)) {
      const name = decodeURIComponent(uri.slice(SKILL_SCHEME.length));
      const skill = deps.pool().skills.get(name);
      if (!skill)
        throw new WireError(
          RESOURCE_NOT_FOUND,
          `no skill named ${JSON.stringify(name)}; list them with resources/list or \`mcp-code-exec skills list\``,
        );
      return { contents: [{ uri, mimeType: "text/x-python", text: `"""${skill.description}"""\n\n${skill.source}` }] };
    }
    throw new WireError(RESOURCE_NOT_FOUND, `resource not found: ${uri} (this server has ${resources.map((r) => r.uri).join(" and ")})`);
  });
  return server;
}

/**
 * Gemini CLI (0.61) turns a result without structuredContent whose first text parses as JSON into
 * structuredContent, and then refuses it unless it is an object: `print(42)` or `print([1, 2])` reached its
 * model as "expected record, received number". Such a result gets our structured payload (an object; no
 * outputSchema is declared, so Gemini CLI checks nothing more and still shows its model the text).
 */
export function geminiWouldBreak(client: string | undefined, text: string): boolean {
  if (client !== "gemini-cli-mcp-client" || !/^\s*[-\d["tfn]/.test(text)) return false;
  try {
    const v: unknown = JSON.parse(text);
    return v === null || typeof v !== "object" || Array.isArray(v);
  } catch {
    return false;
  }
}
