/**
 * `mcp-code-exec audit [--follow] [--json] [--lines N]`: the audit log of proxied calls, oldest first,
 * rotated files included; `--follow` keeps printing what bridges append, across rotations.
 */
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { loadConfig } from "../config/env.ts";
import { homedir } from "node:os";
import { auditPath, decisionsPath, KEEP, type AuditRecord } from "../audit/audit-log.ts";

export interface AuditOptions {
  follow?: boolean;
  json?: boolean;
  lines?: number;
}

const POLL_MS = 250;

/** `stop` ends `--follow` (the command stops it on Ctrl-C). */
export async function audit(
  opts: AuditOptions,
  env: Record<string, string | undefined> = process.env,
  out: (s: string) => void = (s) => process.stdout.write(s),
  stop?: AbortSignal,
): Promise<number> {
  const config = loadConfig(env, env.HOME || homedir());
  const path = auditPath(config.stateDir);
  // The decisions kept from dropped files are older than anything in the rotated files.
  const files = [decisionsPath(path), ...Array.from({ length: KEEP }, (_, i) => `${path}.${KEEP - i}`), path].filter((f) => existsSync(f));
  let lines = files.flatMap((f) => readFileSync(f, "utf8").split("\n").filter(Boolean));
  if (opts.lines !== undefined) lines = lines.slice(-opts.lines);
  const print = (line: string) => out(`${opts.json ? line : humanLine(line)}\n`);
  if (!lines.length && !opts.follow) {
    process.stderr.write(`No proxied calls recorded yet (${path}).\n`);
    return 0;
  }
  lines.forEach(print);
  if (!opts.follow) return 0;
  const interrupted = new AbortController();
  process.once("SIGINT", () => interrupted.abort());
  await follow(path, print, stop ? AbortSignal.any([stop, interrupted.signal]) : interrupted.signal);
  return 0;
}

/** Print lines appended to `path` until interrupted; a rotated file is read to its end, then the new one. */
async function follow(path: string, print: (line: string) => void, stop: AbortSignal): Promise<void> {
  let fd: number | undefined;
  let ino: number | undefined;
  let partial = "";
  const open = (atEnd: boolean) => {
    try {
      fd = openSync(path, "r");
      const st = fstatSync(fd);
      ino = st.ino;
      return atEnd ? st.size : 0;
    } catch {
      fd = undefined;
      return 0;
    }
  };
  let offset = open(true);
  const drain = () => {
    if (fd === undefined) return;
    const buf = Buffer.alloc(64 * 1024);
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, offset);
      if (n <= 0) break;
      offset += n;
      partial += buf.subarray(0, n).toString("utf8");
      const parts = partial.split("\n");
      partial = parts.pop() ?? "";
      parts.filter(Boolean).forEach(print);
    }
  };
  while (!stop.aborted) {
    drain();
    let current: number | undefined;
    try {
      current = statSync(path).ino;
    } catch {
      current = undefined;
    }
    if (current !== undefined && current !== ino) {
      drain(); // the rest of the file that was rotated away
      if (fd !== undefined) closeSync(fd);
      partial = "";
      offset = open(false);
      continue;
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** One record as a person reads it; a line that is not a record is shown as it is. */
export function humanLine(line: string): string {
  let r: AuditRecord;
  try {
    r = JSON.parse(line) as AuditRecord;
  } catch {
    return line;
  }
  const ev = r as unknown as {
    event?: string;
    packages?: Array<{ name: string; version: string; sha256: string }>;
    source?: string;
    approved_by?: string;
  };
  if (ev.event === "install") {
    const pkgs = (ev.packages ?? []).map((p) => `${p.name}==${p.version} sha256:${String(p.sha256).slice(0, 12)}`).join(", ");
    return `${r.ts}  ${r.run}  install  ${pkgs || "(nothing)"}  from ${ev.source}  ${r.decision ?? ""} by ${ev.approved_by ?? r.by}  ${r.outcome}`;
  }
  const wait = r.wait_ms ? `, waited ${formatMs(r.wait_ms)}` : "";
  const decision = r.decision ? `${r.decision} by ${r.by}${r.answer ? ` (${r.answer}${wait})` : ""}` : "no decision";
  const repeated = r.repeated ? `  and ${r.repeated} more like it until ${r.last_ts}` : "";
  return `${r.ts}  ${r.principal ? `${r.principal} ` : ""}${r.run} ${r.call}  ${r.server}/${r.tool}  ${decision}  ${r.outcome}  ${formatMs(r.ms)}  args ${String(r.args_sha256).slice(0, 12)}${repeated}`;
}

function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
}
