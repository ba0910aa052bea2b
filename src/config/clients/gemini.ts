/**
 * Gemini CLI: system settings (admin; GEMINI_CLI_SYSTEM_SETTINGS_PATH moves it) beat the workspace's
 * `.gemini/settings.json` (project scope) beat `~/.gemini/settings.json` (user). `mcpServers`: `url` is
 * SSE, `httpUrl` is Streamable HTTP; `$VAR` / `${VAR}` expand anywhere (unset: kept as written).
 * `mcp.excluded` / `mcp.allowed` turn servers off. A folder trusted in `~/.gemini/trustedFolders.json`
 * (TRUST_FOLDER, or TRUST_PARENT for its parent) counts as the client's approval of the workspace's servers.
 * Then the servers of installed extensions (`~/.gemini/extensions/<dir>/gemini-extension.json`, or where
 * a linked one's `.gemini-extension-install.json` points), each turned on or off for this folder by
 * `extension-enablement.json` (the last rule matching the folder wins; on by default), with
 * `${extensionPath}`, `${workspacePath}`, `${/}` and `${pathSeparator}` expanded as Gemini CLI does;
 * a settings file's server of the same name wins. `security.allowedExtensions` and
 * `security.blockGitExtensions` are honoured. Checked against `gemini extensions install` and
 * `gemini mcp list`: test/clients/gemini-extensions.test.ts.
 */
import * as path from "node:path";
import { envValue, insideFolder } from "../server-sources.ts";
import type { Scope } from "../looked.ts";
import { mapStrings } from "../variables.ts";
import { mapEntries, type EntryOptions } from "./entry.ts";
import type { Candidate, ClientReader, ReadContext } from "./types.ts";

const OPTS: EntryOptions = { urlKeys: { httpUrl: "http", url: "sse" } };

function systemSettings(ctx: ReadContext): string {
  const env = envValue(ctx.env, "GEMINI_CLI_SYSTEM_SETTINGS_PATH", ctx.platform)?.trim();
  if (env) return env;
  if (ctx.platform === "darwin") return "/Library/Application Support/GeminiCli/settings.json";
  if (ctx.platform === "win32") return "C:\\ProgramData\\gemini-cli\\settings.json";
  return "/etc/gemini-cli/settings.json";
}

export const gemini: ClientReader = {
  id: "gemini",
  read(ctx) {
    const userDir = path.join(ctx.home, ".gemini");
    const files: Array<[string, Scope]> = [
      [systemSettings(ctx), "managed"],
      [path.join(ctx.cwd, ".gemini", "settings.json"), "project"],
      [path.join(userDir, "settings.json"), "user"],
    ];
    const approval = folderTrust(ctx, path.join(userDir, "trustedFolders.json"));
    const out: Candidate[] = [];
    let excluded: Set<string> | undefined;
    let allowed: Set<string> | undefined;
    const seen = new Set<string>();
    let security: Record<string, unknown> | undefined;
    for (const [file, scope] of files) {
      if (seen.has(file)) continue;
      seen.add(file);
      const data = ctx.read(file, "json", scope);
      if (!data) continue;
      // What extensions may load is the user's (or the administrator's) call: a repository's settings
      // file must not lift a block the user set.
      if (!security && scope !== "project" && data.security && typeof data.security === "object")
        security = data.security as Record<string, unknown>;
      // As Gemini CLI 0.61 consolidates them: every file's exclusions count (a union), and a server must
      // be in every allowlist that is defined (an intersection), so no file lifts another's.
      const mcp = data.mcp as Record<string, unknown> | undefined;
      if (mcp && typeof mcp === "object") {
        const strings = (v: unknown[]) => v.filter((s): s is string => typeof s === "string");
        if (Array.isArray(mcp.excluded)) excluded = new Set([...(excluded ?? []), ...strings(mcp.excluded)]);
        if (Array.isArray(mcp.allowed)) {
          const here = new Set(strings(mcp.allowed).map((n) => n.toLowerCase().trim()));
          allowed = allowed ? new Set([...allowed].filter((n) => here.has(n.toLowerCase().trim()))) : new Set(strings(mcp.allowed));
        }
      }
      out.push(
        ...mapEntries(
          ctx,
          file,
          data.mcpServers,
          ["mcpServers"],
          { scope, syntax: "gemini", approval: scope === "project" ? approval : undefined },
          OPTS,
        ),
      );
    }
    out.push(...extensions(ctx, path.join(userDir, "extensions"), security));
    for (const c of out) {
      if (c.off) continue;
      if (excluded?.has(c.name)) c.off = "excluded in Gemini CLI (mcp.excluded)";
      else if (allowed && !allowed.has(c.name)) c.off = "not in Gemini CLI's mcp.allowed";
    }
    return out;
  },
};

function folderTrust(ctx: ReadContext, file: string): string | undefined {
  const rules = ctx.peek(file);
  if (!rules) return undefined;
  const cwd = path.resolve(ctx.cwd);
  let best: { dir: string; level: string } | undefined;
  for (const [p, level] of Object.entries(rules)) {
    if (typeof level !== "string") continue;
    const dir = level === "TRUST_PARENT" ? path.dirname(path.resolve(p)) : path.resolve(p);
    const rel = insideFolder(dir, cwd);
    if (rel === undefined || (level === "DO_NOT_TRUST" && rel !== "")) continue;
    if (!best || dir.length > best.dir.length) best = { dir, level };
  }
  return best && best.level !== "DO_NOT_TRUST" ? `folder trusted in Gemini CLI (${best.level} in ${file})` : undefined;
}

/** The servers of Gemini CLI's installed extensions, as it loads them for this folder. */
function extensions(ctx: ReadContext, dir: string, security: Record<string, unknown> | undefined): Candidate[] {
  if (!ctx.isDir(dir)) return [];
  const rules = ctx.peek(path.join(dir, "extension-enablement.json")) ?? {};
  const allowed = Array.isArray(security?.allowedExtensions)
    ? security.allowedExtensions.filter((p): p is string => typeof p === "string")
    : [];
  const out: Candidate[] = [];
  for (const entry of ctx.list(dir, "user").sort()) {
    const installed = path.join(dir, entry);
    if (!ctx.isDir(installed)) continue;
    const meta = ctx.peek(path.join(installed, ".gemini-extension-install.json")) as { type?: unknown; source?: unknown } | undefined;
    const source = typeof meta?.source === "string" ? meta.source : undefined;
    const home = meta?.type === "link" && source ? source : installed;
    const file = path.join(home, "gemini-extension.json");
    const config = ctx.read(file, "json", "user", "Gemini CLI extension");
    if (!config) continue;
    const name = typeof config.name === "string" ? config.name : entry;
    let off: string | undefined;
    if (allowed.length > 0 && !allowed.some((p) => safeRegex(p)?.test(source ?? "")))
      off = `extension ${name} is not allowed by Gemini CLI's security.allowedExtensions`;
    else if ((meta?.type === "git" || meta?.type === "github-release") && security?.blockGitExtensions === true)
      off = `extension ${name} comes from a remote source, which Gemini CLI's security.blockGitExtensions turns off`;
    else if (!enabledHere(rules[name], ctx.cwd))
      off = `extension ${name} is disabled in Gemini CLI for this folder (extension-enablement.json)`;
    const vars: Record<string, string> = { extensionPath: home, workspacePath: ctx.cwd, "/": path.sep, pathSeparator: path.sep };
    for (const cand of mapEntries(ctx, file, hydrate(config.mcpServers, vars), ["mcpServers"], { scope: "user", syntax: "gemini" }, OPTS)) {
      if (off && !cand.off) cand.off = off;
      out.push(cand);
    }
  }
  return out;
}

/** extension-enablement.json: the last rule matching the folder wins (`!` turns off, a trailing `*` takes subfolders). */
function enabledHere(rule: unknown, cwd: string): boolean {
  const overrides = (rule as { overrides?: unknown } | undefined)?.overrides;
  if (!Array.isArray(overrides)) return true;
  const here = withSlashes(cwd);
  let enabled = true;
  for (const o of overrides) {
    if (typeof o !== "string") continue;
    const disable = o.startsWith("!");
    let base = disable ? o.slice(1) : o;
    const subdirs = base.endsWith("*");
    if (subdirs) base = base.slice(0, -1);
    const pattern = `${base}${subdirs ? "*" : ""}`.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/(\/?)\*/g, "($1.*)?");
    if (new RegExp(`^${pattern}$`).test(here)) enabled = !disable;
  }
  return enabled;
}

function withSlashes(dir: string): string {
  let s = dir.replace(/\\/g, "/");
  if (!s.startsWith("/")) s = `/${s}`;
  return s.endsWith("/") ? s : `${s}/`;
}

function safeRegex(pattern: string): RegExp | undefined {
  try {
    return new RegExp(pattern);
  } catch {
    return undefined;
  }
}

/** `${name}` of `vars` in every string (others left as written, for the usual variable expansion). */
function hydrate(value: unknown, vars: Record<string, string>): unknown {
  return mapStrings(value, (s) => s.replace(/\$\{([^}]+)\}/g, (whole, key: string) => (Object.hasOwn(vars, key) ? vars[key]! : whole)));
}
