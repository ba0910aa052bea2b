/**
 * What sandbox code may do beyond running Python: which servers and tools it may reach (glob allow and
 * deny lists, deny wins), how many tool calls a run may make, how many runs may execute at once, and how
 * large a run's code may be. From env variables, and the "policy" section of our own config file
 * ($XDG_CONFIG_HOME/mcp-code-exec/config.json, or MCP_BRIDGE_SETTINGS); env wins per field. Each
 * field, its variable and its text are defined once, in config/env.ts.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as z from "zod";
import { ENV_KEYS, envSetting, envVariable, type EnvKey } from "./config/env.ts";
import { formatIssues } from "./config/issues.ts";
import { BridgeError } from "./errors.ts";

const globs = z.array(z.string().min(1).max(300)).max(1000);
const count = z.number().int().positive();
const describe = (env: EnvKey) => envVariable(env).schema.description ?? "";

/** The `policy` section of our settings file; each field's text is its variable's (config/env.ts). */
export const PolicySchema = z
  .object({
    allowServers: globs.describe(describe("MCP_BRIDGE_ALLOW_SERVERS")),
    denyServers: globs.describe(describe("MCP_BRIDGE_DENY_SERVERS")),
    allowTools: globs.describe(describe("MCP_BRIDGE_ALLOW_TOOLS")),
    denyTools: globs.describe(describe("MCP_BRIDGE_DENY_TOOLS")),
    askTools: globs.describe(describe("MCP_BRIDGE_ASK_TOOLS")),
    toolDefault: z.enum(["allow", "ask", "deny"]).describe(describe("MCP_BRIDGE_TOOL_DEFAULT")),
    askTimeout: z
      .number()
      .positive()
      .max(86_400)
      .describe(`${describe("MCP_BRIDGE_ASK_TIMEOUT")}, in seconds`),
    maxToolCallsPerRun: count.describe(describe("MCP_BRIDGE_MAX_TOOL_CALLS")),
    maxConcurrentRuns: count.describe(describe("MCP_BRIDGE_MAX_CONCURRENT_RUNS")),
    maxCodeBytes: count.describe(describe("MCP_BRIDGE_MAX_CODE_BYTES")),
  })
  .partial()
  .strict();

export type PolicyInput = z.infer<typeof PolicySchema>;

export interface Policy {
  allowServers: string[];
  denyServers: string[];
  allowTools: string[];
  denyTools: string[];
  /** Tools whose calls wait for a person's approval. */
  askTools: string[];
  /** The decision for a tool no list names and whose annotations decide nothing. */
  toolDefault: "allow" | "ask" | "deny";
  /** Seconds an approval question waits for an answer. */
  askTimeout: number;
  maxToolCallsPerRun: number;
  maxConcurrentRuns: number;
  maxCodeBytes: number;
  /** Where each field came from, for error messages. */
  sources: Partial<Record<keyof PolicyInput, string>>;
}

/** Each policy field and the variable that sets it (the settings file's key is `policy.<field>`). */
const FIELD_ENV = Object.fromEntries(
  ENV_KEYS.flatMap((env) => {
    const key = envVariable(env).fileKey;
    return key?.startsWith("policy.") ? [[key.slice("policy.".length), env]] : [];
  }),
) as Record<keyof PolicyInput, EnvKey>;

export const POLICY_DEFAULTS: Omit<Policy, "sources"> = Object.fromEntries(
  Object.entries(FIELD_ENV).map(([field, env]) => [
    field,
    envSetting({}, env).value ?? (envVariable(env).default === undefined ? [] : undefined),
  ]),
) as Omit<Policy, "sources">;

export function settingsPath(env: Record<string, string | undefined>, home: string): string {
  return env.MCP_BRIDGE_SETTINGS?.trim() || join(env.XDG_CONFIG_HOME?.trim() || join(home, ".config"), "mcp-code-exec", "config.json");
}

/** Read the policy; a broken settings file or variable is a BridgeError naming the file/variable. */
export function loadPolicy(env: Record<string, string | undefined>, home: string): Policy {
  const policy: Policy = { ...POLICY_DEFAULTS, sources: {} };
  const file = settingsPath(env, home);
  let raw: string | undefined;
  try {
    raw = readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT" || env.MCP_BRIDGE_SETTINGS) {
      throw new BridgeError("CONFIG", `cannot read settings file ${file}: ${(err as Error).message}`, {
        hint: "fix or unset MCP_BRIDGE_SETTINGS",
      });
    }
  }
  if (raw !== undefined) {
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (err) {
      throw new BridgeError("CONFIG", `${file}: not valid JSON: ${(err as Error).message}`);
    }
    const parsed = z.object({ policy: PolicySchema.optional() }).passthrough().safeParse(json);
    if (!parsed.success) throw new BridgeError("CONFIG", `${file}: ${formatIssues(parsed.error.issues)}`);
    for (const [k, v] of Object.entries(parsed.data.policy ?? {})) {
      (policy as unknown as Record<string, unknown>)[k] = v;
      policy.sources[k as keyof PolicyInput] = `${file}: policy.${k}`;
    }
  }
  for (const [field, name] of Object.entries(FIELD_ENV) as Array<[keyof PolicyInput, EnvKey]>) {
    const { value, set, problem } = envSetting(env, name);
    if (!set) continue;
    if (problem) throw new BridgeError("CONFIG", problem, { hint: "fix or unset it (see `mcp-code-exec --help`)" });
    (policy as unknown as Record<string, unknown>)[field] = value;
    policy.sources[field] = name;
  }
  return policy;
}

/** Why something was refused: the rule, the pattern and where it was set. */
export class PolicyRefusal extends Error {
  readonly kind = "policy";
  constructor(message: string) {
    super(`refused by policy: ${message}`);
    this.name = "PolicyRefusal";
  }
}

const cache = new Map<string, RegExp>();
function glob(pattern: string): RegExp {
  let re = cache.get(pattern);
  if (!re) {
    re = new RegExp(
      `^${pattern
        .replace(/[.+^${}()|[\]\\]/g, "\\$&")
        .replace(/\*/g, ".*")
        .replace(/\?/g, ".")}$`,
      "i",
    );
    cache.set(pattern, re);
  }
  return re;
}

/** The rule's name as the settings file spells it, and where its value came from. */
export function where(policy: Policy, field: keyof PolicyInput): string {
  return `${field} (${policy.sources[field] ?? `default; set ${FIELD_ENV[field]} or policy.${field}`})`;
}

export function serverRefusal(policy: Policy, server: string): PolicyRefusal | undefined {
  const denied = policy.denyServers.find((p) => glob(p).test(server));
  if (denied) return new PolicyRefusal(`server ${server} matches "${denied}" in ${where(policy, "denyServers")}`);
  if (!policy.allowServers.some((p) => glob(p).test(server))) {
    return new PolicyRefusal(`server ${server} is not in [${policy.allowServers.join(", ")}] of ${where(policy, "allowServers")}`);
  }
  return undefined;
}

/** The first pattern of `patterns` naming server/tool: "server/tool" globs, or a bare tool glob for any server. */
export function toolPattern(patterns: readonly string[], server: string, tool: string): string | undefined {
  return patterns.find((p) => (p.includes("/") ? glob(p).test(`${server}/${tool}`) : glob(p).test(tool)));
}

/** Tool patterns match "server/tool"; a pattern without "/" matches the tool name on any server. */
export function toolRefusal(policy: Policy, server: string, tool: string): PolicyRefusal | undefined {
  const server_ = serverRefusal(policy, server);
  if (server_) return server_;
  const matches = (p: string) => toolPattern([p], server, tool) !== undefined;
  const denied = policy.denyTools.find(matches);
  if (denied) return new PolicyRefusal(`tool ${server}/${tool} matches "${denied}" in ${where(policy, "denyTools")}`);
  if (!policy.allowTools.some(matches)) {
    return new PolicyRefusal(`tool ${server}/${tool} is not in [${policy.allowTools.join(", ")}] of ${where(policy, "allowTools")}`);
  }
  return undefined;
}

/** Counts runs executing at once across every session of this bridge. */
export class RunSlots {
  #busy = 0;
  constructor(readonly max: number) {}
  tryAcquire(): (() => void) | undefined {
    if (this.#busy >= this.max) return undefined;
    this.#busy++;
    let released = false;
    return () => {
      if (!released) {
        released = true;
        this.#busy--;
      }
    };
  }
}
