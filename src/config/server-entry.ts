/**
 * Turning one validated config entry into a transport: variable substitution,
 * `~` expansion, self-reference detection, canonical hashing.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import type { PathSegment, RemoteServerInput, StdioServerInput } from "./server-schemas.ts";
import { envValue, expandHome } from "./server-sources.ts";

export const PACKAGE_NAME = "mcp-code-exec";

export type ServerTransport =
  | { type: "stdio"; command: string; args: string[]; env: Record<string, string>; cwd?: string }
  | { type: "http" | "sse"; url: string; headers: Record<string, string> };

export interface SubstContext {
  env: Record<string, string | undefined>;
  home: string;
  cwd: string;
  platform: NodeJS.Platform;
}

export interface SubstProblem {
  path: PathSegment[];
  message: string;
}

const VAR_RE = /\$\{([^{}]*)\}/g;
const NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Substitute `${VAR}`, `${env:VAR}` (VS Code) and `${VAR:-default}` (Claude Code)
 * from the bridge's environment. `${workspaceFolder}` / `${userHome}` (VS Code
 * predefined variables) resolve to the bridge cwd / home when not set in the
 * environment. Anything else in `${...}` that is not a variable reference is
 * left untouched. Undefined variables are pushed to `problems`.
 */
export function substitute(
  value: string,
  at: PathSegment[],
  ctx: SubstContext,
  problems: SubstProblem[],
): string {
  return value.replace(VAR_RE, (whole, inner: string) => {
    const body = inner.trim();
    let name = body;
    let fallback: string | undefined;
    let envOnly = false;
    const colon = body.indexOf(":");
    if (colon >= 0) {
      const prefix = body.slice(0, colon);
      const rest = body.slice(colon + 1);
      if (prefix === "env") {
        name = rest.trim();
        envOnly = true;
      } else if (rest.startsWith("-") && NAME_RE.test(prefix)) {
        name = prefix;
        fallback = rest.slice(1);
      } else if (/^[A-Za-z]+$/.test(prefix)) {
        // ${input:id}, ${config:x}, ${command:x} ... (VS Code): cannot be resolved here.
        problems.push({
          path: at,
          message:
            prefix === "input"
              ? `VS Code input variable ${whole} is not supported by the bridge; set an environment variable and use \${env:NAME} instead`
              : `unsupported variable ${whole}`,
        });
        return whole;
      } else return whole;
    }
    if (!NAME_RE.test(name)) return whole;
    const v = envValue(ctx.env, name, ctx.platform);
    if (fallback !== undefined) return v === undefined || v === "" ? fallback : v;
    if (v !== undefined) return v;
    if (!envOnly && name === "workspaceFolder") return ctx.cwd;
    if (!envOnly && name === "userHome") return ctx.home;
    problems.push({ path: at, message: `environment variable ${name} is not defined (used as ${whole}); server skipped` });
    return whole;
  });
}

function substMap(
  map: Record<string, string> | undefined,
  at: PathSegment[],
  ctx: SubstContext,
  problems: SubstProblem[],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(map ?? {})) out[k] = substitute(v, [...at, k], ctx, problems);
  return out;
}

export function buildStdio(
  entry: StdioServerInput,
  at: PathSegment[],
  ctx: SubstContext,
  problems: SubstProblem[],
): ServerTransport {
  const command = expandHome(substitute(entry.command, [...at, "command"], ctx, problems), ctx.home);
  const args = (entry.args ?? []).map((a, i) => substitute(a, [...at, "args", i], ctx, problems));
  const env = substMap(entry.env, [...at, "env"], ctx, problems);
  const t: ServerTransport = { type: "stdio", command, args, env };
  if (entry.cwd !== undefined) {
    const cwd = expandHome(substitute(entry.cwd, [...at, "cwd"], ctx, problems), ctx.home);
    t.cwd = path.resolve(ctx.cwd, cwd);
  }
  return t;
}

export function buildRemote(
  entry: RemoteServerInput,
  at: PathSegment[],
  ctx: SubstContext,
  problems: SubstProblem[],
): ServerTransport {
  const url = substitute(entry.url, [...at, "url"], ctx, problems);
  const headers = substMap(entry.headers, [...at, "headers"], ctx, problems);
  if (problems.length === 0) {
    let protocol = "";
    try {
      protocol = new URL(url).protocol;
    } catch {
      problems.push({ path: [...at, "url"], message: `not a valid URL: ${JSON.stringify(url)}` });
    }
    if (protocol && protocol !== "http:" && protocol !== "https:") {
      problems.push({ path: [...at, "url"], message: `expected an http or https URL, got ${protocol}` });
    }
  }
  return { type: entry.type === "sse" ? "sse" : "http", url, headers };
}

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
): string | undefined {
  const tokens = [t.command, ...t.args];
  const dir = t.cwd ?? baseDir;
  for (const tok of tokens) if (looksLikeSelf(tok, dir)) return tok;
  if (selfPaths.length > 0) {
    const selves = new Set<string>();
    for (const s of selfPaths) {
      const abs = path.resolve(baseDir, s);
      selves.add(abs);
      selves.add(realOrResolved(abs));
    }
    for (const tok of tokens) {
      if (!tok || !(path.isAbsolute(tok) || tok.includes("/") || tok.includes("\\"))) continue;
      const abs = path.resolve(dir, tok);
      if (selves.has(abs) || selves.has(realOrResolved(abs))) return tok;
    }
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
  return createHash("sha256").update(canonicalJson(t)).digest("hex");
}
