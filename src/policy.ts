/**
 * What sandbox code may do beyond running Python: which servers and tools it may reach (glob allow and
 * deny lists, deny wins), how many tool calls a run may make, how many runs may execute at once, and how
 * large a run's code may be. From env variables, and the "policy" section of our own config file
 * ($XDG_CONFIG_HOME/mcp-code-exec/config.json, or MCP_BRIDGE_SETTINGS); env wins per field.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as z from "zod";
import { BridgeError } from "./errors.ts";

const globs = z.array(z.string().min(1).max(300)).max(1000);

export const PolicySchema = z
  .object({
    allowServers: globs.describe("Servers code may load (globs); default all"),
    denyServers: globs.describe("Servers code may never load (globs); deny wins"),
    allowTools: globs.describe('Tools code may call, as "server/tool" or "tool" globs; default all'),
    denyTools: globs.describe("Tools code may never call; deny wins"),
    maxToolCallsPerRun: z.number().int().positive().describe("Proxied tool calls one run may make"),
    maxConcurrentRuns: z.number().int().positive().describe("run_python calls executing at once, across sessions"),
    maxCodeBytes: z.number().int().positive().describe("Largest code one run may send"),
  })
  .partial()
  .strict();

export type PolicyInput = z.infer<typeof PolicySchema>;

export interface Policy {
  allowServers: string[];
  denyServers: string[];
  allowTools: string[];
  denyTools: string[];
  maxToolCallsPerRun: number;
  maxConcurrentRuns: number;
  maxCodeBytes: number;
  /** Where each field came from, for error messages. */
  sources: Partial<Record<keyof PolicyInput, string>>;
}

export const POLICY_DEFAULTS: Omit<Policy, "sources"> = {
  allowServers: ["*"],
  denyServers: [],
  allowTools: ["*"],
  denyTools: [],
  maxToolCallsPerRun: 10_000,
  maxConcurrentRuns: 4,
  maxCodeBytes: 1024 * 1024,
};

const ENV_FIELDS: Record<string, keyof PolicyInput> = {
  MCP_BRIDGE_ALLOW_SERVERS: "allowServers",
  MCP_BRIDGE_DENY_SERVERS: "denyServers",
  MCP_BRIDGE_ALLOW_TOOLS: "allowTools",
  MCP_BRIDGE_DENY_TOOLS: "denyTools",
  MCP_BRIDGE_MAX_TOOL_CALLS: "maxToolCallsPerRun",
  MCP_BRIDGE_MAX_CONCURRENT_RUNS: "maxConcurrentRuns",
  MCP_BRIDGE_MAX_CODE_BYTES: "maxCodeBytes",
};

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
      throw new BridgeError("CONFIG", `cannot read settings file ${file}: ${(err as Error).message}`, { hint: "fix or unset MCP_BRIDGE_SETTINGS" });
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
    if (!parsed.success) {
      throw new BridgeError("CONFIG", `${file}: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
    }
    for (const [k, v] of Object.entries(parsed.data.policy ?? {})) {
      (policy as unknown as Record<string, unknown>)[k] = v;
      policy.sources[k as keyof PolicyInput] = `${file}: policy.${k}`;
    }
  }
  for (const [name, field] of Object.entries(ENV_FIELDS)) {
    const value = env[name]?.trim();
    if (!value) continue;
    if (field.startsWith("max")) {
      const n = Number(value);
      if (!Number.isInteger(n) || n <= 0) throw new BridgeError("CONFIG", `${name}=${JSON.stringify(value)}: expected a whole number greater than 0`);
      (policy as unknown as Record<string, unknown>)[field] = n;
    } else {
      (policy as unknown as Record<string, unknown>)[field] = value.split(",").map((s) => s.trim()).filter(Boolean);
    }
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
    re = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")}$`, "i");
    cache.set(pattern, re);
  }
  return re;
}

function where(policy: Policy, field: keyof PolicyInput): string {
  return policy.sources[field] ?? "default";
}

export function serverRefusal(policy: Policy, server: string): PolicyRefusal | undefined {
  const denied = policy.denyServers.find((p) => glob(p).test(server));
  if (denied) return new PolicyRefusal(`server ${server} matches deny_servers "${denied}" (${where(policy, "denyServers")})`);
  if (!policy.allowServers.some((p) => glob(p).test(server))) {
    return new PolicyRefusal(`server ${server} is not in allow_servers [${policy.allowServers.join(", ")}] (${where(policy, "allowServers")})`);
  }
  return undefined;
}

/** Tool patterns match "server/tool"; a pattern without "/" matches the tool name on any server. */
export function toolRefusal(policy: Policy, server: string, tool: string): PolicyRefusal | undefined {
  const server_ = serverRefusal(policy, server);
  if (server_) return server_;
  const matches = (p: string) => (p.includes("/") ? glob(p).test(`${server}/${tool}`) : glob(p).test(tool));
  const denied = policy.denyTools.find(matches);
  if (denied) return new PolicyRefusal(`tool ${server}/${tool} matches deny_tools "${denied}" (${where(policy, "denyTools")})`);
  if (!policy.allowTools.some(matches)) {
    return new PolicyRefusal(`tool ${server}/${tool} is not in allow_tools [${policy.allowTools.join(", ")}] (${where(policy, "allowTools")})`);
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
