/**
 * The arguments of a call as a person reads them in an approval question: one line per argument,
 * long values cut, secret-looking values masked (by the argument's name or the value's shape).
 */
import { maskUrl, TOKEN_SHAPE } from "../config/mask.ts";

/** Argument names whose values are secrets (narrower than config/mask.ts: `author` or `session_id` stay readable). */
const SECRET_NAME = /token|secret|passw|pwd|api[-_]?key|apikey|credential|private[-_]?key|access[-_]?key|^auth(orization)?$|cookie/i;

const MAX_VALUE_CHARS = 200;
const MAX_ARGS = 20;
const MAX_TOTAL_CHARS = 2_000;
const MAX_DEPTH = 20;

/** `key: value` lines, or "(no arguments)". */
export function summarizeArgs(args: Record<string, unknown>): string {
  const keys = Object.keys(args);
  if (!keys.length) return "(no arguments)";
  const lines: string[] = [];
  let total = 0;
  for (const key of keys.slice(0, MAX_ARGS)) {
    const value = SECRET_NAME.test(key) ? "***" : masked(args[key], 0);
    // Names come from sandbox code too: one that is not a plain word is quoted, so it cannot add lines.
    const name = /^[\w.-]{1,64}$/.test(key) ? key : cut(JSON.stringify(key));
    const line = `${name}: ${value === "***" ? value : cut(render(value))}`;
    if (total + line.length > MAX_TOTAL_CHARS) {
      lines.push(`… ${keys.length - lines.length} more argument(s) not shown`);
      return lines.join("\n");
    }
    total += line.length + 1;
    lines.push(line);
  }
  if (keys.length > MAX_ARGS) lines.push(`… ${keys.length - MAX_ARGS} more argument(s) not shown`);
  return lines.join("\n");
}

/** A copy of `value` with secret-looking strings and secret-named keys replaced by ***. */
export function masked(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return maskString(value);
  if (value === null || typeof value !== "object") return value;
  if (depth >= MAX_DEPTH) return "…";
  if (Array.isArray(value)) return value.map((v) => masked(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_NAME.test(k) ? "***" : masked(v, depth + 1);
  return out;
}

function maskString(s: string): string {
  if (TOKEN_SHAPE.test(s)) return "***";
  if (/^(bearer|basic|token)\s+\S+/i.test(s)) return `${s.split(/\s/)[0]} ***`;
  if (/^[a-z][a-z0-9+.-]*:\/\/\S+$/i.test(s)) return maskUrl(s);
  return s;
}

function render(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

function cut(s: string): string {
  return s.length > MAX_VALUE_CHARS ? `${s.slice(0, MAX_VALUE_CHARS)}… (${s.length} characters)` : s;
}
