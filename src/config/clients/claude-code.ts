/**
 * Claude Code: local scope (`projects[path].mcpServers` in ~/.claude.json), project scope (`.mcp.json`
 * in the working folder or its parents, closest first), user scope (top-level `mcpServers` in
 * ~/.claude.json); local beats project beats user, whole entries, no field merge. `${VAR}` and
 * `${VAR:-default}` expand; an unset variable stays as written with a warning. A `url` needs a `type`.
 * Remote entries may carry `oauth` client settings and a `headersHelper` command (run only when trusted).
 * Then the servers of enabled plugins (./claude-code-plugins.ts).
 */
import * as path from "node:path";
import { findProjectKey } from "../server-sources.ts";
import { typeName } from "../server-schemas.ts";
import { readPlugins } from "./claude-code-plugins.ts";
import { mapEntries, type EntryOptions } from "./entry.ts";
import type { Candidate, ClientReader, ReadContext } from "./types.ts";

const OPTS: EntryOptions = { urlType: undefined, oauth: "claude", headersHelper: true };
/** Names Claude Code keeps for its built-in servers and skips in configs. */
const RESERVED = new Set(["workspace", "claude-in-chrome", "computer-use", "Claude Preview", "Claude Browser"]);

export const claudeCode: ClientReader = {
  id: "claude-code",
  read(ctx) {
    const c = ctx.claude;
    // Read once, by readClaudeCodeSettings: only the parts used (the file can be hundreds of megabytes).
    const global = ctx.read(c.globalConfig, "json", "user", "user and local scope", { read: c.globalRead });
    const local: Candidate[] = [];
    let user: Candidate[] = [];
    if (global) {
      const projects = global.projects;
      if (projects !== undefined && (projects === null || typeof projects !== "object" || Array.isArray(projects))) {
        ctx.problem(c.globalConfig, ["projects"], `expected object, received ${typeName(projects)}`);
      } else if (projects) {
        const key = findProjectKey(Object.keys(projects), ctx.cwd, ctx.platform);
        const entry = key === undefined ? undefined : (projects as Record<string, unknown>)[key];
        if (key !== undefined && (entry === null || typeof entry !== "object" || Array.isArray(entry))) {
          ctx.problem(c.globalConfig, ["projects", key], `expected object, received ${typeName(entry)}`);
        } else if (key !== undefined) {
          const approval = c.folderTrusted ? `folder trusted in Claude Code (${c.folderTrusted})` : undefined;
          local.push(
            ...mapEntries(
              ctx,
              c.globalConfig,
              (entry as Record<string, unknown>).mcpServers,
              ["projects", key, "mcpServers"],
              { scope: "local", syntax: "claude", approval },
              OPTS,
            ),
          );
        }
      }
      user = mapEntries(ctx, c.globalConfig, global.mcpServers, ["mcpServers"], { scope: "user", syntax: "claude" }, OPTS);
    }
    const project: Candidate[] = [];
    for (const dir of ctx.parents()) {
      const file = path.join(dir, ".mcp.json");
      const data = ctx.read(file, "json", "project");
      if (!data) continue;
      for (const cand of mapEntries(ctx, file, data.mcpServers, ["mcpServers"], { scope: "project", syntax: "claude" }, OPTS)) {
        const rejected = c.rejected.get(cand.name);
        if (rejected) cand.off = `rejected in Claude Code (disabledMcpjsonServers in ${rejected})`;
        else if (c.approved.has(cand.name))
          cand.approval = `approved in Claude Code (enabledMcpjsonServers in ${c.approved.get(cand.name)})`;
        else if (c.approveAll) cand.approval = `approved in Claude Code (enableAllProjectMcpServers in ${c.approveAll})`;
        project.push(cand);
      }
    }
    for (const f of [path.join(c.configDir, "settings.json"), path.join(c.configDir, "mcp.json")]) {
      const data = ctx.exists(f) ? ctx.peek(f) : undefined;
      if (data && data.mcpServers !== undefined)
        ctx.ignore(f, "user", "Claude Code does not read mcpServers from this file; move them with `claude mcp add --scope user`");
    }
    // Plugins rank after user scope (Claude Code: local > project > user > plugins).
    const all = [...local, ...project, ...user, ...readPlugins(ctx, OPTS)];
    for (const cand of all) finish(cand, ctx);
    return all;
  },
};

/** managed-mcp.json: when deployed, the only servers Claude Code (and so the bridge) loads. */
export function readManaged(ctx: ReadContext, file: string): Candidate[] {
  const data = ctx.read(file, "json", "managed", "exclusive control over MCP servers");
  if (!data) return [];
  const out = mapEntries(ctx, file, data.mcpServers, ["mcpServers"], { scope: "managed", syntax: "claude" }, OPTS);
  for (const cand of out) finish(cand, ctx);
  return out;
}

function finish(cand: Candidate, ctx: ReadContext): void {
  if (RESERVED.has(cand.name))
    cand.off = `${JSON.stringify(cand.name)} is reserved for a Claude Code built-in server; Claude Code skips it (rename it)`;
  const toggled = ctx.claude.disabled.get(cand.name);
  if (!cand.off && toggled && cand.scope !== "managed") cand.off = `disabled in Claude Code (/mcp: disabledMcpServers in ${toggled})`;
}
