/**
 * Zed: `context_servers` in the user settings (`~/.config/zed/settings.json`, or XDG_CONFIG_HOME; Windows
 * %APPDATA%\Zed) and the project's `.zed/settings.json`, JSONC, deep-merged with the project on top.
 * An entry is {command, args, env}, the older {command: {path, args, env}}, or {url, headers};
 * `enabled: false` turns it off; servers provided by Zed extensions are run by Zed only.
 */
import * as path from "node:path";
import type { Definition } from "../definition.ts";
import { envValue } from "../server-sources.ts";
import { typeName } from "../server-schemas.ts";
import { standardEntry } from "./entry.ts";
import { deepMerge, isObj } from "./merge.ts";
import type { Candidate, ClientReader, ReadContext } from "./types.ts";

function userSettings(ctx: ReadContext): string {
  if (ctx.platform === "win32") return path.join(ctx.appConfigDir(), "Zed", "settings.json");
  const xdg = envValue(ctx.env, "XDG_CONFIG_HOME", ctx.platform)?.trim();
  return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(ctx.home, ".config"), "zed", "settings.json");
}

export const zed: ClientReader = {
  id: "zed",
  read(ctx) {
    const layers: Array<{ file: string; scope: "user" | "project"; map: Record<string, unknown> }> = [];
    for (const [file, scope] of [
      [userSettings(ctx), "user"],
      [path.join(ctx.cwd, ".zed", "settings.json"), "project"],
    ] as const) {
      const data = ctx.read(file, "json", scope);
      if (!data || data.context_servers === undefined) continue;
      if (!isObj(data.context_servers)) {
        ctx.problem(file, ["context_servers"], `expected object, received ${typeName(data.context_servers)}`);
        continue;
      }
      layers.push({ file, scope, map: data.context_servers });
    }
    const names = [...new Set(layers.flatMap((l) => Object.keys(l.map)))];
    const out: Candidate[] = [];
    for (const name of names) {
      const from = layers.filter((l) => l.map[name] !== undefined);
      const top = from[from.length - 1]!;
      const raw = from.reduce<unknown>((acc, l) => deepMerge(acc, l.map[name]), undefined);
      const at = ["context_servers", name];
      const base = {
        name,
        file: top.file,
        at,
        scope: top.scope,
        raw: (isObj(raw) ? raw : {}) as Record<string, unknown>,
        syntax: "none" as const,
        mergedFrom: from.slice(0, -1).map((l) => l.file),
      };
      if (!isObj(raw)) {
        ctx.problem(top.file, at, `expected object, received ${typeName(raw)}`);
        continue;
      }
      if (raw.enabled === false) {
        out.push({ ...base, off: "disabled in Zed (enabled: false)" });
        continue;
      }
      if (raw.source === "extension" || (raw.command === undefined && raw.url === undefined && raw.settings !== undefined)) {
        out.push({ ...base, off: "provided by a Zed extension, which only Zed can run" });
        continue;
      }
      let entry: Record<string, unknown> = raw;
      if (isObj(raw.command)) entry = { ...raw, command: raw.command.path, args: raw.command.args, env: raw.command.env };
      const { def } = standardEntry(ctx, top.file, entry, at, { urlType: "http" });
      if (def) out.push({ ...base, def: def as Definition });
    }
    return out;
  },
};
