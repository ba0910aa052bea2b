/**
 * The JSON Schema of a result's structuredContent, declared as run_python's outputSchema when
 * MCP_BRIDGE_STRUCTURED_CONTENT is on (clients validate structured results against it). Every field is
 * optional: a result carries only the parts that are present (see `payload`).
 */
const str = { type: "string" } as const;
const int = { type: "integer" } as const;

export const OUTPUT_SCHEMA = {
  type: "object" as const,
  properties: {
    notes: { type: "array", items: str, description: "Session notes (reset, lost state) and display notes" },
    stdout: str,
    stderr: str,
    stdout_dropped_bytes: int,
    stderr_dropped_bytes: int,
    value: { type: "string", description: "repr of the last expression (a compact table for a DataFrame)" },
    table: { type: "object", description: "A DataFrame as rows (toon and json modes)" },
    images: { type: "array", items: { type: "object", properties: { mime_type: str, bytes: int } }, description: "Attached as image content" },
    files: { type: "array", items: { type: "object", properties: { name: str, mime_type: str, size: int } }, description: "Files from /tmp/outputs, attached as resources" },
    error: { type: "object", properties: { type: str, message: str, traceback: str } },
    timed_out: { type: "boolean" },
    cancelled: { type: "boolean" },
    session_reset: { type: "string", description: "Why the interpreter state was lost" },
    duration_ms: { type: "number" },
  },
};
