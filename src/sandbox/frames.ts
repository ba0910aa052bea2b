/**
 * The frame format between the bridge and entrypoint/interpreter.py: one JSON object per line, UTF-8.
 * Everything the sandbox sends is untrusted: each frame is size-capped and validated here, and a bad
 * frame is reported with context, never a crash.
 *
 * host -> sandbox: exec {id, code, output_cap, stream, ...}, interrupt {id}, rpc_result {id, ok, value|error}
 * sandbox -> host: ready {protocol, python, boot?}, output {id, stream, text}, rpc {id, run, method, params},
 *                  result {id, stdout?, stderr?, *_dropped?, value?, error?, images?, files?,
 *                  display_notes?, table?}
 * The kinds, request methods and error kinds are defined once, in protocol.ts.
 */
import * as z from "zod";
import { formatIssues } from "../config/issues.ts";

export { PROTOCOL_VERSION } from "./protocol.ts";

/** Start-up marks the entrypoint reports in its ready frame, in order (src/sandbox/bootstrap.ts). */
export const BOOT_MARKS = ["start", "read", "compiled", "imported", "ready"] as const;
/** Largest frame the host accepts from the sandbox. */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;

export const ReadyFrameSchema = z.object({
  t: z.literal("ready"),
  protocol: z.number().int().describe("Entry-point protocol version"),
  python: z.string().max(64).describe("Python version inside the sandbox"),
  boot: z
    .object(
      Object.fromEntries(BOOT_MARKS.map((m) => [m, z.number().optional()])) as Record<
        (typeof BOOT_MARKS)[number],
        z.ZodOptional<z.ZodNumber>
      >,
    )
    .optional()
    .describe("Wall-clock seconds of each start-up mark inside the sandbox (debug traces only)"),
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
    mime_type: z
      .string()
      .max(127)
      .regex(/^[\w.+-]+\/[\w.+-]+$/, "not a MIME type"),
    size: z.number().int().nonnegative(),
    text: z.string().optional(),
    data: base64.optional(),
  })
  .refine((f) => (f.text === undefined) !== (f.data === undefined), "exactly one of text or data");

/** The sandbox shows at most 20 rows × 20 columns of 50-character cells; the host allows some slack. */
export const TABLE_BOUNDS = { rows: 50, columns: 50, cell: 200 } as const;
const cell = z.union([z.string().max(TABLE_BOUNDS.cell), z.number(), z.boolean(), z.null()]);

/** A DataFrame's head and tail as primitive cells: every renderer repeats column names per row, so all is bounded. */
export const TableSchema = z.object({
  columns: z.array(z.string().max(TABLE_BOUNDS.cell)).max(TABLE_BOUNDS.columns),
  index: z.array(cell).max(TABLE_BOUNDS.rows).optional(),
  rows: z.array(z.array(cell).max(TABLE_BOUNDS.columns)).max(TABLE_BOUNDS.rows),
  total_rows: z.number().int().nonnegative(),
  total_columns: z.number().int().nonnegative(),
  truncated: z.boolean().optional(),
});

/** Each optional part of a result, validated on its own: a part out of bounds is refused, not the run. */
const RESULT_PARTS = {
  stdout: z.string(),
  stderr: z.string(),
  stdout_dropped: z.number().int().nonnegative(),
  stderr_dropped: z.number().int().nonnegative(),
  value: z.string().describe("repr() of the trailing expression"),
  error: ErrorInfoSchema,
  images: z.array(ImageSchema).max(32),
  files: z.array(OutputFileSchema).max(32),
  display_notes: z.array(z.string().max(1000)).max(32),
  table: TableSchema,
};

export const ResultFrameSchema = z.object({
  t: z.literal("result"),
  id: z.number().int().nonnegative(),
  ...Object.fromEntries(Object.entries(RESULT_PARTS).map(([k, s]) => [k, s.optional()])),
} as { t: z.ZodLiteral<"result">; id: z.ZodNumber } & { [K in keyof typeof RESULT_PARTS]: z.ZodOptional<(typeof RESULT_PARTS)[K]> });

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

/** A result is checked part by part (resultFrame below); the union only needs its envelope. */
const ResultEnvelopeSchema = z.object({ t: z.literal("result"), id: z.number().int().nonnegative() }).passthrough();

export const SandboxFrameSchema = z.discriminatedUnion("t", [ReadyFrameSchema, ResultEnvelopeSchema, RpcFrameSchema, OutputFrameSchema]);

export type ReadyFrame = z.infer<typeof ReadyFrameSchema>;
export type ResultFrame = z.infer<typeof ResultFrameSchema>;
export type RpcFrame = z.infer<typeof RpcFrameSchema>;
export type OutputFrame = z.infer<typeof OutputFrameSchema>;
export type OutputFile = z.infer<typeof OutputFileSchema>;
export type ImageData = z.infer<typeof ImageSchema>;
export type Table = z.infer<typeof TableSchema>;
export type SandboxFrame = Exclude<z.infer<typeof SandboxFrameSchema>, { t: "result" }> | ResultFrame;
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
  return { ok: true, frame: parsed.data.t === "result" ? resultFrame(parsed.data) : parsed.data };
}

/**
 * A result with every part checked on its own: a part out of bounds (a forged table, too many files)
 * is left out with a note saying so, and the run still gets its result.
 */
function resultFrame(raw: { id: number } & Record<string, unknown>): ResultFrame {
  const frame: ResultFrame = { t: "result", id: raw.id };
  const refused: string[] = [];
  for (const [key, schema] of Object.entries(RESULT_PARTS)) {
    if (raw[key] === undefined) continue;
    const part = schema.safeParse(raw[key]);
    if (part.success) (frame as Record<string, unknown>)[key] = part.data;
    else
      refused.push(
        `the bridge refused this result's ${key.replace("_", " ")}: ${formatIssues(part.error.issues, { max: 2 }).slice(0, 300)}`,
      );
  }
  if (refused.length) frame.display_notes = [...(frame.display_notes ?? []), ...refused];
  return frame;
}

function preview(s: string): string {
  return JSON.stringify(s.length > 120 ? `${s.slice(0, 120)}…` : s);
}

/**
 * Splits a byte stream into lines with a cap: a line longer than maxBytes is dropped whole instead of
 * growing the buffer without bound, and a line that cannot be a frame (empty, or not starting with `{`)
 * is reported without being decoded. Both go to onBad; stop() drops whatever is still queued.
 */
export class LineSplitter {
  #chunks: Uint8Array[] = [];
  #size = 0;
  #skipping = false;
  #stopped = false;
  readonly #decoder = new TextDecoder("utf-8", { fatal: false });

  constructor(
    readonly maxBytes: number,
    readonly onLine: (line: string, bytes: number) => void,
    readonly onBad: (problem: string, bytes: number) => void,
  ) {}

  stop(): void {
    this.#stopped = true;
    this.#chunks = [];
  }

  push(chunk: Uint8Array): void {
    let start = 0;
    while (start < chunk.length && !this.#stopped) {
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
    const size = this.#size;
    if (this.#skipping) this.onBad(`frame of ${size} bytes exceeds the ${this.maxBytes}-byte cap`, size);
    else if (size === 0) this.onBad("empty line", 0);
    else if (this.#chunks[0]![0] !== 0x7b) this.onBad("not a frame: does not start with {", size);
    else {
      const buf = this.#chunks.length === 1 ? this.#chunks[0]! : concat(this.#chunks, size);
      this.onLine(this.#decoder.decode(buf), size);
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
