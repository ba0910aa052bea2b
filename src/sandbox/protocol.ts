/**
 * The host ↔ sandbox contract, defined once. The TypeScript side types itself from these lists; the
 * Python side receives them with the entrypoint (bootstrap.ts injects `PROTOCOL`) and builds its
 * dispatch, its exceptions, its interrupt timing and its display defaults from them.
 * test/core/protocol.test.ts boots the entrypoint and fails when the two differ.
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

/**
 * A run that times out or is cancelled gets an interrupt (KeyboardInterrupt in the code); the host
 * kills the sandbox if the run has not ended `grace_ms` later (src/session/ladder.ts). Until the code's
 * own handler has run, the sandbox sends SIGINT again every `reinterrupt_every_ms` for
 * `reinterrupt_for_ms`, inside the grace (entrypoint/interpreter.py: a signal that lands just as the
 * code blocks runs only the C handler).
 */
export const INTERRUPT = { grace_ms: 2_000, reinterrupt_every_ms: 50, reinterrupt_for_ms: 1_500 } as const;

const MiB = 1024 * 1024;
/** The files a run returns may together be this many times the per-file cap (MCP_BRIDGE_FILE_CAP). */
const FILES_TOTAL_IN_FILE_CAPS = 4;

/**
 * What a run returns beside its text (images, files), as the sandbox limits it (entrypoint/display.py).
 * Every exec frame carries the configured limits (displayLimits); these are the sandbox's defaults for
 * a limit the frame leaves out, and the host's for the fixed ones. `dpi`: figures are drawn at this
 * resolution (the sandbox's own; the host sends none).
 */
export const DISPLAY_DEFAULTS = {
  image_bytes: 2 * MiB,
  file_bytes: MiB,
  files_total_bytes: FILES_TOTAL_IN_FILE_CAPS * MiB,
  max_images: 8,
  max_files: 10,
  result_bytes: 8 * MiB,
  dpi: 100,
} as const;

/** The display limits an exec frame carries, from the configured caps (MCP_BRIDGE_IMAGE_CAP, _FILE_CAP, _RESULT_CAP). */
export function displayLimits(caps: { imageCap: number; fileCap: number; resultCap: number }): Record<string, number> {
  return {
    image_bytes: caps.imageCap,
    file_bytes: caps.fileCap,
    files_total_bytes: caps.fileCap * FILES_TOTAL_IN_FILE_CAPS,
    max_images: DISPLAY_DEFAULTS.max_images,
    max_files: DISPLAY_DEFAULTS.max_files,
    result_bytes: caps.resultCap,
  };
}

/** What travels with the entrypoint for the Python side. */
export const PROTOCOL = {
  version: PROTOCOL_VERSION,
  host_frames: HOST_FRAME_KINDS,
  sandbox_frames: SANDBOX_FRAME_KINDS,
  rpc_methods: RPC_METHODS,
  error_kinds: ERROR_KINDS,
  runtime_helpers: RUNTIME_HELPERS.map((h) => h.name),
  interrupt: INTERRUPT,
  display_defaults: DISPLAY_DEFAULTS,
};
