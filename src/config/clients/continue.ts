/**
 * Continue: `mcpServers:` (a YAML list of {name, type, command, args, env, cwd, url}) in
 * `~/.continue/config.yaml` (CONTINUE_GLOBAL_DIR moves it; user scope), and the workspace's
 * `.continue/mcpServers/*.yaml` blocks (project scope; JSON files there in the Claude/Cursor form are
 * accepted too). Workspace blocks first. `${{ secrets.NAME }}` comes from the environment or
 * ~/.continue/.env; anything else only Continue can supply.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { specialFile } from "../config-file.ts";
import { parse as parseDotenv } from "dotenv";
import type { Scope } from "../looked.ts";
import { envValue } from "../server-sources.ts";
import { typeName, type PathSegment } from "../server-schemas.ts";
import { mapEntries, standardEntry } from "./entry.ts";
import type { Candidate, ClientReader, ReadContext } from "./types.ts";

export function continueDir(ctx: Pick<ReadContext, "env" | "home" | "platform">): string {
  return envValue(ctx.env, "CONTINUE_GLOBAL_DIR", ctx.platform)?.trim() || path.join(ctx.home, ".continue");
}

/** Continue's secrets in ~/.continue/.env (the workspace's own .env is not read: it is repository content). */
export function continueSecrets(ctx: Pick<ReadContext, "env" | "home" | "platform">): () => Record<string, string> {
  let cache: Record<string, string> | undefined;
  return () => {
    if (!cache) {
      const file = path.join(continueDir(ctx), ".env");
      try {
        // A named pipe (1Password's mounted .env files) would hold the bridge's start until it is written.
        cache = specialFile(file) ? {} : parseDotenv(fs.readFileSync(file, "utf8"));
      } catch {
        cache = {};
      }
    }
    return cache;
  };
}

export const continueDev: ClientReader = {
  id: "continue",
  read(ctx) {
    const out: Candidate[] = [];
    const blocks = path.join(ctx.cwd, ".continue", "mcpServers");
    for (const n of ctx
      .list(blocks, "project")
      .filter((f) => /\.(ya?ml|json)$/i.test(f))
      .sort()) {
      const file = path.join(blocks, n);
      const json = /\.json$/i.test(n);
      const data = ctx.read(file, json ? "json" : "yaml", "project");
      if (!data) continue;
      if (json && !Array.isArray(data.mcpServers))
        out.push(...mapEntries(ctx, file, data.mcpServers, ["mcpServers"], { scope: "project", syntax: "continue" }, { urlType: "http" }));
      else out.push(...list(ctx, file, data.mcpServers, "project"));
    }
    const user = path.join(continueDir(ctx), "config.yaml");
    const data = ctx.read(user, "yaml", "user");
    if (data) out.push(...list(ctx, user, data.mcpServers, "user"));
    return out;
  },
};

function list(ctx: ReadContext, file: string, items: unknown, scope: Scope): Candidate[] {
  if (items === undefined || items === null) return [];
  if (!Array.isArray(items)) {
    ctx.problem(file, ["mcpServers"], `expected a list, received ${typeName(items)}`);
    return [];
  }
  const out: Candidate[] = [];
  items.forEach((item, i) => {
    const at: PathSegment[] = ["mcpServers", i];
    if (item === null || typeof item !== "object" || Array.isArray(item))
      return ctx.problem(file, at, `expected a mapping, received ${typeName(item)}`);
    const o = item as Record<string, unknown>;
    if (typeof o.uses === "string") {
      out.push({
        name: o.uses,
        file,
        at,
        scope,
        raw: o,
        syntax: "continue",
        off: "a Continue Hub block (uses:), which only Continue can fetch",
      });
      return;
    }
    if (typeof o.name !== "string" || !o.name.trim()) return ctx.problem(file, [...at, "name"], "required string is missing");
    const { def, off } = standardEntry(ctx, file, o, at, { urlType: "http", disabledFlag: true });
    if (def || off) out.push({ name: o.name, file, at, scope, raw: o, def, off, syntax: "continue" });
  });
  return out;
}
