/**
 * Validation helpers shared by the client readers: zod issues as `path: message` pairs with short
 * messages, and JSON paths written the way a person finds them in the file. Schemas are loose (unknown
 * keys such as `autoApprove` or `timeout` are ignored) and validate one entry at a time, so a bad server
 * entry never sinks its siblings.
 */
import { z } from "zod";

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
export function validate<T>(schema: z.ZodType<T>, value: unknown): { ok: true; data: T } | { ok: false; issues: SchemaIssue[] } {
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
