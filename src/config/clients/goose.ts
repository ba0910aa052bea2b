/**
 * Goose: `extensions:` in `~/.config/goose/config.yaml` (XDG_CONFIG_HOME; Windows
 * %APPDATA%\Block\goose\config), a map of {type: stdio, cmd, args, envs, env_keys, enabled} or
 * {type: sse | streamable_http, uri, headers}. `enabled: false` turns one off; built-in and platform
 * extensions run inside Goose only. `env_keys` values live in Goose's keyring: supply them in the
 * environment.
 */
import * as path from "node:path";
import * as z from "zod";
import type { Definition } from "../definition.ts";
import { envValue } from "../server-sources.ts";
import { typeName, validate } from "../server-schemas.ts";
import type { Candidate, ClientReader, ReadContext } from "./types.ts";

const GooseSchema = z.looseObject({
  type: z.string().optional(),
  cmd: z.string().min(1, "must not be empty").optional(),
  args: z.array(z.string()).optional(),
  envs: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
  env_keys: z.array(z.string()).optional(),
  enabled: z.boolean().optional(),
  uri: z.string().optional(),
  url: z.string().optional(),
  headers: z.record(z.string(), z.string()).optional(),
});

export function gooseConfig(ctx: ReadContext): string {
  if (ctx.platform === "win32") return path.join(ctx.appConfigDir(), "Block", "goose", "config", "config.yaml");
  const xdg = envValue(ctx.env, "XDG_CONFIG_HOME", ctx.platform)?.trim();
  return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(ctx.home, ".config"), "goose", "config.yaml");
}

export const goose: ClientReader = {
  id: "goose",
  read(ctx) {
    const file = gooseConfig(ctx);
    const data = ctx.read(file, "yaml", "user");
    const ext = data?.extensions;
    if (ext === undefined || ext === null) return [];
    if (typeof ext !== "object" || Array.isArray(ext)) {
      ctx.problem(file, ["extensions"], `expected a mapping, received ${typeName(ext)}`);
      return [];
    }
    const out: Candidate[] = [];
    for (const [name, raw] of Object.entries(ext as Record<string, unknown>)) {
      const at = ["extensions", name];
      const v = validate(GooseSchema, raw);
      if (!v.ok) {
        for (const i of v.issues) ctx.problem(file, [...at, ...i.path], i.message);
        continue;
      }
      const e = v.data;
      const base = { name, file, at, scope: "user" as const, raw: raw as Record<string, unknown>, syntax: "none" as const };
      if (e.enabled === false) {
        out.push({ ...base, off: "disabled in Goose (enabled: false)" });
        continue;
      }
      const type = e.type ?? (e.cmd ? "stdio" : undefined);
      let def: Definition;
      if (type === "stdio") {
        if (!e.cmd) {
          ctx.problem(file, [...at, "cmd"], "required string is missing");
          continue;
        }
        const env = Object.fromEntries(Object.entries(e.envs ?? {}).map(([k, val]) => [k, String(val)]));
        def = {
          type: "stdio",
          command: e.cmd,
          args: e.args ?? [],
          env,
          passEnv: (e.env_keys ?? []).map((n) => ({ name: n, keeper: "Goose (its keyring)" })),
        };
      } else if (type === "sse" || type === "streamable_http") {
        const url = e.uri ?? e.url;
        if (!url) {
          ctx.problem(file, [...at, "uri"], "required string is missing");
          continue;
        }
        def = { type: type === "sse" ? "sse" : "http", url, headers: e.headers ?? {} };
      } else {
        out.push({ ...base, off: `a ${type ?? "typeless"} extension, which runs inside Goose only` });
        continue;
      }
      out.push({ ...base, def });
    }
    return out;
  },
};
