/**
 * Renderers turn a run's outcome into MCP content: text for the model plus the same fields in
 * `structuredContent`. Empty parts are left out. The mode comes from MCP_BRIDGE_OUTPUT_MODE.
 */
import type { RunOutcome } from "../session.ts";

export interface RenderedResult {
  text: string;
  structured: Record<string, unknown>;
  isError: boolean;
}

export type Renderer = (outcome: RunOutcome) => RenderedResult;

/** The payload every renderer shows: only the parts that are present. */
export function payload(o: RunOutcome): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (o.notes.length) out.notes = o.notes;
  if (o.stdout !== undefined) out.stdout = o.stdout;
  if (o.stdoutDropped) out.stdout_dropped_bytes = o.stdoutDropped;
  if (o.stderr !== undefined) out.stderr = o.stderr;
  if (o.stderrDropped) out.stderr_dropped_bytes = o.stderrDropped;
  if (o.value !== undefined) out.value = o.value;
  if (o.error) out.error = o.error;
  if (o.timedOut) out.timed_out = true;
  if (o.cancelled) out.cancelled = true;
  if (o.sessionReset) out.session_reset = o.sessionReset;
  out.duration_ms = o.durationMs;
  return out;
}

export function droppedMarker(stream: string, dropped: number, cap: number): string {
  return `[… ${dropped} more bytes of ${stream} dropped: output is capped at ${cap} bytes per stream (MCP_BRIDGE_OUTPUT_CAP); print less or write to a file in /tmp]`;
}

export const compact: Renderer = (o) => {
  const parts: string[] = [];
  for (const n of o.notes) parts.push(n);
  if (o.stdout !== undefined) parts.push(o.stdout.replace(/\n$/, ""));
  if (o.stdoutDropped) parts.push(droppedMarker("stdout", o.stdoutDropped, o.outputCap));
  if (o.stderr !== undefined) parts.push(`[stderr]\n${o.stderr.replace(/\n$/, "")}`);
  if (o.stderrDropped) parts.push(droppedMarker("stderr", o.stderrDropped, o.outputCap));
  if (o.value !== undefined) parts.push(o.value.includes("\n") ? `[value]\n${o.value}` : `[value] ${o.value}`);
  if (o.error) parts.push(`[error] ${o.error.traceback.trim() || `${o.error.type}: ${o.error.message}`}`);
  if (o.sessionReset && !o.error?.message.includes(o.sessionReset)) parts.push(`[session reset] ${o.sessionReset}`);
  if (parts.length === 0) parts.push("(no output)");
  return { text: parts.join("\n"), structured: payload(o), isError: o.error !== undefined };
};

export const json: Renderer = (o) => {
  const structured = payload(o);
  return { text: JSON.stringify(structured), structured, isError: o.error !== undefined };
};

export const RENDERERS: Record<string, Renderer> = { compact, json };

export function getRenderer(mode: string): Renderer {
  return RENDERERS[mode] ?? compact;
}
