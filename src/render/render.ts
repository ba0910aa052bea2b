/**
 * Renderers turn a run's outcome into MCP content: text for the model plus the same payload in
 * `structuredContent`. Empty parts are left out. The mode comes from MCP_BRIDGE_OUTPUT_MODE.
 * Images and files are not text: every renderer lists them in the payload, and the server adds them
 * as ImageContent and embedded resources (see `attachments`).
 */
import { encode as toonEncode } from "@toon-format/toon";
import type { RunOutcome } from "../session/outcome.ts";

export interface RenderedResult {
  text: string;
  structured: Record<string, unknown>;
  isError: boolean;
}

export type Renderer = (outcome: RunOutcome) => RenderedResult;

/** The payload every renderer shows: only the parts that are present. */
export function payload(o: RunOutcome, opts: { tableAsRows?: boolean } = {}): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const notes = [...o.notes, ...(o.displayNotes ?? [])];
  if (notes.length) out.notes = notes;
  if (o.stdout !== undefined) out.stdout = o.stdout;
  if (o.stdoutDropped) out.stdout_dropped_bytes = o.stdoutDropped;
  if (o.stderr !== undefined) out.stderr = o.stderr;
  if (o.stderrDropped) out.stderr_dropped_bytes = o.stderrDropped;
  if (o.table && opts.tableAsRows) out.table = tableRows(o);
  else if (o.value !== undefined) out.value = o.value;
  if (o.images?.length) out.images = o.images.map((i) => ({ mime_type: i.mime_type, bytes: Math.floor((i.data.length * 3) / 4) }));
  if (o.files?.length) out.files = o.files.map((f) => ({ name: f.name, mime_type: f.mime_type, size: f.size }));
  if (o.error) out.error = o.error;
  if (o.timedOut) out.timed_out = true;
  if (o.cancelled) out.cancelled = true;
  if (o.sessionReset) out.session_reset = o.sessionReset;
  out.duration_ms = o.durationMs;
  if (o.session) out.session = o.session;
  return out;
}

/** A DataFrame as uniform row objects (TOON renders these as one header and CSV-like lines). */
function tableRows(o: RunOutcome): Record<string, unknown> {
  const t = o.table!;
  const rows = t.rows.map((r, i) => ({ index: t.index?.[i] ?? i, ...Object.fromEntries(t.columns.map((c, j) => [c, r[j] ?? null])) }));
  const out: Record<string, unknown> = { total_rows: t.total_rows, total_columns: t.total_columns, rows };
  if (t.truncated)
    out.note = `showing ${t.rows.length} of ${t.total_rows} rows (head and tail) and ${t.columns.length} of ${t.total_columns} columns`;
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
  if (o.images?.length) parts.push(`[${o.images.length} image${o.images.length > 1 ? "s" : ""} attached]`);
  for (const f of o.files ?? []) parts.push(`[file /tmp/outputs/${f.name} attached: ${f.mime_type}, ${f.size} bytes]`);
  for (const n of o.displayNotes ?? []) parts.push(`[note] ${n}`);
  if (o.error) parts.push(`[error] ${o.error.traceback.trim() || `${o.error.type}: ${o.error.message}`}`);
  if (o.sessionReset && !o.error?.message.includes(o.sessionReset)) parts.push(`[session reset] ${o.sessionReset}`);
  if (parts.length === 0) parts.push("(no output)");
  if (o.session) parts.push(`[session] ${o.session}`);
  return { text: parts.join("\n"), structured: payload(o), isError: o.error !== undefined };
};

export const json: Renderer = (o) => {
  const structured = payload(o, { tableAsRows: true });
  return { text: JSON.stringify(structured), structured, isError: o.error !== undefined };
};

export const toon: Renderer = (o) => {
  const structured = payload(o, { tableAsRows: true });
  return { text: toonEncode(structured), structured, isError: o.error !== undefined };
};

export const RENDERERS: Record<string, Renderer> = { compact, toon, json };

export function getRenderer(mode: string): Renderer {
  return RENDERERS[mode] ?? compact;
}

/** Images and files as MCP content blocks, after the text. */
export function attachments(
  o: RunOutcome,
): Array<
  | { type: "image"; data: string; mimeType: string }
  | { type: "resource"; resource: { uri: string; mimeType: string; text: string } | { uri: string; mimeType: string; blob: string } }
> {
  const out: ReturnType<typeof attachments> = [];
  for (const img of o.images ?? []) out.push({ type: "image", data: img.data, mimeType: img.mime_type });
  for (const f of o.files ?? []) {
    const uri = `file:///tmp/outputs/${encodeURIComponent(f.name)}`;
    out.push({
      type: "resource",
      resource: f.text !== undefined ? { uri, mimeType: f.mime_type, text: f.text } : { uri, mimeType: f.mime_type, blob: f.data ?? "" },
    });
  }
  return out;
}
