/**
 * The host ↔ sandbox contract, defined once. The TypeScript side types itself from these lists; the
 * Python side receives them with the entrypoint (bootstrap.ts injects `PROTOCOL`) and builds its
 * dispatch and its exceptions from them. test/core/protocol.test.ts boots the entrypoint and fails
 * when the two differ.
 */

export const PROTOCOL_VERSION = 1;

/** Frames the host sends: run code, interrupt a run, answer a request. */
export const HOST_FRAME_KINDS = ["exec", "interrupt", "rpc_result"] as const;

/** Frames the sandbox sends: ready once, streamed output, a request to the host, a run's result. */
export const SANDBOX_FRAME_KINDS = ["ready", "output", "rpc", "result"] as const;

/** Requests sandbox code may make of the host (src/upstream/sandbox-rpc.ts answers them). */
export const RPC_METHODS = [
  "servers.discovered",
  "servers.loaded",
  "servers.describe",
  "tools.list",
  "tools.docs",
  "tools.search",
  "tools.proxy_specs",
  "tools.call",
  "capabilities",
  "skills.save",
  "skills.get",
  "skills.list",
  "packages.install",
] as const;
export type RpcMethod = (typeof RPC_METHODS)[number];

/** Why the host refused or failed a request, and the Python exception class each kind raises. */
export const ERROR_KINDS = {
  /** An argument does not fit the tool's input schema (the upstream's -32602). */
  invalid_arguments: "McpArgumentError",
  not_loaded: "McpServerNotLoaded",
  policy: "McpPolicyError",
  timeout: "McpToolError",
  crashed: "McpToolError",
  start_failed: "McpToolError",
  protocol: "McpToolError",
  unknown_tool: "McpToolError",
  cancelled: "McpToolError",
  /** A remote server wants an OAuth sign-in (or refused the one stored); the message names the login command. */
  auth_required: "McpToolError",
  unknown_server: "McpError",
  bad_request: "McpError",
  closed: "McpError",
  /** `from skills import name` for a name no skill has (raised as ImportError by the importer). */
  unknown_skill: "McpError",
  /** runtime.install(): no such package on the source (the message names the nearest real one). */
  not_found: "PackageNotFoundError",
  /** runtime.install(): a wheel failed its checks, or the resolver could not run. */
  bad_wheel: "InstallError",
  resolver_missing: "InstallError",
  resolver_failed: "InstallError",
} as const;
export type ErrorKind = keyof typeof ERROR_KINDS;

/** The helpers of `from mcp import runtime`, as the model is told about them. */
export const RUNTIME_HELPERS = [
  { name: "list_servers_sync", call: "runtime.list_servers_sync() / await runtime.list_servers()", does: "configured server names" },
  { name: "list_servers", call: "", does: "" },
  { name: "discovered_servers", call: "runtime.discovered_servers()", does: "name, alias, type, source, loaded" },
  { name: "describe_server", call: "runtime.describe_server(name)", does: "transport, source file, status, tool count" },
  { name: "list_loaded_server_metadata", call: "runtime.list_loaded_server_metadata()", does: "the same for loaded servers" },
  { name: "search_tool_docs_sync", call: "runtime.search_tool_docs_sync(query, limit=5)", does: "rank tools of all servers by meaning" },
  { name: "search_tool_docs", call: "", does: "" },
  { name: "list_tools_sync", call: "runtime.list_tools_sync(server)", does: "tool names and one-line summaries" },
  { name: "query_tool_docs_sync", call: "runtime.query_tool_docs_sync(server, tool=None, detail='summary'|'signature'|'full')", does: "" },
  { name: "query_tool_docs", call: "", does: "" },
  { name: "call_tool", call: "await runtime.call_tool(server, tool, {args})", does: "call without a proxy" },
  { name: "capability_summary", call: "", does: "" },
  { name: "show", call: "runtime.show(obj)", does: "return a figure, image or table with the result" },
  { name: "save_skill", call: "runtime.save_skill(func, description=None)", does: "keep a function: later `from skills import <name>`" },
  { name: "list_skills", call: "runtime.list_skills()", does: "saved skills: name, description" },
  { name: "packages", call: "runtime.packages()", does: "importable distributions: name, version, import names" },
  { name: "install", call: 'runtime.install("pkg==1.2", ...)', does: "install wheels into this session (no restart; may ask the user)" },
] as const;

/** What travels with the entrypoint for the Python side. */
export const PROTOCOL = {
  version: PROTOCOL_VERSION,
  host_frames: HOST_FRAME_KINDS,
  sandbox_frames: SANDBOX_FRAME_KINDS,
  rpc_methods: RPC_METHODS,
  error_kinds: ERROR_KINDS,
  runtime_helpers: RUNTIME_HELPERS.map((h) => h.name),
};
