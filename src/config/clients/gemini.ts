/**
 * Gemini CLI: system settings (admin; GEMINI_CLI_SYSTEM_SETTINGS_PATH moves it) beat the workspace's
 * `.gemini/settings.json` (project scope) beat `~/.gemini/settings.json` (user). `mcpServers`: `url` is
 * SSE, `httpUrl` is Streamable HTTP; `$VAR` / `${VAR}` expand anywhere (unset: kept as written).
 * `mcp.excluded` / `mcp.allowed` turn servers off. A folder trusted in `~/.gemini/trustedFolders.json`
 * (TRUST_FOLDER, or TRUST_PARENT for its parent) counts as the client's approval of the workspace's servers.
 */
import * as path from "node:path";
import { envValue } from "../server-sources.ts";
import type { Scope } from "../looked.ts";
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
    for (const [file, scope] of files) {
      if (seen.has(file)) continue;
      seen.add(file);
      const data = ctx.read(file, "json", scope);
      if (!data) continue;
      const mcp = data.mcp as Record<string, unknown> | undefined;
      if (mcp && typeof mcp === "object") {
        if (Array.isArray(mcp.excluded) && !excluded) excluded = new Set(mcp.excluded.filter((s): s is string => typeof s === "string"));
        if (Array.isArray(mcp.allowed) && !allowed) allowed = new Set(mcp.allowed.filter((s): s is string => typeof s === "string"));
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
    const rel = path.relative(dir, cwd);
    const inside = rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
    if (!inside || (level === "DO_NOT_TRUST" && rel !== "")) continue;
    if (!best || dir.length > best.dir.length) best = { dir, level };
  }
  return best && best.level !== "DO_NOT_TRUST" ? `folder trusted in Gemini CLI (${best.level} in ${file})` : undefined;
}
