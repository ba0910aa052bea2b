/**
 * Our own sources: MCP_BRIDGE_CONFIG (files or folders, read first), ~/MCPs and ~/.config/mcp/servers
 * (user scope), and ./mcp-servers in the working folder or its parents (project scope). A file holds an
 * `mcpServers` (or `servers`) map, or one server definition named after the file. Remote entries take
 * Claude Code's `oauth` and `headersHelper`.
 */
import * as path from "node:path";
import { expandHome, envValue } from "../server-sources.ts";
import type { Scope } from "../looked.ts";
import { mapEntries, standardEntry, type EntryOptions } from "./entry.ts";
import type { Candidate, ClientReader, ReadContext } from "./types.ts";

const OPTS: EntryOptions = { urlType: "http", disabledFlag: true, envNumbers: false, oauth: "claude", headersHelper: true };

export const bridge: ClientReader = {
  id: "bridge",
  read(ctx) {
    const out: Candidate[] = [];
    const explicit = envValue(ctx.env, "MCP_BRIDGE_CONFIG", ctx.platform);
    if (explicit) {
      for (const raw of explicit.split(ctx.platform === "win32" ? ";" : ":")) {
        const p = raw.trim();
        if (!p) continue;
        const full = path.resolve(ctx.cwd, expandHome(p, ctx.home));
        if (ctx.isDir(full)) out.push(...readFolder(ctx, full, "explicit", ctx.list(full, "explicit")));
        else {
          const data = ctx.read(full, "json", "explicit");
          if (data) out.push(...readFile(ctx, full, data, "explicit"));
          else if (!ctx.exists(full)) ctx.problem(full, [], "MCP_BRIDGE_CONFIG names a path that does not exist");
        }
      }
    }
    for (const dir of [path.join(ctx.home, "MCPs"), path.join(ctx.home, ".config", "mcp", "servers")])
      out.push(...readFolder(ctx, dir, "user", ctx.list(dir, "user")));
    for (const d of ctx.parents()) {
      const dir = path.join(d, "mcp-servers");
      out.push(...readFolder(ctx, dir, "project", ctx.list(dir, "project")));
    }
    return out;
  },
};

function readFolder(ctx: ReadContext, dir: string, scope: Scope, names: string[]): Candidate[] {
  const out: Candidate[] = [];
  for (const n of names.filter((n) => !n.startsWith(".") && /\.jsonc?$/i.test(n)).sort()) {
    const file = path.join(dir, n);
    if (ctx.isDir(file)) continue;
    const data = ctx.read(file, "json", scope);
    if (data) out.push(...readFile(ctx, file, data, scope));
  }
  return out;
}

function readFile(ctx: ReadContext, file: string, obj: Record<string, unknown>, scope: Scope): Candidate[] {
  const base = { scope, syntax: "bridge" as const };
  if (obj.mcpServers === undefined && obj.servers === undefined) {
    if (obj.command !== undefined || obj.url !== undefined) {
      const name = path.basename(file).replace(/\.jsonc?$/i, "");
      const { def, off } = standardEntry(ctx, file, obj, [], OPTS);
      return def || off ? [{ name, file, at: [], raw: obj, def, off, ...base }] : [];
    }
    ctx.problem(file, [], 'expected an "mcpServers" (or "servers") object, or a single server definition with "command" or "url"');
    return [];
  }
  return [
    ...mapEntries(ctx, file, obj.mcpServers, ["mcpServers"], base, OPTS),
    ...mapEntries(ctx, file, obj.servers, ["servers"], base, OPTS),
  ];
}
