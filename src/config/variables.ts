/**
 * Variable substitution in each client's own syntax, with that client's rule for an unset variable.
 * A value only the client itself can supply (a VS Code `${input:…}` prompt, a Continue secret) becomes
 * a Need with the way to supply it to the bridge instead.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { specialFile } from "./config-file.ts";
import type { Need } from "./definition.ts";
import type { PathSegment } from "./server-schemas.ts";
import { formatJsonPath } from "./server-schemas.ts";
import { envValue, expandHome } from "./server-sources.ts";

export type VarSyntax =
  /** Our own files: ${VAR}, ${env:VAR}, ${VAR:-default}, ${workspaceFolder}, ${userHome}; unset is an error. */
  | "bridge"
  /** Claude Code: ${VAR}, ${VAR:-default}; unset is kept as written, with a warning. */
  | "claude"
  /** VS Code: ${env:X} (unset: empty), predefined variables, ${input:id}. */
  | "vscode"
  /** Cursor: ${env:X}, ${userHome}, ${workspaceFolder}, ${workspaceFolderBasename}. */
  | "cursor"
  /** Windsurf: ${env:X}, ${file:/path}. */
  | "windsurf"
  /** Gemini CLI: $VAR and ${VAR}; unset is kept as written. */
  | "gemini"
  /** GitHub Copilot CLI: $VAR, ${VAR}, ${VAR:-default}; unset is kept as written. */
  | "copilot"
  /** opencode: {env:X} (unset: empty), {file:path}. */
  | "opencode"
  /** Continue: ${{ secrets.NAME }} from the environment or ~/.continue/.env. */
  | "continue"
  /** No substitution (Claude Desktop, Codex, Zed, Cline, Goose). */
  | "none";

export interface VarContext {
  env: Record<string, string | undefined>;
  home: string;
  /** The bridge's working folder: the workspace folder for VS Code and Cursor. */
  cwd: string;
  platform: NodeJS.Platform;
  /** Folder of the file being read (relative paths in {file:...} and envFile). */
  fileDir: string;
  /** Values for ${input:id} from our config file's "inputs". */
  inputs: Record<string, string>;
  /** Where our inputs live, for the hint. */
  settingsFile: string;
  /** Continue's own .env files, read on demand. */
  continueSecrets?: () => Record<string, string>;
}

interface Sink {
  needs: Need[];
  /** Files whose contents became part of a value (the approval digest covers them). */
  filesRead?: string[];
  warnings: string[];
  problems: Array<{ path: PathSegment[]; message: string }>;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function inputEnvName(id: string): string {
  return `MCP_BRIDGE_INPUT_${id.toUpperCase().replace(/[^A-Z0-9]+/g, "_")}`;
}

export function expandVariables(value: string, syntax: VarSyntax, at: PathSegment[], ctx: VarContext, sink: Sink): string {
  const env = (n: string) => envValue(ctx.env, n, ctx.platform);
  const where = formatJsonPath(at);
  switch (syntax) {
    case "none":
      return value;
    case "bridge":
      return value.replace(/\$\{([^{}]*)\}/g, (whole, inner: string) => {
        const body = inner.trim();
        const m = /^(env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s.exec(body);
        if (!m) {
          if (/^input:/.test(body)) return vscodeInput(body.slice(6), whole, where, ctx, sink);
          if (/^[A-Za-z]+:/.test(body)) sink.problems.push({ path: at, message: `unsupported variable ${whole}` });
          return whole;
        }
        const [, envOnly, name, fallback] = m;
        const v = env(name!);
        if (fallback !== undefined) return v === undefined || v === "" ? fallback : v;
        if (v !== undefined) return v;
        if (!envOnly && name === "workspaceFolder") return ctx.cwd;
        if (!envOnly && name === "userHome") return ctx.home;
        sink.problems.push({ path: at, message: `environment variable ${name} is not defined (used as ${whole}); server skipped` });
        return whole;
      });
    case "claude":
      return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (whole, name: string, fallback: string | undefined) => {
        const v = env(name);
        if (fallback !== undefined) return v === undefined || v === "" ? fallback : v;
        if (v !== undefined) return v;
        sink.warnings.push(
          `${where}: environment variable ${name} is not set, so ${whole} is passed as written (as Claude Code does); set it or use \${${name}:-default}`,
        );
        return whole;
      });
    case "vscode":
    case "cursor":
      return value.replace(/\$\{([^{}]+)\}/g, (whole, inner: string) => {
        if (inner.startsWith("env:")) return env(inner.slice(4)) ?? "";
        if (inner === "workspaceFolder" || inner === "workspaceRoot" || inner === "cwd") return ctx.cwd;
        if (inner === "workspaceFolderBasename") return path.basename(ctx.cwd);
        if (inner === "userHome") return ctx.home;
        if (inner === "pathSeparator" || inner === "/") return ctx.platform === "win32" ? "\\" : "/";
        if (syntax === "vscode" && inner.startsWith("input:")) return vscodeInput(inner.slice(6), whole, where, ctx, sink);
        if (/^(config|command|input):/.test(inner)) {
          sink.needs.push({
            what: whole,
            at: where,
            why: `only ${syntax === "vscode" ? "VS Code" : "Cursor"} can resolve it`,
            supply: "write the value itself in the file, or define the server in ~/.config/mcp/servers/NAME.json (read before any client)",
          });
          return whole;
        }
        sink.warnings.push(`${where}: ${whole} is an editor variable the bridge cannot resolve; passed as written`);
        return whole;
      });
    case "windsurf":
      return value.replace(/\$\{(env|file):([^{}]+)\}/g, (whole, kind: string, arg: string) => {
        if (kind === "env") return env(arg) ?? "";
        return readValueFile(arg, whole, where, ctx, sink);
      });
    case "gemini":
      return value.replace(
        /\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g,
        (whole, a: string | undefined, b: string | undefined) => env((a ?? b)!) ?? whole,
      );
    case "copilot":
      return value.replace(
        /\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g,
        (whole, braced: string | undefined, fallback: string | undefined, bare: string | undefined) => {
          const v = env((braced ?? bare)!);
          if (fallback !== undefined) return v === undefined || v === "" ? fallback : v;
          return v ?? whole;
        },
      );
    case "opencode":
      return value.replace(/\{(env|file):([^{}]+)\}/g, (whole, kind: string, arg: string) => {
        if (kind === "env") return env(arg.trim()) ?? "";
        return readValueFile(arg.trim(), whole, where, ctx, sink);
      });
    case "continue":
      return value.replace(/\$\{\{\s*(secrets|inputs)\.([A-Za-z0-9_-]+)\s*\}\}/g, (whole, kind: string, name: string) => {
        const v = env(name) ?? (kind === "secrets" ? ctx.continueSecrets?.()[name] : undefined);
        if (v !== undefined) return v;
        sink.needs.push({
          what: whole,
          at: where,
          why: kind === "secrets" ? "Continue keeps this secret itself (its hub or .env files)" : "Continue asks for this input itself",
          supply: `set ${NAME.test(name) ? name : `the variable ${name}`} in the bridge's environment or in ~/.continue/.env`,
        });
        return whole;
      });
  }
}

function vscodeInput(id: string, whole: string, where: string, ctx: VarContext, sink: Sink): string {
  const fromEnv = envValue(ctx.env, inputEnvName(id), ctx.platform);
  if (fromEnv !== undefined) return fromEnv;
  if (ctx.inputs[id] !== undefined) return ctx.inputs[id]!;
  sink.needs.push({
    what: whole,
    at: where,
    why: "VS Code prompts for it and keeps the answer in its own secret storage",
    supply: `set ${inputEnvName(id)} in the bridge's environment, or add "inputs": {${JSON.stringify(id)}: "..."} to ${ctx.settingsFile}`,
  });
  return whole;
}

function readValueFile(p: string, whole: string, where: string, ctx: VarContext, sink: Sink): string {
  const file = path.resolve(ctx.fileDir, expandHome(p, ctx.home));
  sink.filesRead?.push(file);
  try {
    // A named pipe (a secret manager's mount) would hold the bridge's start until something writes to it.
    const special = specialFile(file);
    if (special) throw new Error(`it is ${special}, not a file, and is not read when the bridge starts`);
    return fs.readFileSync(file, "utf8").replace(/\r?\n$/, "");
  } catch (e) {
    sink.needs.push({
      what: whole,
      at: where,
      why: `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      supply: `create ${file}`,
    });
    return whole;
  }
}

/** `value` with `fn` applied to every string in it, at any depth (objects and arrays rebuilt, keys kept). */
export function mapStrings(value: unknown, fn: (s: string) => string): unknown {
  if (typeof value === "string") return fn(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, fn));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, fn)]));
  return value;
}
