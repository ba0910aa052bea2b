/**
 * The server names the opening's instructions list, remembered per home and working folder, for starts
 * where finding them costs more than the client's patience: a heavy Claude Code user's ~/.claude.json
 * (hundreds of MB of project history) takes a scan of every byte before the bridge knows its servers.
 * Such a start answers `initialize` with the names the last start in this folder found, then scans.
 * What it finds is what the bridge serves; the list in the instructions is only a hint to the model,
 * and one that changed since the last start is logged and given from the next start on.
 *
 * Also remembered per folder: the servers run_python calls named in the last session there, which the
 * next one starts at `initialize` when prewarm is on (cli/serve-early.ts), before its first call.
 */
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as z from "zod";
import { sha256Hex } from "../host/hash.ts";

/** A ~/.claude.json at least this large is scanned after the opening when earlier names are known. */
export const LARGE_CLAUDE_JSON = 8 * 1024 * 1024;
const FILE = "opening-names.json";
/** Folders remembered (the oldest go). */
const KEEP = 64;

const RememberedSchema = z.record(z.string(), z.object({ names: z.array(z.string().max(200)).max(1000), at: z.number() }));

const keyOf = (home: string, cwd: string) => sha256Hex(`${home}\0${cwd}`).slice(0, 32);

/** Whether finding the servers means scanning a large client file (Claude Code's). */
export function slowToDiscover(home: string): boolean {
  try {
    return statSync(join(home, ".claude.json")).size >= LARGE_CLAUDE_JSON;
  } catch {
    return false;
  }
}

/** The names the last start in this folder found, if one did. */
export function rememberedNames(stateDir: string, home: string, cwd: string): string[] | undefined {
  return recall(join(stateDir, FILE), home, cwd);
}

/** Keep what this start found, for the next start in this folder. Never throws. */
export function rememberNames(stateDir: string, home: string, cwd: string, names: string[]): void {
  remember(join(stateDir, FILE), home, cwd, names);
}

const SERVERS_FILE = "used-servers.json";
/** At most this many servers the last session used are started at `initialize` (MCP_BRIDGE_PREWARM_SERVERS). */
export const PREWARM_SERVERS_MAX = 4;

/** The servers run_python calls named in the last session in this folder (none when none did). */
export function rememberedServers(stateDir: string, home: string, cwd: string): string[] {
  return recall(join(stateDir, SERVERS_FILE), home, cwd) ?? [];
}

/** Keep the servers this session's calls named, for the next session in this folder. Never throws. */
export function rememberServers(stateDir: string, home: string, cwd: string, names: string[]): void {
  remember(join(stateDir, SERVERS_FILE), home, cwd, names);
}

function recall(file: string, home: string, cwd: string): string[] | undefined {
  try {
    return RememberedSchema.parse(JSON.parse(readFileSync(file, "utf8")))[keyOf(home, cwd)]?.names;
  } catch {
    return undefined;
  }
}

function remember(file: string, home: string, cwd: string, names: string[]): void {
  const stateDir = join(file, "..");
  try {
    let all: z.infer<typeof RememberedSchema> = {};
    try {
      all = RememberedSchema.parse(JSON.parse(readFileSync(file, "utf8")));
    } catch {
      // none yet, or not ours
    }
    all[keyOf(home, cwd)] = { names, at: Date.now() };
    const kept = Object.entries(all)
      .sort((a, b) => b[1].at - a[1].at)
      .slice(0, KEEP);
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    writeFileSync(`${file}.${process.pid}`, JSON.stringify(Object.fromEntries(kept)), { mode: 0o600 });
    renameSync(`${file}.${process.pid}`, file);
  } catch {
    // a state dir that cannot be written: the next start finds nothing remembered (it scans before
    // answering, and starts no server before a call names it)
  }
}
