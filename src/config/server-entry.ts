/**
 * The transport the bridge starts, recognising the bridge itself (also behind a wrapper script or a
 * package runner), and canonical hashing.
 */
import { sha256Hex } from "../host/hash.ts";
import * as fs from "node:fs";
import * as path from "node:path";

export const PACKAGE_NAME = "mcp-code-exec";

/** OAuth client settings of a remote server (Claude Code's `oauth`, VS Code's, Cursor's `auth`), variables expanded. */
export interface OAuthSettings {
  clientId?: string;
  clientSecret?: string;
  callbackPort?: number;
  authServerMetadataUrl?: string;
  scopes?: string;
}

export type ServerTransport =
  | {
      type: "stdio";
      command: string;
      args: string[];
      env: Record<string, string>;
      cwd?: string;
      /** An envFile that is a named pipe, read when the server starts; `env` wins over what it gives. */
      envPipe?: string;
    }
  | {
      type: "http" | "sse";
      url: string;
      headers: Record<string, string>;
      /** Claude Code: a shell command printing a JSON object of headers, run on the host at each connection (trusted servers only). */
      headersHelper?: string;
      oauth?: OAuthSettings;
    };

/** Last path component, splitting on both separators. */
function baseName(p: string): string {
  const parts = p.split(/[\\/]/);
  return parts[parts.length - 1] ?? p;
}

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function looksLikeSelf(token: string, dir: string): boolean {
  const t = token.trim();
  if (t === "") return false;
  // Package specs: mcp-code-exec, mcp-code-exec@latest, npm:mcp-code-exec@1.2.
  const spec = t.startsWith("npm:") ? t.slice(4) : t;
  if (spec === PACKAGE_NAME || spec.startsWith(`${PACKAGE_NAME}@`)) return true;
  // Paths / binaries: .../mcp-code-exec, dist/mcp-code-exec, mcp-code-exec.exe.
  const base = baseName(t).toLowerCase();
  if (base !== PACKAGE_NAME && base !== `${PACKAGE_NAME}.exe` && base !== `${PACKAGE_NAME}.cmd`) return false;
  // An existing *directory* of that name (e.g. a checkout handed to a filesystem
  // server as its root) is not a launcher.
  return !((t.includes("/") || t.includes("\\")) && isDirectory(path.resolve(dir, t)));
}

function realOrResolved(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}

/** Does this stdio transport launch the bridge itself? Returns the matching token. */
export function selfReference(
  t: Extract<ServerTransport, { type: "stdio" }>,
  selfPaths: readonly string[],
  baseDir: string,
  pathVar = "",
): string | undefined {
  const tokens = [t.command, ...t.args];
  const dir = t.cwd ?? baseDir;
  for (const tok of tokens) if (looksLikeSelf(tok, dir)) return tok;
  // `sh -c "exec mcp-code-exec"`, `cmd /c npx mcp-code-exec`: a word inside an argument.
  for (const tok of t.args) for (const word of tok.split(/[\s;&|()'"`]+/)) if (word && word !== tok && looksLikeSelf(word, dir)) return tok;
  const selves = new Set<string>();
  for (const s of selfPaths) {
    const abs = path.resolve(baseDir, s);
    selves.add(abs);
    selves.add(realOrResolved(abs));
  }
  const files = [resolveCommand(t.command, dir, pathVar), ...t.args.filter(isPathLike).map((a) => path.resolve(dir, a))].filter(
    (f): f is string => !!f,
  );
  for (const f of files) if (selves.has(f) || selves.has(realOrResolved(f))) return f;
  // A wrapper script (a shell script, a .cmd) that launches the bridge: read it.
  for (const f of files) {
    const body = smallScript(f);
    if (body === undefined) continue;
    for (const word of body.split(/[\s;&|()'"`=]+/)) if (word && (looksLikeSelf(word, path.dirname(f)) || selves.has(word))) return f;
  }
  return undefined;
}

function isPathLike(tok: string): boolean {
  return path.isAbsolute(tok) || tok.includes("/") || tok.includes("\\");
}

/** The file a command names: a path as is, a bare name through PATH. */
function resolveCommand(command: string, dir: string, pathVar: string): string | undefined {
  if (isPathLike(command)) return path.resolve(dir, command);
  for (const d of pathVar.split(path.delimiter)) {
    if (!d) continue;
    for (const ext of ["", ".cmd", ".bat", ".sh"]) {
      const f = path.join(d, command + ext);
      try {
        if (fs.statSync(f).isFile()) return f;
      } catch {
        // not here
      }
    }
  }
  return undefined;
}

/** The text of a small script (shebang, or a .sh/.cmd/.bat/.ps1 file), or undefined. */
function smallScript(file: string): string | undefined {
  try {
    const st = fs.statSync(file);
    if (!st.isFile() || st.size > 64 * 1024) return undefined;
    const text = fs.readFileSync(file, "utf8");
    if (text.startsWith("#!") || /\.(sh|cmd|bat|ps1)$/i.test(file)) return text.includes("\0") ? undefined : text;
  } catch {
    // unreadable: not a wrapper we can see into
  }
  return undefined;
}

/** JSON with object keys sorted recursively; `undefined` members dropped. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj)
      .filter((k) => obj[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

export function hashTransport(t: ServerTransport): string {
  return sha256Hex(canonicalJson(t));
}
