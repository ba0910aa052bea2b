/**
 * The audit log: one JSON line per proxied tool call (who decided, what came of it, a digest of the
 * arguments, never the arguments), in `audit.jsonl` in the state dir, readable by the user only.
 * Lines written in one turn of the event loop go out in one append; at `maxBytes` the file is rotated
 * to audit.jsonl.1 (.1 to .2, ... the oldest of KEEP dropped). Several bridges may share the file:
 * each append is one write to a file opened for appending, and a bridge rotates only the file it holds.
 *
 * Sandbox code must not be able to flush the record of what it did. Three things hold that:
 * - every call counts against the run's call budget, refused ones too (request-gate.ts);
 * - a call that never reached a server (refused, unknown server or tool, over budget) is written once
 *   per run and kind, and its repeats become one line with their count when the run ends;
 * - before the oldest rotated file is dropped, its lines where a person was asked (or should have
 *   been) move to `audit.decisions.jsonl`, which sandbox volume does not rotate.
 */
import { createHash } from "node:crypto";
import { appendFileSync, closeSync, fstatSync, mkdirSync, openSync, readFileSync, renameSync, statSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import type { DecidedBy } from "../approvals/decide.ts";
import type { Logger } from "../log.ts";

/** How often a bridge looks whether another one rotated the file. */
const RECHECK_MS = 1_000;

/** Rotated files kept beside the current one. */
export const KEEP = 3;
export const AUDIT_FILE = "audit.jsonl";
/** Lines of dropped files that record a person's decision (or its absence). */
export const DECISIONS_FILE = "audit.decisions.jsonl";

export interface AuditRecord {
  /** When the call was made (ISO 8601, UTC). */
  ts: string;
  /** Who the call was made for, on a bridge serving several users (`token:alice`, `oidc:<subject>`). */
  principal?: string;
  run: string;
  call: string;
  server: string;
  tool: string;
  /** allow or deny; absent when the call failed before a decision (unknown tool, server not loaded). */
  decision?: "allow" | "deny";
  by?: DecidedBy;
  /** What the person asked answered (once, session, deny, decline, cancel), or why nobody did (timeout, unsupported, unanswered-earlier), or remembered. */
  answer?: string;
  /** ok, tool_error (the tool's own error result), refused, or the failure's kind (timeout, crashed, cancelled, ...). */
  outcome: string;
  /** Milliseconds from the request to its answer, time waiting for a person included. */
  ms: number;
  /** Milliseconds spent waiting for a person. */
  wait_ms?: number;
  /** First 32 hex digits of SHA-256 over the arguments as JSON with sorted keys. */
  args_sha256: string;
  /** A line standing for this many more calls of the run with the same server, tool, decision and outcome (none reached a server). */
  repeated?: number;
  /** When the last of the repeated calls was made. */
  last_ts?: string;
}

/** Logs whose pending lines are written when the process exits. */
const OPEN = new Set<AuditLog>();
let exitHooked = false;

export function auditPath(stateDir: string): string {
  return join(stateDir, AUDIT_FILE);
}

/** Where the decisions of dropped files are kept, beside `path`. */
export function decisionsPath(path: string): string {
  return join(dirname(path), DECISIONS_FILE);
}

/** A line where a person was asked, or should have been (an answer other than one remembered). */
export function isDecision(r: Pick<AuditRecord, "answer">): boolean {
  return r.answer !== undefined && r.answer !== "remembered";
}

export class AuditLog {
  readonly path: string;
  #maxBytes: number;
  #log: Logger | undefined;
  #fd: number | undefined;
  #pending: Array<{ record: Omit<AuditRecord, "args_sha256">; args: unknown } | { line: string }> = [];
  #scheduled = false;
  #broken = false;
  #checkedAt = Number.NEGATIVE_INFINITY;
  /** Calls that reached no server, per run and kind: the first was written, the rest are counted. */
  #repeats = new Map<string, Map<string, { record: Omit<AuditRecord, "args_sha256">; args: unknown; count: number; last: string }>>();

  constructor(opts: { path: string; maxBytes: number; log?: Logger }) {
    this.path = opts.path;
    this.#maxBytes = opts.maxBytes;
    this.#log = opts.log;
    if (!exitHooked) process.once("exit", () => OPEN.forEach((l) => l.flush()));
    exitHooked = true;
    OPEN.add(this);
  }

  /** One call's line; the digest of its arguments is taken when the line is written, after the reply went out. */
  write(record: Omit<AuditRecord, "args_sha256">, args: unknown): void {
    this.#pending.push({ record, args });
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** A line that is not a tool call (an install: src/packages/install.ts); written as given, after `ts`. */
  event(record: { event: string } & Record<string, unknown>): void {
    this.#pending.push({ line: JSON.stringify({ ts: new Date().toISOString(), ...record }) });
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /**
   * A call that reached no server: written the first time its kind is seen in the run, counted after
   * that; `runEnded` aborts when the run ends, and the count is written then as one line.
   */
  writeUnsent(record: Omit<AuditRecord, "args_sha256">, args: unknown, runEnded: AbortSignal): void {
    let kinds = this.#repeats.get(record.run);
    if (!kinds) {
      const made = new Map();
      kinds = made;
      this.#repeats.set(record.run, made);
      const done = () => this.#endRun(record.run);
      if (runEnded.aborted) queueMicrotask(done);
      else runEnded.addEventListener("abort", done, { once: true });
    }
    const kind = `${record.server}\0${record.tool}\0${record.decision}\0${record.by}\0${record.answer}\0${record.outcome}`;
    const seen = kinds.get(kind);
    if (seen) {
      seen.count++;
      seen.last = record.ts;
      seen.args = args;
      return;
    }
    kinds.set(kind, { record, args, count: 0, last: record.ts });
    this.write(record, args);
  }

  #endRun(run: string): void {
    const kinds = this.#repeats.get(run);
    this.#repeats.delete(run);
    for (const { record, args, count, last } of kinds?.values() ?? [])
      if (count > 0) this.write({ ...record, call: `${record.call}+`, repeated: count, last_ts: last }, args);
  }

  /** Write what is pending now (also at exit). */
  flush(): void {
    this.#scheduled = false;
    if (!this.#pending.length) return;
    const data = this.#pending
      .map((p) => ("line" in p ? `${p.line}\n` : `${JSON.stringify({ ...p.record, args_sha256: argsDigest(p.args) })}\n`))
      .join("");
    this.#pending = [];
    try {
      // Whether another bridge rotated the file is looked at once a second (a path lookup costs more
      // than the write); until then a line or two may land at the end of the file it rotated away.
      if (performance.now() - this.#checkedAt > RECHECK_MS) {
        this.#checkedAt = performance.now();
        if (fstatSync(this.#open()).ino !== inode(this.path)) this.#close();
      }
      const size = fstatSync(this.#open()).size;
      if (size > 0 && size + Buffer.byteLength(data) > this.#maxBytes) this.#rotate();
      writeSync(this.#open(), data);
    } catch (err) {
      // The calls themselves go on: an audit log that cannot be written is reported, once.
      if (!this.#broken) this.#log?.error("cannot write the audit log", { path: this.path, error: (err as Error).message });
      this.#broken = true;
      this.#close();
    }
  }

  close(): void {
    for (const run of [...this.#repeats.keys()]) this.#endRun(run);
    this.flush();
    this.#close();
    OPEN.delete(this);
  }

  #open(): number {
    if (this.#fd === undefined) {
      mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
      this.#fd = openSync(this.path, "a", 0o600);
      this.#broken = false;
    }
    return this.#fd;
  }

  #close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
    this.#checkedAt = Number.NEGATIVE_INFINITY;
  }

  #rotate(): void {
    // Another bridge may have rotated it already; then only reopen.
    if (inode(this.path) === fstatSync(this.#fd!).ino) {
      keepDecisions(`${this.path}.${KEEP}`, decisionsPath(this.path));
      for (let i = KEEP - 1; i >= 1; i--) {
        try {
          renameSync(`${this.path}.${i}`, `${this.path}.${i + 1}`);
        } catch {
          // not there yet
        }
      }
      renameSync(this.path, `${this.path}.1`);
    }
    this.#close();
  }
}

/** The decisions of a file about to be dropped, appended to the decisions file. */
function keepDecisions(dropped: string, into: string): void {
  let text: string;
  try {
    text = readFileSync(dropped, "utf8");
  } catch {
    return; // not there yet
  }
  const kept = text.split("\n").filter((line) => {
    try {
      return line !== "" && isDecision(JSON.parse(line) as AuditRecord);
    } catch {
      return false;
    }
  });
  if (kept.length) appendFileSync(into, `${kept.join("\n")}\n`, { mode: 0o600 });
}

function inode(path: string): number | undefined {
  try {
    return statSync(path).ino;
  } catch {
    return undefined;
  }
}

/** The digest the audit log keeps of a call's arguments. */
export function argsDigest(args: unknown): string {
  return createHash("sha256").update(stableJson(args)).digest("hex").slice(0, 32);
}

/** JSON with object keys sorted, so equal arguments give equal digests. */
export function stableJson(v: unknown): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v) ?? "null";
  if (Array.isArray(v)) return `[${v.map(stableJson).join(",")}]`;
  const keys = Object.keys(v).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`).join(",")}}`;
}
