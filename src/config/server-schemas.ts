/**
 * Zod schemas for the MCP server config formats written by MCP clients
 * (Claude Desktop, Claude Code, VS Code, Cursor, ...) and by hand.
 *
 * Schemas are loose (unknown keys such as `autoApprove`, `timeout` or
 * `description` are kept and ignored) and deliberately validate one level at
 * a time, so a bad server entry never sinks its siblings.
 */
import { z } from "zod";

const ServerMapSchema = z
  .record(z.string(), z.unknown())
  .describe("Map from server name to server definition; each definition is validated on its own");

/** Any config file: the keys we read, everything else ignored. */
export const ConfigFileSchema = z
  .looseObject({
    mcpServers: ServerMapSchema.optional().describe(
      "Servers keyed by name (Claude Desktop, Claude Code, Cursor, most clients)",
    ),
    servers: ServerMapSchema.optional().describe("Servers keyed by name (VS Code's .vscode/mcp.json)"),
    inputs: z.unknown().optional().describe("VS Code input prompts; ignored by the bridge"),
  })
  .describe("An MCP config file");

/** ~/.claude.json: user-scope servers plus per-project ("local" scope) servers. */
export const ClaudeUserConfigSchema = ConfigFileSchema.extend({
  projects: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("Per-project settings keyed by absolute project directory; only the current cwd is read"),
}).describe("Claude Code user config (~/.claude.json)");

export const ClaudeProjectSchema = z
  .looseObject({
    mcpServers: ServerMapSchema.optional().describe("Servers Claude Code uses only in this project"),
  })
  .describe("One entry of ~/.claude.json `projects`");

/** Fields every entry may carry, read before choosing the transport. */
export const ServerCommonSchema = z
  .looseObject({
    type: z
      .enum(["stdio", "http", "streamable-http", "streamableHttp", "sse"])
      .optional()
      .describe('Transport; omitted means "stdio" with `command`, "http" with `url`'),
    disabled: z.boolean().optional().describe("true = the entry is listed as skipped and not started"),
  })
  .describe("Fields shared by all server entries");

export const StdioServerSchema = ServerCommonSchema.extend({
  type: z.literal("stdio").optional().describe("Local process speaking MCP over stdin/stdout"),
  command: z.string().min(1, "must not be empty").describe("Executable to launch; `~` expands to home"),
  args: z.array(z.string()).optional().describe("Arguments; ${VAR} / ${env:VAR} are substituted"),
  env: z
    .record(z.string(), z.string())
    .optional()
    .describe("Extra environment variables; values support ${VAR} substitution"),
  cwd: z.string().optional().describe("Working directory; `~` expands, relative paths resolve against the bridge cwd"),
}).describe("A stdio server entry");

export const RemoteServerSchema = ServerCommonSchema.extend({
  type: z
    .enum(["http", "streamable-http", "streamableHttp", "sse"])
    .optional()
    .describe('"sse" for the legacy SSE transport, otherwise Streamable HTTP'),
  url: z.string().min(1, "must not be empty").describe("Server endpoint (http or https); supports ${VAR}"),
  headers: z
    .record(z.string(), z.string())
    .optional()
    .describe("HTTP headers sent with every request; values support ${VAR}"),
}).describe("A remote (Streamable HTTP or SSE) server entry");

export type StdioServerInput = z.infer<typeof StdioServerSchema>;
export type RemoteServerInput = z.infer<typeof RemoteServerSchema>;

export type PathSegment = string | number;

/** `mcpServers.github.args[2]`, `projects["/home/me/x"].mcpServers.db` */
export function formatJsonPath(segments: readonly PathSegment[]): string {
  let out = "";
  for (const seg of segments) {
    if (typeof seg === "number") out += `[${seg}]`;
    else if (/^[A-Za-z0-9_$@-]+$/.test(seg)) out += out === "" ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

export interface SchemaIssue {
  path: PathSegment[];
  message: string;
}

/** Validate and turn zod issues into path + short message pairs. */
export function validate<T>(
  schema: z.ZodType<T>,
  value: unknown,
): { ok: true; data: T } | { ok: false; issues: SchemaIssue[] } {
  const r = schema.safeParse(value);
  if (r.success) return { ok: true, data: r.data };
  return {
    ok: false,
    issues: r.error.issues.map((issue) => ({
      path: issue.path.map((p) => (typeof p === "symbol" ? String(p) : p)),
      message: issueMessage(issue, value),
    })),
  };
}

/**
 * Validate a container object, report each issue, and return an accessor that
 * yields a top-level key's value only if that key had no issues (so a broken
 * `projects` does not hide a valid `mcpServers`).
 */
export function validTopLevelKeys(
  schema: z.ZodType,
  obj: Record<string, unknown>,
  report: (issue: SchemaIssue) => void,
): (key: string) => Record<string, unknown> | undefined {
  const v = validate(schema, obj);
  const bad = new Set<PathSegment | undefined>();
  if (!v.ok) {
    for (const i of v.issues) {
      report(i);
      bad.add(i.path[0]);
    }
  }
  return (k) => (bad.has(k) ? undefined : (obj[k] as Record<string, unknown> | undefined));
}

function issueMessage(issue: z.core.$ZodIssue, root: unknown): string {
  if (issue.code === "invalid_type") {
    const expected = issue.expected === "record" ? "object" : issue.expected;
    const actual = valueAt(root, issue.path);
    if (actual === undefined) return `required ${expected} is missing`;
    return `expected ${expected}, received ${typeName(actual)}`;
  }
  return issue.message.replace(/^Invalid (input|option): /, "");
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = root;
  for (const seg of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[seg];
  }
  return cur;
}

export function typeName(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}
