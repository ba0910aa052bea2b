/**
 * Configuration from environment variables, validated with zod. The names match the bridge our users
 * come from, so their MCP configs keep working. Each variable is declared once, in env-vars.ts; the
 * Config type, `--help` and the table in docs/configuration.md are derived from those declarations here.
 */
import * as z from "zod";
import { BridgeError } from "../errors.ts";
import { ENV_FAMILIES, ENV_VARS, type Variable } from "./env-vars.ts";

export { parseSize } from "./env-parsers.ts";
export { DEFAULT_IMAGE, ENV_FAMILIES, ENV_VARS, LOG_LEVELS, OUTPUT_MODES } from "./env-vars.ts";

type Vars = typeof ENV_VARS;
export type EnvKey = keyof Vars;
/** A variable's value once parsed (what its schema gives). */
export type EnvValue<K extends EnvKey> = z.output<Vars[K]["schema"]>;

/**
 * ENV_VARS seen through a map from each key to its value's type, which TypeScript can follow for a key
 * that is a type parameter (the schema picked by `key` gives `EnvValue<K>`). Each entry is checked
 * against it where it is declared: an assignment, not a cast.
 */
const TYPED_VARS: { readonly [K in EnvKey]: Variable<EnvValue<K>> } = ENV_VARS;

export function isEnvKey(name: string): name is EnvKey {
  return Object.hasOwn(ENV_VARS, name);
}

/** Every variable, in the order of ENV_VARS (help and docs/configuration.md list them so). */
export const ENV_KEYS: readonly EnvKey[] = Object.keys(ENV_VARS).filter(isEnvKey);

/** A variable's declaration. */
export function envVariable<K extends EnvKey>(key: K): Variable<EnvValue<K>> {
  return TYPED_VARS[key];
}

/** One variable's value (set, else its default), parsed; `problem` names the variable and its value. */
export function envSetting<K extends EnvKey>(
  env: Record<string, string | undefined>,
  key: K,
): { value?: EnvValue<K>; set: boolean; problem?: string } {
  const set = Boolean(env[key]?.trim());
  const variable = envVariable(key);
  const raw = set ? env[key] : variable.default;
  if (raw === undefined) return { set };
  const parsed = variable.schema.safeParse(raw);
  if (parsed.success) return { value: parsed.data, set };
  return { set, problem: `${key}=${JSON.stringify(raw)}: ${parsed.error.issues.map((i) => i.message.replace(`${key}: `, "")).join("; ")}` };
}

/** Parse and validate the environment; throws one BridgeError listing every bad variable. */
export function loadConfig(env: Record<string, string | undefined>, home: string) {
  const problems: string[] = [];
  for (const key of ENV_KEYS) {
    const { problem } = envSetting(env, key);
    if (problem) problems.push(problem);
  }
  /** A variable's value; undefined when it is unset and has no default. */
  const get = <K extends EnvKey>(key: K): EnvValue<K> | undefined => envSetting(env, key).value;
  /** The value of a variable that has a default: there is always one once the environment is valid. */
  const need = <K extends EnvKey>(key: K): EnvValue<K> => {
    const value = get(key);
    if (value === undefined) throw new Error(`${key} has no default in ENV_VARS`);
    return value;
  };
  const timeout = get("MCP_BRIDGE_TIMEOUT");
  const max = get("MCP_BRIDGE_MAX_TIMEOUT");
  if (timeout !== undefined && max !== undefined && timeout > max) {
    problems.push(`MCP_BRIDGE_TIMEOUT=${timeout} is larger than MCP_BRIDGE_MAX_TIMEOUT=${max}`);
  }
  if (problems.length > 0) {
    throw new BridgeError("CONFIG", `invalid environment:\n  ${problems.join("\n  ")}`, {
      hint: "fix or unset these variables (see `mcp-code-exec --help`)",
    });
  }
  const runtime = get("MCP_BRIDGE_RUNTIME");
  const image = need("MCP_BRIDGE_IMAGE");
  const offlineImage = need("MCP_BRIDGE_OFFLINE_IMAGE");
  return {
    /** The engine named by MCP_BRIDGE_RUNTIME (podman, docker, ...); undefined = auto-selection. */
    engine: runtime && runtime !== "auto" ? runtime : undefined,
    /** Absolute path of an external adapter module (MCP_BRIDGE_ADAPTER); wins over `engine`. */
    adapter: get("MCP_BRIDGE_ADAPTER"),
    image,
    /**
     * When MCP_BRIDGE_IMAGE is unset or the default: the offline image (MCP_BRIDGE_OFFLINE_IMAGE), used on
     * an engine that lacks the default image but has this one (src/session/image-choice.ts). Undefined when
     * the user chose another image. The default counts as not chosen also when a launcher writes it out
     * (an MCPB bundle's settings do).
     */
    imageFallback: image !== ENV_VARS.MCP_BRIDGE_IMAGE.default || offlineImage === image ? undefined : offlineImage,
    /** MCP_BRIDGE_PULL: "missing" pulls an image the engine lacks at the first start that needs it. */
    pull: need("MCP_BRIDGE_PULL"),
    pullTimeoutSec: need("MCP_BRIDGE_PULL_TIMEOUT"),
    timeoutSec: need("MCP_BRIDGE_TIMEOUT"),
    maxTimeoutSec: need("MCP_BRIDGE_MAX_TIMEOUT"),
    memory: need("MCP_BRIDGE_MEMORY"),
    pids: need("MCP_BRIDGE_PIDS"),
    cpus: need("MCP_BRIDGE_CPUS"),
    user: need("MCP_BRIDGE_CONTAINER_USER"),
    idleTimeoutSec: need("MCP_BRIDGE_RUNTIME_IDLE_TIMEOUT"),
    lifetimeSec: need("MCP_BRIDGE_CONTAINER_LIFETIME"),
    /** A session unused this long ends (session/sessions.ts). */
    sessionTtlSec: need("MCP_BRIDGE_SESSION_TTL"),
    maxSessionsPerUser: need("MCP_BRIDGE_MAX_SESSIONS_PER_USER"),
    stateDir: get("MCP_BRIDGE_STATE_DIR") ?? defaultStateDir(env, home),
    outputMode: need("MCP_BRIDGE_OUTPUT_MODE"),
    outputCap: need("MCP_BRIDGE_OUTPUT_CAP"),
    /** Send structuredContent (and declare an outputSchema); off by default, see docs/clients.md "What the model sees". */
    structuredContent: need("MCP_BRIDGE_STRUCTURED_CONTENT"),
    logLevel: need("MCP_BRIDGE_LOG_LEVEL"),
    logFormat: need("MCP_BRIDGE_LOG_FORMAT"),
    ociRuntime: get("MCP_BRIDGE_OCI_RUNTIME"),
    prewarm: need("MCP_BRIDGE_PREWARM"),
    prewarmServers: need("MCP_BRIDGE_PREWARM_SERVERS"),
    /** "stdio": never a socket channel (MCP_BRIDGE_CHANNEL), whatever the engine could do. */
    channel: need("MCP_BRIDGE_CHANNEL"),
    tmpfsSize: need("MCP_BRIDGE_TMPFS_SIZE"),
    shmSize: need("MCP_BRIDGE_SHM_SIZE"),
    toolTimeoutSec: need("MCP_BRIDGE_TOOL_TIMEOUT"),
    upstreamStartTimeoutSec: need("MCP_BRIDGE_UPSTREAM_START_TIMEOUT"),
    workspace: get("MCP_BRIDGE_WORKSPACE"),
    workspaceMode: need("MCP_BRIDGE_WORKSPACE_MODE"),
    imageCap: need("MCP_BRIDGE_IMAGE_CAP"),
    fileCap: need("MCP_BRIDGE_FILE_CAP"),
    maxMessageBytes: need("MCP_BRIDGE_MAX_MESSAGE"),
    /** MCP_BRIDGE_BROWSER: program and arguments; [] = none (print the link only); undefined = the platform's. */
    browser: get("MCP_BRIDGE_BROWSER"),
    resultCap: need("MCP_BRIDGE_RESULT_CAP"),
    /** Bytes at which audit.jsonl is rotated. */
    auditMaxBytes: need("MCP_BRIDGE_AUDIT_MAX_SIZE"),
    /** Upstream servers shared by every user of an HTTP bridge (MCP_BRIDGE_SHARED_SERVERS). */
    sharedServers: get("MCP_BRIDGE_SHARED_SERVERS") ?? [],
    /** Installs into sessions (src/packages/). */
    packages: {
      mode: need("MCP_BRIDGE_INSTALL"),
      always: get("MCP_BRIDGE_PACKAGES") ?? [],
      wheelhouse: get("MCP_BRIDGE_WHEELHOUSE"),
      index: need("MCP_BRIDGE_PACKAGE_INDEX"),
      cooldownDays: need("MCP_BRIDGE_PACKAGE_COOLDOWN_DAYS"),
      maxBytes: need("MCP_BRIDGE_PACKAGE_MAX_SIZE"),
      uv: get("MCP_BRIDGE_UV"),
    },
  };
}

/** The bridge's configuration, as loadConfig makes it from the variables. */
export type Config = ReturnType<typeof loadConfig>;
/** Installs into sessions (src/packages/). */
export type PackageSettings = Config["packages"];

function defaultStateDir(env: Record<string, string | undefined>, home: string): string {
  const xdg = env.XDG_STATE_HOME?.trim();
  return `${xdg || `${home}/.local/state`}/mcp-code-exec`;
}

/** Rows for help output and docs/configuration.md: variable, default, description, and its settings-file key. */
export function envTable(): Array<{ name: string; default: string; description: string; fileKey?: string }> {
  return ENV_KEYS.map((name) => {
    const v = envVariable(name);
    return { name, default: v.default ?? v.shown ?? "", description: v.schema.description ?? "", fileKey: v.fileKey };
  });
}

/** docs/configuration.md's table of variables, generated from the schema (scripts/config-reference.ts writes it; test/unit/env-config.test.ts compares). */
export function envMarkdownTable(): string {
  const cell = (s: string) => s.replaceAll("|", "\\|");
  return [
    "| variable | default | meaning |",
    "| --- | --- | --- |",
    ...envTable().map(
      (r) =>
        `| \`${r.name}\` | ${r.default ? `\`${cell(r.default)}\`` : ""} | ${cell(r.description)}${r.fileKey ? ` (settings file: \`${r.fileKey}\`)` : ""} |`,
    ),
    ...Object.values(ENV_FAMILIES).map((d) => {
      const [name, text] = d.split(": ");
      return `| \`${name}\` |  | ${cell(text!)} |`;
    }),
  ].join("\n");
}
