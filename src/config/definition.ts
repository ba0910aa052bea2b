/**
 * One server definition as a client wrote it, normalised across clients (still before variable
 * substitution), and how it becomes the transport the bridge starts: the client's own variable syntax,
 * envFile, and the values only the client can supply, which are listed as needs rather than guessed.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parse as parseDotenv } from "dotenv";
import type { OAuthRead } from "./clients/oauth-settings.ts";
import { specialFile } from "./config-file.ts";
import type { OAuthSettings, ServerTransport } from "./server-entry.ts";
import { expandHome } from "./server-sources.ts";
import type { PathSegment } from "./server-schemas.ts";
import { formatJsonPath } from "./server-schemas.ts";
import { expandVariables, type VarContext, type VarSyntax } from "./variables.ts";

export interface Definition {
  type: "stdio" | "http" | "sse";
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  /** VS Code / Cursor: a dotenv file whose variables come before `env`. */
  envFile?: string;
  url?: string;
  headers?: Record<string, string>;
  /** Variables passed through from the bridge's environment by name (Codex env_vars, Goose env_keys). */
  passEnv?: Array<{ name: string; keeper?: string }>;
  /** Header -> environment variable holding its value (Codex bearer_token_env_var, env_http_headers). */
  headersFromEnv?: Array<{ header: string; env: string; prefix?: string }>;
  /** The client signs in with OAuth and keeps the token in its own store. */
  oauth?: boolean;
  /** OAuth client settings the client documents (Claude Code's `oauth`, Cursor's `auth`), before expansion. */
  oauthSettings?: OAuthRead;
  /** Claude Code: a shell command printing headers; never expanded (the shell does that). */
  headersHelper?: string;
  /** Things the client does that the bridge does not (headersHelper, tool filters...). */
  notes?: string[];
}

/** A value only the client can supply, and how to supply it to the bridge instead. */
export interface Need {
  what: string;
  /** JSON path inside the file. */
  at: string;
  why: string;
  supply: string;
}

export interface Built {
  transport: ServerTransport;
  needs: Need[];
  warnings: string[];
  /** Problems that make the entry unusable (it is not listed as a server). */
  problems: Array<{ path: PathSegment[]; message: string }>;
  /** Files whose contents went into it (envFile, `{file:…}`): the approval digest covers them. */
  filesRead: string[];
}

/** Substitute, read envFile, and produce the transport. */
export function buildTransport(def: Definition, syntax: VarSyntax, at: PathSegment[], ctx: VarContext): Built {
  const out: Built = { transport: undefined as unknown as ServerTransport, needs: [], warnings: [], problems: [], filesRead: [] };
  const x = (v: string, where: PathSegment[]) => expandVariables(v, syntax, where, ctx, out);
  const xmap = (m: Record<string, string> | undefined, key: string) => {
    const r: Record<string, string> = {};
    for (const [k, v] of Object.entries(m ?? {})) r[k] = x(v, [...at, key, k]);
    return r;
  };
  if (def.type === "stdio") {
    const command = expandHome(x(def.command ?? "", [...at, "command"]), ctx.home);
    const args = (def.args ?? []).map((a, i) => x(a, [...at, "args", i]));
    const env: Record<string, string> = {};
    let envPipe: string | undefined;
    if (def.envFile !== undefined) {
      const file = path.resolve(ctx.fileDir, expandHome(x(def.envFile, [...at, "envFile"]), ctx.home));
      out.filesRead.push(file);
      const special = specialFile(file);
      if (special === "a named pipe") {
        // 1Password mounts .env files as named pipes and asks the user before each read: read when the
        // server starts (src/upstream/env-pipe.ts), not at every bridge start for servers never used.
        envPipe = file;
        out.warnings.push(`envFile ${file} is a named pipe: it is read when the server starts, not before`);
      } else
        try {
          if (special) throw new Error(`it is ${special}, not a file`);
          Object.assign(env, parseDotenv(fs.readFileSync(file, "utf8")));
        } catch (e) {
          out.needs.push({
            what: `envFile ${file}`,
            at: formatJsonPath([...at, "envFile"]),
            why: `cannot read it: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
            supply: "create the file, or remove envFile from the definition",
          });
        }
    }
    Object.assign(env, xmap(def.env, "env"));
    for (const p of def.passEnv ?? []) {
      const v = ctx.env[p.name];
      if (v !== undefined) env[p.name] = v;
      else if (p.keeper)
        out.needs.push({
          what: p.name,
          at: formatJsonPath(at),
          why: `${p.keeper} keeps this value itself`,
          supply: `set ${p.name} in the bridge's environment`,
        });
    }
    const t: ServerTransport = { type: "stdio", command, args, env };
    if (envPipe) t.envPipe = envPipe;
    if (def.cwd !== undefined) t.cwd = path.resolve(ctx.cwd, expandHome(x(def.cwd, [...at, "cwd"]), ctx.home));
    if (!command) out.problems.push({ path: [...at, "command"], message: "must not be empty" });
    out.transport = t;
  } else {
    const url = x(def.url ?? "", [...at, "url"]);
    const headers = xmap(def.headers, "headers");
    for (const h of def.headersFromEnv ?? []) {
      const v = ctx.env[h.env];
      if (v !== undefined && v !== "") headers[h.header] = `${h.prefix ?? ""}${v}`;
      else
        out.needs.push({
          what: h.env,
          at: formatJsonPath(at),
          why: `the ${h.header} header comes from environment variable ${h.env}, which is not set`,
          supply: `set ${h.env} in the bridge's environment`,
        });
    }
    let protocol = "";
    try {
      protocol = new URL(url).protocol;
    } catch {
      if (!out.needs.length) out.problems.push({ path: [...at, "url"], message: `not a valid URL: ${JSON.stringify(url)}` });
    }
    if (protocol && protocol !== "http:" && protocol !== "https:")
      out.problems.push({ path: [...at, "url"], message: `expected an http or https URL, got ${protocol}` });
    const t: ServerTransport = { type: def.type, url, headers };
    if (def.headersHelper !== undefined) t.headersHelper = def.headersHelper;
    if (def.oauthSettings) {
      const { settings, key, fields } = def.oauthSettings;
      const oauth: OAuthSettings = { ...settings };
      for (const k of ["clientId", "clientSecret", "authServerMetadataUrl"] as const) {
        const v = settings[k];
        if (v !== undefined) oauth[k] = x(v, [...at, key, fields[k] ?? k]);
      }
      t.oauth = oauth;
    }
    out.transport = t;
  }
  return out;
}
