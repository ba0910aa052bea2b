/**
 * The frame format between the bridge and entrypoint/runtime.py: one JSON object per line, UTF-8.
 * Everything the sandbox sends is untrusted: each frame is size-capped and validated here, and a bad
 * frame is reported with context, never a crash.
 *
 * host -> sandbox: exec {id, code, output_cap, stream, ...}, interrupt {id}, rpc_result {id, ok, value|error}
 * sandbox -> host: ready {protocol, python}, output {id, stream, text}, rpc {id, run, method, params},
 *                  result {id, stdout?, stderr?, *_dropped?, value?, error?, images?, files?,
 *                  display_notes?, table?}
 * The kinds, request methods and error kinds are defined once, in protocol.ts.
 */
import * as z from "zod";
import { formatIssues } from "../config/issues.ts";

export { PROTOCOL_VERSION } from "./protocol.ts";
/** Largest frame the host accepts from the sandbox. */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;

export const ReadyFrameSchema = z.object({
  t: z.literal("ready"),
  protocol: z.number().int().describe("Entry-point protocol version"),
  python: z.string().max(64).describe("Python version inside the sandbox"),
});

export const ErrorInfoSchema = z.object({
  type: z.string().max(256).describe("Exception class name"),
  message: z.string().describe("str(exception)"),
  traceback: z.string().describe("Formatted traceback of the user's code"),
});

export const IMAGE_MIME_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;
const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, "not base64");

export const ImageSchema = z.object({
  mime_type: z.enum(IMAGE_MIME_TYPES).describe("Image type"),
  data: base64.describe("Base64 image bytes"),
});

/** A file from /tmp/outputs/: a plain name (no path), text or base64 bytes. */
export const OutputFileSchema = z
  .object({
    name: z
      .string()
      .min(1)
      .max(255)
      .regex(/^[^/\\\0]+$/, "must be a plain file name")
      .refine((n) => n !== "." && n !== "..", "must be a plain file name"),
    mime_type: z.string().max(127).regex(/^[\w.+-]+\/[\w.+-]+$/, "not a MIME type"),
    size: z.number().int().nonnegative(),
    text: z.string().optional(),
    data: base64.optional(),
  })
  .refine((f) => (f.text === undefined) !== (f.data === undefined), "exactly one of text or data");

export const TableSchema = z.object({
  columns: z.array(z.string()).max(1000),
  index: z.array(z.unknown()).max(1000).optional(),
  rows: z.array(z.array(z.unknown()).max(1000)).max(1000),
  total_rows: z.number().int().nonnegative(),
  total_columns: z.number().int().nonnegative(),
  truncated: z.boolean().optional(),
});

export const ResultFrameSchema = z.object({
  t: z.literal("result"),
  id: z.number().int().nonnegative(),
  stdout: z.string().optional(),
  stderr: z.string().optional(),
  stdout_dropped: z.number().int().nonnegative().optional(),
  stderr_dropped: z.number().int().nonnegative().optional(),
  value: z.string().optional().describe("repr() of the trailing expression"),
  error: ErrorInfoSchema.optional(),
  images: z.array(ImageSchema).max(32).optional(),
  files: z.array(OutputFileSchema).max(100).optional(),
  display_notes: z.array(z.string().max(1000)).max(100).optional(),
  table: TableSchema.optional(),
});

/** Output streamed while a run is in progress (only when the run asked for it). */
export const OutputFrameSchema = z.object({
  t: z.literal("output"),
  id: z.number().int().nonnegative(),
  stream: z.enum(["stdout", "stderr"]),
  text: z.string().max(1024 * 1024),
});

export const RpcFrameSchema = z.object({
  t: z.literal("rpc"),
  id: z.string().min(1).max(64),
  run: z.number().int().nullable(),
  method: z.string().min(1).max(64),
  params: z.unknown(),
});

export const SandboxFrameSchema = z.discriminatedUnion("t", [ReadyFrameSchema, ResultFrameSchema, RpcFrameSchema, OutputFrameSchema]);

export type ReadyFrame = z.infer<typeof ReadyFrameSchema>;
export type ResultFrame = z.infer<typeof ResultFrameSchema>;
export type RpcFrame = z.infer<typeof RpcFrameSchema>;
export type OutputFrame = z.infer<typeof OutputFrameSchema>;
export type OutputFile = z.infer<typeof OutputFileSchema>;
export type ImageData = z.infer<typeof ImageSchema>;
export type Table = z.infer<typeof TableSchema>;
export type SandboxFrame = z.infer<typeof SandboxFrameSchema>;
export type ErrorInfo = z.infer<typeof ErrorInfoSchema>;

export type HostFrame =
  | { t: "exec"; id: number; code: string; output_cap: number; [extra: string]: unknown }
  | { t: "interrupt"; id: number }
  | { t: "rpc_result"; id: string; ok: true; value: unknown }
  | { t: "rpc_result"; id: string; ok: false; error: { kind?: string; message: string; [k: string]: unknown } };

export function encodeFrame(frame: HostFrame): string {
  return `${JSON.stringify(frame)}\n`;
}

export type DecodeResult = { ok: true; frame: SandboxFrame } | { ok: false; error: string };

/** Validate one line from the sandbox. */
export function decodeFrame(line: string): DecodeResult {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch (err) {
    return { ok: false, error: `not JSON (${(err as Error).message}): ${preview(line)}` };
  }
  const parsed = SandboxFrameSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = formatIssues(parsed.error.issues, { whole: "(frame)" });
    return { ok: false, error: `invalid frame: ${issues}: ${preview(line)}` };
  }
  return { ok: true, frame: parsed.data };
}

function preview(s: string): string {
  return JSON.stringify(s.length > 120 ? `${s.slice(0, 120)}…` : s);
}

/**
 * Splits a byte stream into lines with a cap: a line longer than maxBytes is dropped whole (reported
 * once through onOversize) instead of growing the buffer without bound.
 */
export class LineSplitter {
  #chunks: Uint8Array[] = [];
  #size = 0;
  #skipping = false;
  readonly #decoder = new TextDecoder("utf-8", { fatal: false });

  constructor(
    readonly maxBytes: number,
    readonly onLine: (line: string) => void,
    readonly onOversize: (bytes: number) => void,
  ) {}

  push(chunk: Uint8Array): void {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(10, start);
      const end = nl === -1 ? chunk.length : nl;
      const piece = chunk.subarray(start, end);
      if (!this.#skipping) {
        if (this.#size + piece.length > this.maxBytes) {
          this.#skipping = true;
          this.#chunks = [];
        } else {
          this.#chunks.push(piece.slice());
        }
      }
      this.#size += piece.length;
      if (nl === -1) break;
      this.#flushLine();
      start = nl + 1;
    }
  }

  #flushLine(): void {
    if (this.#skipping) {
      this.onOversize(this.#size);
    } else {
      const buf = this.#chunks.length === 1 ? this.#chunks[0]! : concat(this.#chunks, this.#size);
      const line = this.#decoder.decode(buf);
      if (line.trim()) this.onLine(line);
    }
    this.#chunks = [];
    this.#size = 0;
    this.#skipping = false;
  }
}

function concat(parts: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
