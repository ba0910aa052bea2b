/**
 * What the bridge says about itself: the one tool, its arguments, the capabilities, the instructions and
 * the protocol versions it speaks. One source for the SDK server (bridge-server.ts) and for the answers
 * given before that server has loaded (handshake-front.ts); kept free of the SDK's runtime modules so a
 * start can build it in a few milliseconds.
 */
import type { InitializeResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";
import type { Config } from "../config/env.ts";
import { OUTPUT_SCHEMA } from "../render/output-schema.ts";
import { instructionsFor, serverInstructions } from "./instructions.ts";

export const TOOL_NAME = "run_python";

export const RUN_PYTHON_DESCRIPTION =
  "Run Python 3 in a persistent sandbox (no network). State persists across calls; top-level await " +
  "works; the last expression's value is returned. Tools of other MCP servers are callable from code: " +
  "pass servers=[names] to load them, then `await mcp_<name>.<tool>(**kwargs)`. Discover with " +
  "`from mcp import runtime`: runtime.list_servers_sync(), runtime.search_tool_docs_sync('what you " +
  "need'), runtime.query_tool_docs_sync(server, tool, detail='signature'), help(mcp_<name>.<tool>). " +
  "Failed calls raise McpToolError. Loop, retry and filter in code; print only what matters.";

/**
 * The protocol versions the SDK server negotiates (its SUPPORTED_PROTOCOL_VERSIONS, newest first), so an
 * early answer names the version the server then speaks; test/unit/handshake.test.ts holds the two equal.
 */
export const PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07"] as const;

export function runPythonArgs(config: Config) {
  return z.object({
    code: z.string().describe("Python source"),
    timeout: z.number().optional().describe(`Seconds (default ${config.timeoutSec}, max ${config.maxTimeoutSec})`),
    reset: z.boolean().optional().describe("Fresh interpreter first"),
    servers: z.array(z.string()).optional().describe("MCP servers to load"),
    session: z.string().optional().describe('"new", or a handle from a result'),
  });
}

export interface Handshake {
  serverInfo: { name: string; version: string };
  capabilities: { tools: Record<string, never>; resources: Record<string, never> };
  instructions: string;
  /** run_python's definition, as tools/list returns it. */
  tool: Tool;
}

export function handshake(config: Config, version: string, servers: string[], problem?: string): Handshake {
  return {
    serverInfo: { name: "mcp-code-exec", version },
    capabilities: { tools: {}, resources: {} },
    instructions: serverInstructions(servers, problem),
    tool: {
      name: TOOL_NAME,
      description: RUN_PYTHON_DESCRIPTION,
      inputSchema: inputSchema(config),
      ...(config.structuredContent ? { outputSchema: OUTPUT_SCHEMA } : {}),
    },
  };
}

/**
 * run_python's input schema. Its keywords (type, properties, items, required, description) mean the
 * same in draft-07 and in 2020-12, MCP's default dialect, so no `$schema` is sent: every prompt of
 * every client pays for each token of it.
 */
function inputSchema(config: Config): Tool["inputSchema"] {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(runPythonArgs(config), { target: "draft-7", io: "input" }) as Record<
    string,
    unknown
  >;
  return schema as Tool["inputSchema"];
}

/**
 * The `initialize` answer, as the SDK server gives it: the client's version when spoken, else the newest;
 * the instructions for this client (instructions.ts: some clients run many conversations through us).
 */
export function initializeResult(h: Handshake, requestedVersion: string, clientName?: string): InitializeResult {
  const versions: readonly string[] = PROTOCOL_VERSIONS;
  const instructions = h.instructions ? instructionsFor(h.instructions, clientName) : "";
  return {
    protocolVersion: versions.includes(requestedVersion) ? requestedVersion : PROTOCOL_VERSIONS[0],
    capabilities: h.capabilities,
    serverInfo: h.serverInfo,
    ...(instructions ? { instructions } : {}),
  };
}
