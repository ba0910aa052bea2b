/**
 * The JSON Schema of a result's structuredContent, declared as run_python's outputSchema when
 * MCP_BRIDGE_STRUCTURED_CONTENT is on (clients validate structured results against it). Every field is
 * optional: a result carries only the parts that are present (see `payload`). Kept terse: it is part of
 * the tool definition every prompt pays for.
 */
const str = { type: "string" } as const;
const int = { type: "integer" } as const;

export const OUTPUT_SCHEMA = {
  type: "object" as const,
  properties: {
    notes: { type: "array", items: str },
    stdout: str,
    stderr: str,
    stdout_dropped_bytes: int,
    stderr_dropped_bytes: int,
    value: str,
    table: { type: "object" },
    images: { type: "array", items: { type: "object" } },
    files: { type: "array", items: { type: "object" } },
    error: { type: "object", properties: { type: str, message: str, traceback: str } },
    timed_out: { type: "boolean" },
    cancelled: { type: "boolean" },
    session_reset: str,
    duration_ms: { type: "number" },
    session: str,
  },
};
