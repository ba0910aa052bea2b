/**
 * opencode: the global `~/.config/opencode/opencode.json[c]`, OPENCODE_CONFIG, and the project's
 * `opencode.json[c]` / `.opencode/opencode.json[c]` from the git root down to the working folder,
 * deep-merged in that order. `mcp` maps names to {type: "local", command: [...], environment, enabled}
 * or {type: "remote", url, headers, enabled}; the v2 form nests them under `mcp.servers` and uses
 * `disabled`. `{env:VAR}` (unset: empty) and `{file:path}` expand.
 */
import * as path from "node:path";
import * as z from "zod";
import type { Definition } from "../definition.ts";
import { envValue, upToRepoRoot } from "../server-sources.ts";
import { typeName, validate } from "../server-schemas.ts";
import type { Scope } from "../looked.ts";
import { deepMerge, isObj } from "./merge.ts";
import type { Candidate, ClientReader, ReadContext } from "./types.ts";

const Str = z.record(z.string(), z.string());
const LocalSchema = z.looseObject({
  type: z.literal("local"),
  command: z.array(z.string()).min(1, "must name the program to run").describe("Program and arguments"),
  environment: Str.optional(),
  enabled: z.boolean().optional(),
  disabled: z.boolean().optional(),
});
const RemoteSchema = z.looseObject({
  type: z.literal("remote"),
  url: z.string().min(1),
  headers: Str.optional(),
  enabled: z.boolean().optional(),
  disabled: z.boolean().optional(),
  oauth: z.unknown().optional(),
});

function globalFiles(ctx: ReadContext): string[] {
  const xdg = envValue(ctx.env, "XDG_CONFIG_HOME", ctx.platform)?.trim();
  const dir = path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(ctx.home, ".config"), "opencode");
  return ["opencode.json", "opencode.jsonc", "config.json"].map((f) => path.join(dir, f));
}

function projectDirs(ctx: ReadContext): string[] {
  return upToRepoRoot(ctx.parents(), ctx.exists).dirs.reverse(); // farthest first: closer files merge on top
}

export const opencode: ClientReader = {
  id: "opencode",
  read(ctx) {
    const layers: Array<{ file: string; scope: Scope; map: Record<string, unknown>; at: string[] }> = [];
    const add = (file: string, scope: Scope) => {
      const data = ctx.read(file, "json", scope);
      if (!data || data.mcp === undefined) return;
      if (!isObj(data.mcp)) return ctx.problem(file, ["mcp"], `expected object, received ${typeName(data.mcp)}`);
      const v2 = isObj(data.mcp.servers) && data.mcp.servers.type === undefined;
      layers.push({
        file,
        scope,
        map: (v2 ? data.mcp.servers : data.mcp) as Record<string, unknown>,
        at: v2 ? ["mcp", "servers"] : ["mcp"],
      });
    };
    for (const f of globalFiles(ctx)) add(f, "user");
    const custom = envValue(ctx.env, "OPENCODE_CONFIG", ctx.platform)?.trim();
    if (custom) add(path.resolve(ctx.cwd, custom), "user");
    for (const d of projectDirs(ctx))
      for (const f of [
        "opencode.json",
        "opencode.jsonc",
        path.join(".opencode", "opencode.json"),
        path.join(".opencode", "opencode.jsonc"),
      ])
        add(path.join(d, f), "project");
    const out: Candidate[] = [];
    for (const name of [...new Set(layers.flatMap((l) => Object.keys(l.map)))]) {
      const from = layers.filter((l) => l.map[name] !== undefined);
      const top = from[from.length - 1]!;
      const scope: Scope = from.some((l) => l.scope === "project") ? "project" : top.scope;
      const raw = from.reduce<unknown>((acc, l) => deepMerge(acc, l.map[name]), undefined);
      const at = [...top.at, name];
      const base = {
        name,
        file: top.file,
        at,
        scope,
        raw: (isObj(raw) ? raw : {}) as Record<string, unknown>,
        syntax: "opencode" as const,
        mergedFrom: from.slice(0, -1).map((l) => l.file),
      };
      if (!isObj(raw)) {
        ctx.problem(top.file, at, `expected object, received ${typeName(raw)}`);
        continue;
      }
      if (raw.enabled === false || raw.disabled === true) {
        out.push({ ...base, off: `disabled in opencode (${raw.enabled === false ? "enabled: false" : "disabled: true"})` });
        continue;
      }
      const v = validate<Record<string, unknown>>(raw.type === "remote" ? RemoteSchema : LocalSchema, raw);
      if (!v.ok) {
        for (const i of v.issues)
          ctx.problem(
            top.file,
            [...at, ...i.path],
            i.path[0] === "type" ? 'expected "type": "local" (command array) or "remote" (url)' : i.message,
          );
        continue;
      }
      let def: Definition;
      if (v.data.type === "local") {
        const [command, ...args] = v.data.command as string[];
        def = { type: "stdio", command: command!, args, env: (v.data.environment as Record<string, string>) ?? {} };
      } else {
        def = { type: "http", url: v.data.url as string, headers: (v.data.headers as Record<string, string>) ?? {} };
        if (v.data.oauth !== false && !v.data.headers) def.oauth = true;
      }
      out.push({ ...base, def });
    }
    return out;
  },
};
