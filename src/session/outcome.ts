/**
 * A run's outcome as the renderers see it, assembled from the sandbox's result frame. The sandbox caps
 * what it sends; everything is capped again here, because a forged frame must not get past the caps.
 */
import type { Config } from "../config/env.ts";
import type { PolicyRefusal } from "../policy.ts";
import type { ErrorInfo, ImageData, OutputFile, ResultFrame, Table } from "../sandbox/frames.ts";
import { DISPLAY_DEFAULTS } from "../sandbox/protocol.ts";

/** The sandbox's own cap for a trailing value or a traceback; enforced again on the host. */
export const MAX_VALUE_BYTES = 64 * 1024;
/** Images a run returns at most; the sandbox stops at the same number (protocol.ts). */
export const MAX_IMAGES: number = DISPLAY_DEFAULTS.max_images;

export interface RunOutcome {
  stdout?: string;
  stderr?: string;
  value?: string;
  error?: ErrorInfo;
  stdoutDropped?: number;
  stderrDropped?: number;
  images?: ImageData[];
  files?: OutputFile[];
  displayNotes?: string[];
  table?: Table;
  outputCap: number;
  timedOut?: boolean;
  cancelled?: boolean;
  /** Set when the interpreter state was lost: why, in words a model can act on. */
  sessionReset?: string;
  durationMs: number;
  /** The session's handle, when the caller is told it (it named one, or the bridge serves many). */
  session?: string;
  notes: string[];
}

/** How the run ended, as the session's timeout ladder saw it. */
export interface RunEnding {
  frame?: ResultFrame;
  timedOut: boolean;
  cancelled: boolean;
  /** Why the interpreter state was lost during this run, when it was. */
  sessionReset?: string;
  timeoutSec: number;
}

/** The outcome of a run that reached the sandbox. */
export function assembleOutcome(end: RunEnding, config: Config, notes: string[], durationMs: number): RunOutcome {
  const outcome: RunOutcome = { outputCap: config.outputCap, durationMs, notes };
  const { frame } = end;
  if (frame) Object.assign(outcome, fromFrame(frame, config));
  if (end.timedOut || end.cancelled) {
    const what = end.timedOut ? `timed out after ${formatSeconds(end.timeoutSec)}` : "was cancelled by the client";
    outcome.timedOut = end.timedOut || undefined;
    outcome.cancelled = end.cancelled || undefined;
    const type = end.timedOut ? "TimeoutError" : "Cancelled";
    const message = end.sessionReset
      ? `run_python ${what}; ${end.sessionReset}`
      : `run_python ${what} and was interrupted; the session and its variables were kept`;
    // Where the code was when it was interrupted helps the model fix it.
    const where = frame?.error?.traceback ? `\n${frame.error.traceback.replace(/KeyboardInterrupt\s*$/, "").trimEnd()}` : "";
    outcome.error = { type, message, traceback: `${type}: ${message}${where}` };
  } else if (end.sessionReset) {
    outcome.error = { type: "SandboxExited", message: end.sessionReset, traceback: "" };
  }
  if (end.sessionReset) outcome.sessionReset = end.sessionReset;
  return outcome;
}

/** The parts of a result frame the renderers show, each within its cap. */
function fromFrame(frame: ResultFrame, config: Config): Partial<RunOutcome> {
  const out: Partial<RunOutcome> = {};
  const cap = config.outputCap;
  const [stdout, stdoutOver] = capText(frame.stdout, cap);
  const [stderr, stderrOver] = capText(frame.stderr, cap);
  if (stdout) out.stdout = stdout;
  if (stderr) out.stderr = stderr;
  if ((frame.stdout_dropped ?? 0) + stdoutOver) out.stdoutDropped = (frame.stdout_dropped ?? 0) + stdoutOver;
  if ((frame.stderr_dropped ?? 0) + stderrOver) out.stderrDropped = (frame.stderr_dropped ?? 0) + stderrOver;
  if (frame.value !== undefined) out.value = capText(frame.value, MAX_VALUE_BYTES)[0];
  if (frame.error) {
    out.error = {
      type: capText(frame.error.type, 200)[0]!,
      message: capText(frame.error.message, MAX_VALUE_BYTES)[0]!,
      traceback: capText(frame.error.traceback, MAX_VALUE_BYTES)[0]!,
    };
  }
  const { images, files, notes } = checkDisplay(frame, config);
  if (images.length) out.images = images;
  if (files.length) out.files = files;
  if (notes.length) out.displayNotes = notes;
  if (frame.table) out.table = frame.table;
  return out;
}

/** The outcome of a run the bridge refused before it reached the sandbox. */
export function refused(err: PolicyRefusal, outputCap: number): RunOutcome {
  return {
    outputCap,
    durationMs: 0,
    notes: [],
    error: { type: "PolicyRefusal", message: err.message, traceback: `PolicyRefusal: ${err.message}` },
  };
}

/** The outcome of a run cancelled while it waited for the one before it. */
export function cancelledBeforeStart(outputCap: number, notes: string[]): RunOutcome {
  const message = "run_python was cancelled by the client before it started";
  return { outputCap, durationMs: 0, notes, cancelled: true, error: { type: "Cancelled", message, traceback: `Cancelled: ${message}` } };
}

/** Cut text to at most `max` UTF-16 units; returns the text and how many UTF-8 bytes were cut. */
export function capText(text: string | undefined, max: number): [string | undefined, number] {
  if (text === undefined || text.length <= max) return [text, 0];
  return [text.slice(0, max), new TextEncoder().encode(text.slice(max)).length];
}

/**
 * The sandbox said what it sends; the host checks the sizes again (base64 decoded) before passing them
 * on, and keeps images and files within one budget per run (MCP_BRIDGE_RESULT_CAP), so that the whole
 * response stays under what clients accept (the MCP SDK's stdio client drops a message over 10 MiB).
 */
function checkDisplay(frame: ResultFrame, config: Config): { images: ImageData[]; files: OutputFile[]; notes: string[] } {
  const notes = [...(frame.display_notes ?? [])].slice(0, 32);
  const decoded = (b64: string) => Math.floor((b64.length * 3) / 4);
  let spent = 0;
  const afford = (size: number, what: string) => {
    if (spent + size <= config.resultCap) {
      spent += size;
      return true;
    }
    notes.push(
      `${what} dropped by the bridge: a run's images and files are capped at ${Math.floor(config.resultCap / 1024)} KiB in all (MCP_BRIDGE_RESULT_CAP); return fewer or smaller ones per call`,
    );
    return false;
  };
  const images = (frame.images ?? []).filter((img, i) => {
    if (i >= MAX_IMAGES) {
      if (i === MAX_IMAGES) notes.push(`images after the first ${MAX_IMAGES} dropped by the bridge`);
      return false;
    }
    if (decoded(img.data) > config.imageCap) {
      notes.push(`image ${i + 1} dropped by the bridge: over the ${config.imageCap}-byte cap (MCP_BRIDGE_IMAGE_CAP)`);
      return false;
    }
    return afford(img.data.length, `image ${i + 1}`);
  });
  let total = 0;
  const files = (frame.files ?? []).slice(0, 10).filter((f) => {
    const size = f.text !== undefined ? new TextEncoder().encode(f.text).length : decoded(f.data ?? "");
    total += size;
    if (size > config.fileCap || total > config.fileCap * 4) {
      notes.push(`${f.name} dropped by the bridge: over the file cap (MCP_BRIDGE_FILE_CAP)`);
      return false;
    }
    return afford(f.text !== undefined ? size : (f.data ?? "").length, f.name);
  });
  return { images, files, notes };
}

export function formatSeconds(s: number): string {
  return Number.isInteger(s) ? `${s}s` : `${s.toFixed(1)}s`;
}
