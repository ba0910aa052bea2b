/**
 * The digest an approval (`mcp-code-exec servers trust NAME`) is bound to: everything that changes what
 * runs on this computer or where data goes, so that any change asks again.
 *
 * - The entry as written, whole: command, args, env names and values, cwd, envFile, url, header names
 *   and values, headersHelper, and any other key a client reads (auto-approve lists among them). Values
 *   are hashed, never stored: the digest is one SHA-256 over all of it.
 * - The contents of the files the definition reads while it is built: envFile and `{file:…}` values.
 * - The contents of the files it names by path (the command, and any argument, env value or headersHelper
 *   word that is a path) when they lie in the repository the definition came from: a repository can change them
 *   after the approval (a pull brings a new `server.js`). A symlink there is followed: where it points
 *   and what it points at are both covered. Programs found on PATH (`node`, `npx`) and files outside
 *   the repository are the user's own and are not read.
 *
 * Not covered, and said so in docs/security.md: files those files load in turn (a module `server.js`
 * requires), and what a named-pipe envFile serves (reading it would consume it; a repository cannot
 * hold a pipe).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { sha256Hex } from "../host/hash.ts";
import type { ServerTransport } from "./server-entry.ts";
import { canonicalJson } from "./server-entry.ts";
import { insideFolder } from "./server-sources.ts";

/** The prefix of digests made this way; an approval stored with another one was made under older rules. */
export const DIGEST_PREFIX = "sha256-v2:";
/** Files larger than this are covered by size and modification time instead of contents. */
const MAX_HASHED_BYTES = 64 * 1024 * 1024;
/** Path-like words looked at per definition (a definition with more is still covered as written). */
const MAX_NAMED_FILES = 64;

export interface DigestInput {
  /** The entry as written in the client's file. */
  raw: Record<string, unknown>;
  /** What it becomes after substitution (where the named files are looked for). */
  transport?: ServerTransport;
  /** Files read while building it (envFile, `{file:…}`). */
  filesRead?: readonly string[];
  /** Folders the repository controls: files named there are covered by their contents. */
  roots?: readonly string[];
}

/** The digest of one definition. Reads files; call it only where trust is decided. */
export function definitionDigest(input: DigestInput): string {
  const files: Record<string, string> = {};
  for (const f of input.filesRead ?? []) files[f] = fileFingerprint(f);
  const roots = input.roots ?? [];
  if (roots.length && input.transport) for (const f of namedFiles(input.transport, roots)) files[f] ??= fileFingerprint(f);
  return `${DIGEST_PREFIX}${sha256Hex(canonicalJson({ entry: input.raw, files }))}`;
}

/** Whether `digest` was made by the rules in this file (older approvals covered less and must be renewed). */
export function isCurrentDigest(digest: string): boolean {
  return digest.startsWith(DIGEST_PREFIX);
}

/** Paths the transport names, resolved, that lie inside one of `roots` (or are symlinks there). */
function namedFiles(t: ServerTransport, roots: readonly string[]): string[] {
  const base = (t.type === "stdio" ? t.cwd : undefined) ?? roots[0]!;
  // A remote server's headersHelper is a command run on this computer, like a stdio server's.
  const values = t.type === "stdio" ? [t.command, ...t.args, ...Object.values(t.env)] : t.headersHelper ? [t.headersHelper] : [];
  const words = values.flatMap(pathWords);
  const out = new Set<string>();
  for (const w of words) {
    if (out.size >= MAX_NAMED_FILES) break;
    const p = path.resolve(base, w);
    if (roots.some((r) => insideFolder(r, p) !== undefined)) out.add(p);
  }
  return [...out];
}

/** The words of a value that name a path: they hold a slash (so `node` or `npx` found on PATH do not). */
function pathWords(value: string): string[] {
  return value
    .split(/[\s=,:;]+/)
    .map((w) => w.replace(/^['"]|['"]$/g, ""))
    .filter((w) => w.includes("/") && !/^[a-z][a-z0-9+.-]*:\/\//i.test(w) && w.length < 4096);
}

/** What a file is now: its contents' hash, or what stands there instead. A symlink adds its target. */
export function fileFingerprint(file: string): string {
  let link = "";
  try {
    if (fs.lstatSync(file).isSymbolicLink()) link = `link:${fs.realpathSync(file)};`;
  } catch {
    // absent, or a dangling link: stat below says which
  }
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch (e) {
    return `${link}absent:${(e as NodeJS.ErrnoException).code ?? "error"}`;
  }
  if (st.isDirectory()) return `${link}folder`;
  if (st.isFIFO()) return `${link}pipe`;
  if (!st.isFile()) return `${link}special`;
  if (st.size > MAX_HASHED_BYTES) return `${link}large:${st.size}:${st.mtimeMs}`;
  try {
    return `${link}sha256:${sha256Hex(fs.readFileSync(file))}`;
  } catch (e) {
    return `${link}unreadable:${(e as NodeJS.ErrnoException).code ?? "error"}`;
  }
}
