/**
 * Configuration from environment variables, validated with zod. The names match the bridge our users
 * come from, so their MCP configs keep working. Every field's `.describe()` feeds `--help` and README.
 */
import { statSync } from "node:fs";
import { isAbsolute } from "node:path";
import * as z from "zod";
import { BridgeError } from "../errors.ts";

const seconds = (name: string) =>
  z
    .string()
    .trim()
    .transform((raw, ctx) => {
      const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/i.exec(raw);
      if (!m) {
        ctx.addIssue({ code: "custom", message: `${name}: expected seconds like 30, 2.5, 90s, 5m or 1h; got "${raw}"` });
        return z.NEVER;
      }
      const n = Number(m[1]);
      const unit = (m[2] ?? "s").toLowerCase();
      const factor = unit === "ms" ? 0.001 : unit === "m" ? 60 : unit === "h" ? 3600 : 1;
      const value = n * factor;
      if (!(value > 0)) {
        ctx.addIssue({ code: "custom", message: `${name}: must be greater than 0; got "${raw}"` });
        return z.NEVER;
      }
      return value;
    });

/** Bytes in a size such as 65536, 64k, 512m, 1g or 2GiB (powers of 1024); NaN when it is not one. */
export function parseSize(raw: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([kmg]i?b?|b)?$/i.exec(raw.trim());
  if (!m) return Number.NaN;
  const unit = (m[2] ?? "b").toLowerCase()[0];
  const factor = unit === "k" ? 1024 : unit === "m" ? 1024 ** 2 : unit === "g" ? 1024 ** 3 : 1;
  return Math.floor(Number(m[1]) * factor);
}

const bytes = (name: string) =>
  z
    .string()
    .trim()
    .transform((raw, ctx) => {
      const value = parseSize(raw);
      if (Number.isNaN(value)) {
        ctx.addIssue({ code: "custom", message: `${name}: expected a size like 65536, 64k, 512m or 1g; got "${raw}"` });
        return z.NEVER;
      }
      if (value <= 0) {
        ctx.addIssue({ code: "custom", message: `${name}: must be greater than 0; got "${raw}"` });
        return z.NEVER;
      }
      return value;
    });

const positiveInt = (name: string) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, `${name}: expected a whole number`)
    .transform(Number)
    .refine((n) => n > 0, `${name}: must be greater than 0`);

const globList = (name: string) =>
  z
    .string()
    .transform((raw) =>
      raw
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .refine((l) => l.every((g) => g.length <= 300), `${name}: each pattern at most 300 characters`);

const flag = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => ["1", "0", "true", "false", "yes", "no", "on", "off", ""].includes(v), "expected 1/0, true/false, yes/no or on/off")
  .transform((v) => ["1", "true", "yes", "on"].includes(v));

/** A command line split on spaces, or a JSON array of strings; `none` is the empty list. */
const commandLine = (name: string) =>
  z
    .string()
    .trim()
    .min(1)
    .transform((raw, ctx) => {
      if (raw === "none") return [];
      if (!raw.startsWith("[")) return raw.split(/\s+/);
      try {
        const v = JSON.parse(raw) as unknown;
        if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "string" && x !== "")) return v as string[];
      } catch {
        // reported below
      }
      ctx.addIssue({ code: "custom", message: `${name}: expected a command line, or a JSON array of non-empty strings` });
      return z.NEVER;
    });

export const OUTPUT_MODES = ["compact", "toon", "json"] as const;
export const LOG_LEVELS = ["DEBUG", "INFO", "WARNING", "ERROR"] as const;

/** Each entry: the variable, its parser, its default (as the user would write it) and a description. */
export const ENV_SCHEMA = {
  MCP_BRIDGE_RUNTIME: z
    .string()
    .trim()
    .toLowerCase()
    .describe("Container engine to use: podman, docker, nerdctl, podman-machine (auto: the first of these that answers)"),
  MCP_BRIDGE_ADAPTER: z
    .string()
    .trim()
    .min(1)
    .refine((p) => isAbsolute(p), "must be an absolute path")
    .refine((p) => /\.(ts|mts|js|mjs|cjs)$/.test(p), "must be a .ts or .js module")
    .refine((p) => isFile(p), "is not an existing file")
    .describe("External engine adapter module (default export: an AdapterFactory); used instead of MCP_BRIDGE_RUNTIME and auto-selection"),
  MCP_BRIDGE_IMAGE: z
    .string()
    .trim()
    .min(1)
    .describe("Sandbox image (unset or the default: the default where the engine has it, else the offline image)"),
  MCP_BRIDGE_TIMEOUT: seconds("MCP_BRIDGE_TIMEOUT").describe("Default run_python timeout in seconds"),
  MCP_BRIDGE_MAX_TIMEOUT: seconds("MCP_BRIDGE_MAX_TIMEOUT").describe("Largest timeout a call may ask for"),
  MCP_BRIDGE_MEMORY: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^\d+(\.\d+)?[kmg]?$/, "expected an engine memory size like 512m or 2g")
    .describe("Sandbox memory limit (swap disabled)"),
  MCP_BRIDGE_PIDS: positiveInt("MCP_BRIDGE_PIDS").describe("Sandbox process/thread limit"),
  MCP_BRIDGE_CPUS: z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?$/, "expected a number of CPUs like 1 or 0.5")
    .transform(Number)
    .refine((n) => n > 0, "must be greater than 0")
    .describe("Sandbox CPU limit"),
  MCP_BRIDGE_CONTAINER_USER: z
    .string()
    .trim()
    .regex(/^\d+(:\d+)?$/, 'expected a numeric "uid:gid" such as 65534:65534')
    .refine((v) => !/^0(:|$)/.test(v), "refusing to run the sandbox as root (uid 0)")
    .describe("Unprivileged uid:gid inside the sandbox"),
  MCP_BRIDGE_RUNTIME_IDLE_TIMEOUT: seconds("MCP_BRIDGE_RUNTIME_IDLE_TIMEOUT").describe(
    "Stop the sandbox after this many idle seconds (state is lost)",
  ),
  MCP_BRIDGE_CONTAINER_LIFETIME: seconds("MCP_BRIDGE_CONTAINER_LIFETIME").describe(
    "Hard cap on a sandbox's life, enforced by the sandbox's own init even if the bridge dies",
  ),
  MCP_BRIDGE_SESSION_TTL: seconds("MCP_BRIDGE_SESSION_TTL").describe(
    "A Python session (a handle run_python answers with) unused this long ends; the next call with it is told its state is gone",
  ),
  MCP_BRIDGE_MAX_SESSIONS_PER_USER: positiveInt("MCP_BRIDGE_MAX_SESSIONS_PER_USER").describe(
    'Python sessions one user may hold at once (run_python(session="new") makes another)',
  ),
  MCP_BRIDGE_STATE_DIR: z
    .string()
    .trim()
    .min(1)
    .describe(
      "Where caches and state live. Where it cannot be written (a read-only home, a full disk), sandboxes still start and calls still work: the seccomp profile and the watchdog's list of upstream servers go to a fresh folder of the bridge's own in the temporary folder, removed at exit; the log says so once, `doctor` fails its `state dir` check, and the audit log, skills, sign-ins and caches are not kept (`save_skill` says why)",
    ),
  MCP_BRIDGE_OUTPUT_MODE: z.string().trim().toLowerCase().pipe(z.enum(OUTPUT_MODES)).describe("Result rendering: compact, toon or json"),
  MCP_BRIDGE_STRUCTURED_CONTENT: flag.describe(
    "Also send results as structuredContent, with a declared outputSchema (Codex and Claude Code then show their model only that JSON: no plot, no rendered text)",
  ),
  MCP_BRIDGE_OUTPUT_CAP: bytes("MCP_BRIDGE_OUTPUT_CAP").describe("Cap per output stream per call (e.g. 64k)"),
  MCP_BRIDGE_LOG_LEVEL: z
    .string()
    .trim()
    .toUpperCase()
    .transform((v) => (v === "WARN" ? "WARNING" : v))
    .pipe(z.enum(LOG_LEVELS))
    .describe("Log level on stderr: DEBUG, INFO, WARNING, ERROR"),
  MCP_BRIDGE_LOG_FORMAT: z
    .string()
    .trim()
    .toLowerCase()
    .pipe(z.enum(["text", "json"]))
    .describe("Log lines on stderr: text or json"),
  MCP_BRIDGE_OCI_RUNTIME: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9._/-]+$/, "expected an OCI runtime name or path such as runc or runsc")
    .describe("OCI runtime passed to the engine (runsc = gVisor)"),
  MCP_BRIDGE_PREWARM: flag.describe("Start the sandbox in the background once a client initializes"),
  MCP_BRIDGE_CHANNEL: z
    .string()
    .trim()
    .toLowerCase()
    .pipe(z.enum(["auto", "stdio"]))
    .describe(
      "What frames to the sandbox run over: auto (a socket the engine passes or mounts when it is local: podman, docker) or stdio (always the engine's stdin/stdout)",
    ),
  MCP_BRIDGE_TOOL_TIMEOUT: seconds("MCP_BRIDGE_TOOL_TIMEOUT").describe("Timeout of one proxied MCP tool call from the sandbox"),
  MCP_BRIDGE_UPSTREAM_START_TIMEOUT: seconds("MCP_BRIDGE_UPSTREAM_START_TIMEOUT").describe(
    "How long an upstream MCP server may take to start and list its tools",
  ),
  MCP_BRIDGE_CONFIG: z.string().trim().min(1).describe("Extra MCP server config file or folder, read first"),
  MCP_BRIDGE_WORKSPACE: z
    .string()
    .trim()
    .min(1)
    .refine((p) => isAbsolute(p), "must be an absolute path")
    .refine((p) => isDirectory(p), "is not an existing directory")
    .describe("Host folder mounted at /workspace in the sandbox (read-only unless MCP_BRIDGE_WORKSPACE_MODE=rw)"),
  MCP_BRIDGE_WORKSPACE_MODE: z
    .string()
    .trim()
    .toLowerCase()
    .pipe(z.enum(["ro", "rw"]))
    .describe("ro or rw"),
  MCP_BRIDGE_IMAGE_CAP: bytes("MCP_BRIDGE_IMAGE_CAP").describe("Largest image returned from a run"),
  MCP_BRIDGE_FILE_CAP: bytes("MCP_BRIDGE_FILE_CAP").describe("Largest file returned from /tmp/outputs/"),
  MCP_BRIDGE_RESULT_CAP: bytes("MCP_BRIDGE_RESULT_CAP").describe(
    "Images and files one run returns, in all, base64 included (clients such as the MCP SDK drop a response over 10 MiB)",
  ),
  MCP_BRIDGE_MAX_MESSAGE: bytes("MCP_BRIDGE_MAX_MESSAGE").describe(
    "Largest MCP message read from the client; a larger one is answered with an error and skipped",
  ),
  MCP_BRIDGE_TMPFS_SIZE: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^\d+[kmg]?$/, "expected a size like 64m")
    .describe("Size of the sandbox's /tmp"),
  MCP_BRIDGE_SHM_SIZE: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^\d+[kmg]?$/, "expected a size like 64m")
    .describe("Size of the sandbox's /dev/shm"),
  MCP_BRIDGE_ALLOW_SELF_SERVER: flag.describe("Allow MCP config entries that launch this bridge again (skipped by default)"),
  MCP_BRIDGE_SETTINGS: z.string().trim().min(1).describe("Our settings file (the `policy` section)"),
  MCP_BRIDGE_ALLOW_SERVERS: globList("MCP_BRIDGE_ALLOW_SERVERS").describe("Servers code may load, comma-separated globs (all when unset)"),
  MCP_BRIDGE_DENY_SERVERS: globList("MCP_BRIDGE_DENY_SERVERS").describe("Servers code may never load, comma-separated globs; deny wins"),
  MCP_BRIDGE_ALLOW_TOOLS: globList("MCP_BRIDGE_ALLOW_TOOLS").describe(
    'Tools code may call, as "server/tool" or "tool" globs (all when unset)',
  ),
  MCP_BRIDGE_DENY_TOOLS: globList("MCP_BRIDGE_DENY_TOOLS").describe("Tools code may never call; deny wins"),
  MCP_BRIDGE_ASK_TOOLS: globList("MCP_BRIDGE_ASK_TOOLS").describe(
    "Tools that run only once you approve the call (asked through your MCP client); deny wins over ask, ask over allow",
  ),
  MCP_BRIDGE_TOOL_DEFAULT: z
    .string()
    .trim()
    .toLowerCase()
    .pipe(z.enum(["allow", "ask", "deny"]))
    .describe(
      "allow, ask or deny: for a tool no list names and whose server marks it neither read-only (then allow) nor destructive (then ask)",
    ),
  MCP_BRIDGE_ASK_TIMEOUT: seconds("MCP_BRIDGE_ASK_TIMEOUT").describe(
    "How long an approval question waits for your answer before the call is refused",
  ),
  MCP_BRIDGE_MAX_TOOL_CALLS: positiveInt("MCP_BRIDGE_MAX_TOOL_CALLS").describe("Proxied tool calls one run may make"),
  MCP_BRIDGE_MAX_CONCURRENT_RUNS: positiveInt("MCP_BRIDGE_MAX_CONCURRENT_RUNS").describe(
    "run_python calls executing at once, across sessions",
  ),
  MCP_BRIDGE_MAX_CODE_BYTES: positiveInt("MCP_BRIDGE_MAX_CODE_BYTES").describe("Largest code one run may send, in bytes"),
  MCP_BRIDGE_AUDIT_MAX_SIZE: bytes("MCP_BRIDGE_AUDIT_MAX_SIZE").describe(
    "Size at which the audit log of proxied calls (audit.jsonl in the state dir) is rotated; the 3 files before it are kept",
  ),
  MCP_BRIDGE_OFFLINE_IMAGE: z
    .string()
    .trim()
    .min(1)
    .describe(
      "Name `image build --offline` gives the image it builds; the sandbox image when MCP_BRIDGE_IMAGE is unset or the default and the engine lacks the default",
    ),
  MCP_BRIDGE_IMAGE_CACHE: z.string().trim().min(1).describe("Where `image build --offline` caches the root filesystem"),
  MCP_BRIDGE_HTTP_LISTEN: z
    .string()
    .trim()
    .regex(/^(\[[0-9a-f:]+\]|[\w.-]+):\d{1,5}$/i, "expected HOST:PORT such as 127.0.0.1:8931 or [::1]:8931")
    .describe(
      "`serve --http`: where to listen (HOST:PORT); anything but loopback needs sign-in (MCP_BRIDGE_HTTP_TOKENS or MCP_BRIDGE_HTTP_ISSUER)",
    ),
  MCP_BRIDGE_HTTP_TOKENS: z
    .string()
    .trim()
    .min(1)
    .describe(
      "`serve --http`: static sign-in, `name=token` pairs (comma-separated) or the path of a file of such lines; each name is a user",
    ),
  MCP_BRIDGE_HTTP_ISSUER: z
    .url()
    .describe(
      "`serve --http`: the OAuth authorization server whose JWT access tokens are accepted (issuer URL; its keys come from its metadata)",
    ),
  MCP_BRIDGE_HTTP_JWKS_URL: z.url().describe("`serve --http`: the issuer's JWKS, when its metadata does not name it"),
  MCP_BRIDGE_HTTP_RESOURCE: z
    .url()
    .describe("`serve --http`: this server's public URL of /mcp, the audience tokens must name (RFC 8707); default: the listen address"),
  MCP_BRIDGE_HTTP_SCOPES: z.string().trim().describe("`serve --http`: scopes every access token must carry (space-separated)"),
  MCP_BRIDGE_HTTP_PRINCIPAL_CLAIM: z
    .string()
    .trim()
    .regex(/^[\w.:-]{1,64}$/, "expected a claim name such as sub or email")
    .describe("`serve --http`: the JWT claim that names the user"),
  MCP_BRIDGE_HTTP_ORIGINS: globList("MCP_BRIDGE_HTTP_ORIGINS").describe(
    "`serve --http`: web origins allowed to call (comma-separated); a browser request from any other is refused (DNS rebinding)",
  ),
  MCP_BRIDGE_SHARED_SERVERS: globList("MCP_BRIDGE_SHARED_SERVERS").describe(
    "`serve --http`: upstream servers every user shares one process or connection of (only those that keep no per-user state); the rest run per user, with each user's own sign-ins",
  ),
  MCP_BRIDGE_USER_CALLS_PER_MINUTE: positiveInt("MCP_BRIDGE_USER_CALLS_PER_MINUTE").describe(
    "`serve --http`: run_python calls one user may make per minute (bursts up to it); past it, an error saying when to retry",
  ),
  MCP_BRIDGE_USER_MEMORY: bytes("MCP_BRIDGE_USER_MEMORY").describe(
    "`serve --http`: memory one user's sandboxes may hold together (each at MCP_BRIDGE_MEMORY); bounds how many sessions a user has",
  ),
  MCP_BRIDGE_NODE_SANDBOXES: positiveInt("MCP_BRIDGE_NODE_SANDBOXES").describe(
    "`serve --http`: Python sessions this server holds for all users together (default: 8 per core, at most what 80% of its memory holds)",
  ),
  MCP_BRIDGE_HTTP_MAX_CONNECTIONS: positiveInt("MCP_BRIDGE_HTTP_MAX_CONNECTIONS").describe(
    "`serve --http`: MCP protocol sessions one user may hold open",
  ),
  MCP_BRIDGE_BROWSER: commandLine("MCP_BRIDGE_BROWSER").describe(
    "Browser command `auth login` opens the sign-in page with (the URL is added last): a command line or a JSON array; `none` only prints the link",
  ),
  MCP_BRIDGE_INSTALL: z
    .string()
    .trim()
    .toLowerCase()
    .pipe(z.enum(["ask", "allow", "deny"]))
    .describe(
      "runtime.install() from sandbox code: ask (a download from the package index waits for your approval; the wheelhouse and wheels approved before install at once), allow (downloads without asking) or deny (no installs)",
    ),
  MCP_BRIDGE_PACKAGES: globList("MCP_BRIDGE_PACKAGES")
    .refine((l) => l.length <= 20, "at most 20 packages")
    .describe(
      'Packages every session gets before its first run, comma-separated requirements such as "rich,tabulate==0.9.0" (your list counts as your approval of their download)',
    ),
  MCP_BRIDGE_WHEELHOUSE: z
    .string()
    .trim()
    .min(1)
    .refine((p) => isAbsolute(p), "must be an absolute path")
    .describe("Folder of wheels installs use without asking (fill it with `mcp-code-exec packages add` on a connected machine)"),
  MCP_BRIDGE_PACKAGE_INDEX: z
    .string()
    .trim()
    .regex(/^https?:\/\/[^\s]+$/, "expected an http(s) URL of a PEP 503 simple index")
    .describe("PEP 503 simple index installs download from after approval (a devpi or Artifactory mirror works)"),
  MCP_BRIDGE_PACKAGE_COOLDOWN_DAYS: positiveInt("MCP_BRIDGE_PACKAGE_COOLDOWN_DAYS").describe(
    "A release younger than this many days is flagged in the approval question",
  ),
  MCP_BRIDGE_PACKAGE_MAX_SIZE: bytes("MCP_BRIDGE_PACKAGE_MAX_SIZE").describe(
    "Largest install: the wheels downloaded, and each wheel once unpacked",
  ),
  MCP_BRIDGE_UV: z
    .string()
    .trim()
    .min(1)
    .refine((p) => isAbsolute(p), "must be an absolute path")
    .describe(
      "The uv binary installs resolve with (default: the pinned uv, unpacked into the state dir from the wheelhouse or the index, or uv on PATH)",
    ),
} as const;

/** Families of variables named after something the user defines; listed in help and README. */
export const ENV_FAMILIES: Record<string, string> = {
  MCP_BRIDGE_INPUT_:
    "MCP_BRIDGE_INPUT_<ID>: the value of a VS Code ${input:<id>} prompt in a server definition (id upper-cased, other characters as _)",
};

/** Defaults computed at run time, as help and README show them. */
const DEFAULTS_SHOWN: Partial<Record<keyof typeof ENV_SCHEMA, string>> = {
  MCP_BRIDGE_RUNTIME: "auto",
  MCP_BRIDGE_STATE_DIR: "$XDG_STATE_HOME/mcp-code-exec",
  MCP_BRIDGE_OCI_RUNTIME: "engine default",
  MCP_BRIDGE_SETTINGS: "$XDG_CONFIG_HOME/mcp-code-exec/config.json",
  MCP_BRIDGE_BROWSER: "open, xdg-open or wslview",
  MCP_BRIDGE_NODE_SANDBOXES: "8 per core, within 80% of memory",
};

/** Settings that also live in our settings file: the variable wins, per field. */
export const SETTINGS_FILE_KEYS = {
  MCP_BRIDGE_ALLOW_SERVERS: "policy.allowServers",
  MCP_BRIDGE_DENY_SERVERS: "policy.denyServers",
  MCP_BRIDGE_ALLOW_TOOLS: "policy.allowTools",
  MCP_BRIDGE_DENY_TOOLS: "policy.denyTools",
  MCP_BRIDGE_ASK_TOOLS: "policy.askTools",
  MCP_BRIDGE_TOOL_DEFAULT: "policy.toolDefault",
  MCP_BRIDGE_ASK_TIMEOUT: "policy.askTimeout",
  MCP_BRIDGE_MAX_TOOL_CALLS: "policy.maxToolCallsPerRun",
  MCP_BRIDGE_MAX_CONCURRENT_RUNS: "policy.maxConcurrentRuns",
  MCP_BRIDGE_MAX_CODE_BYTES: "policy.maxCodeBytes",
} as const satisfies Partial<Record<keyof typeof ENV_SCHEMA, string>>;

export type EnvKey = keyof typeof ENV_SCHEMA;

export const ENV_DEFAULTS: Partial<Record<EnvKey, string>> = {
  MCP_BRIDGE_IMAGE: "python:3.13-slim",
  MCP_BRIDGE_TIMEOUT: "30",
  MCP_BRIDGE_MAX_TIMEOUT: "120",
  MCP_BRIDGE_MEMORY: "512m",
  MCP_BRIDGE_PIDS: "128",
  MCP_BRIDGE_CPUS: "1",
  MCP_BRIDGE_CONTAINER_USER: "65534:65534",
  MCP_BRIDGE_RUNTIME_IDLE_TIMEOUT: "300",
  MCP_BRIDGE_CONTAINER_LIFETIME: "8h",
  MCP_BRIDGE_SESSION_TTL: "24h",
  MCP_BRIDGE_MAX_SESSIONS_PER_USER: "8",
  MCP_BRIDGE_OUTPUT_MODE: "compact",
  MCP_BRIDGE_OUTPUT_CAP: "64k",
  MCP_BRIDGE_STRUCTURED_CONTENT: "0",
  MCP_BRIDGE_LOG_LEVEL: "INFO",
  MCP_BRIDGE_LOG_FORMAT: "text",
  MCP_BRIDGE_PREWARM: "1",
  MCP_BRIDGE_CHANNEL: "auto",
  MCP_BRIDGE_TMPFS_SIZE: "64m",
  MCP_BRIDGE_TOOL_TIMEOUT: "60",
  MCP_BRIDGE_WORKSPACE_MODE: "ro",
  MCP_BRIDGE_IMAGE_CAP: "2m",
  MCP_BRIDGE_FILE_CAP: "1m",
  MCP_BRIDGE_UPSTREAM_START_TIMEOUT: "60",
  MCP_BRIDGE_SHM_SIZE: "64m",
  MCP_BRIDGE_MAX_MESSAGE: "16m",
  MCP_BRIDGE_RESULT_CAP: "8m",
  MCP_BRIDGE_ALLOW_SERVERS: "*",
  MCP_BRIDGE_ALLOW_TOOLS: "*",
  MCP_BRIDGE_MAX_TOOL_CALLS: "10000",
  MCP_BRIDGE_MAX_CONCURRENT_RUNS: "4",
  MCP_BRIDGE_MAX_CODE_BYTES: "1048576",
  MCP_BRIDGE_TOOL_DEFAULT: "allow",
  MCP_BRIDGE_ASK_TIMEOUT: "120",
  MCP_BRIDGE_AUDIT_MAX_SIZE: "10m",
  MCP_BRIDGE_OFFLINE_IMAGE: "mcp-code-exec-sandbox:bookworm",
  MCP_BRIDGE_IMAGE_CACHE: "/var/cache/mcp-code-exec",
  MCP_BRIDGE_HTTP_LISTEN: "127.0.0.1:8931",
  MCP_BRIDGE_HTTP_PRINCIPAL_CLAIM: "sub",
  MCP_BRIDGE_HTTP_MAX_CONNECTIONS: "16",
  MCP_BRIDGE_USER_CALLS_PER_MINUTE: "120",
  MCP_BRIDGE_INSTALL: "ask",
  MCP_BRIDGE_PACKAGE_INDEX: "https://pypi.org/simple",
  MCP_BRIDGE_PACKAGE_COOLDOWN_DAYS: "14",
  MCP_BRIDGE_PACKAGE_MAX_SIZE: "2g",
};

export interface Config {
  /** The engine named by MCP_BRIDGE_RUNTIME (podman, docker, ...); undefined = auto-selection. */
  engine: string | undefined;
  /** Absolute path of an external adapter module (MCP_BRIDGE_ADAPTER); wins over `engine`. */
  adapter: string | undefined;
  image: string;
  /**
   * When MCP_BRIDGE_IMAGE is unset or the default: the offline image (MCP_BRIDGE_OFFLINE_IMAGE), used on
   * an engine that lacks the default image but has this one (src/session/image-choice.ts). Undefined when
   * the user chose another image.
   */
  imageFallback?: string;
  timeoutSec: number;
  maxTimeoutSec: number;
  memory: string;
  pids: number;
  cpus: number;
  user: string;
  idleTimeoutSec: number;
  lifetimeSec: number;
  /** A session unused this long ends (session/sessions.ts). */
  sessionTtlSec: number;
  maxSessionsPerUser: number;
  stateDir: string;
  outputMode: (typeof OUTPUT_MODES)[number];
  outputCap: number;
  /** Send structuredContent (and declare an outputSchema); off by default, see README "What the model sees". */
  structuredContent: boolean;
  logLevel: (typeof LOG_LEVELS)[number];
  logFormat: "text" | "json";
  ociRuntime: string | undefined;
  /** "stdio": never a socket channel (MCP_BRIDGE_CHANNEL), whatever the engine could do. */
  channel: "auto" | "stdio";
  prewarm: boolean;
  tmpfsSize: string;
  shmSize: string;
  toolTimeoutSec: number;
  upstreamStartTimeoutSec: number;
  workspace: string | undefined;
  workspaceMode: "ro" | "rw";
  imageCap: number;
  fileCap: number;
  maxMessageBytes: number;
  /** MCP_BRIDGE_BROWSER: program and arguments; [] = none (print the link only); undefined = the platform's. */
  browser: string[] | undefined;
  resultCap: number;
  /** Bytes at which audit.jsonl is rotated. */
  auditMaxBytes: number;
  /** Upstream servers shared by every user of an HTTP bridge (MCP_BRIDGE_SHARED_SERVERS). */
  sharedServers: string[];
  /** Installs into sessions (src/packages/). */
  packages: PackageSettings;
}

export interface PackageSettings {
  mode: "ask" | "allow" | "deny";
  always: string[];
  wheelhouse: string | undefined;
  index: string;
  cooldownDays: number;
  maxBytes: number;
  uv: string | undefined;
}

/** One variable's value (set, else its default), parsed; `problem` names the variable and its value. */
export function envSetting(env: Record<string, string | undefined>, key: EnvKey): { value?: unknown; set: boolean; problem?: string } {
  const set = Boolean(env[key]?.trim());
  const raw = set ? env[key] : ENV_DEFAULTS[key];
  if (raw === undefined) return { set };
  const parsed = (ENV_SCHEMA[key] as z.ZodType).safeParse(raw);
  if (parsed.success) return { value: parsed.data, set };
  return { set, problem: `${key}=${JSON.stringify(raw)}: ${parsed.error.issues.map((i) => i.message.replace(`${key}: `, "")).join("; ")}` };
}

/** Parse and validate the environment; throws one BridgeError listing every bad variable. */
export function loadConfig(env: Record<string, string | undefined>, home: string): Config {
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const key of Object.keys(ENV_SCHEMA) as EnvKey[]) {
    const { value, problem } = envSetting(env, key);
    if (problem) problems.push(problem);
    else if (value !== undefined) values[key] = value;
  }
  const timeout = values.MCP_BRIDGE_TIMEOUT as number | undefined;
  const max = values.MCP_BRIDGE_MAX_TIMEOUT as number | undefined;
  if (timeout !== undefined && max !== undefined && timeout > max) {
    problems.push(`MCP_BRIDGE_TIMEOUT=${timeout} is larger than MCP_BRIDGE_MAX_TIMEOUT=${max}`);
  }
  if (problems.length > 0) {
    throw new BridgeError("CONFIG", `invalid environment:\n  ${problems.join("\n  ")}`, {
      hint: "fix or unset these variables (see `mcp-code-exec --help`)",
    });
  }
  const runtime = values.MCP_BRIDGE_RUNTIME as string | undefined;
  return {
    engine: runtime && runtime !== "auto" ? runtime : undefined,
    adapter: values.MCP_BRIDGE_ADAPTER as string | undefined,
    image: values.MCP_BRIDGE_IMAGE as string,
    // The default counts as not chosen also when a launcher writes it out (an MCPB bundle's settings do).
    imageFallback:
      values.MCP_BRIDGE_IMAGE !== ENV_DEFAULTS.MCP_BRIDGE_IMAGE || values.MCP_BRIDGE_OFFLINE_IMAGE === values.MCP_BRIDGE_IMAGE
        ? undefined
        : (values.MCP_BRIDGE_OFFLINE_IMAGE as string),
    timeoutSec: timeout as number,
    maxTimeoutSec: max as number,
    memory: values.MCP_BRIDGE_MEMORY as string,
    pids: values.MCP_BRIDGE_PIDS as number,
    cpus: values.MCP_BRIDGE_CPUS as number,
    user: values.MCP_BRIDGE_CONTAINER_USER as string,
    idleTimeoutSec: values.MCP_BRIDGE_RUNTIME_IDLE_TIMEOUT as number,
    lifetimeSec: values.MCP_BRIDGE_CONTAINER_LIFETIME as number,
    sessionTtlSec: values.MCP_BRIDGE_SESSION_TTL as number,
    maxSessionsPerUser: values.MCP_BRIDGE_MAX_SESSIONS_PER_USER as number,
    stateDir: (values.MCP_BRIDGE_STATE_DIR as string | undefined) ?? defaultStateDir(env, home),
    outputMode: values.MCP_BRIDGE_OUTPUT_MODE as Config["outputMode"],
    outputCap: values.MCP_BRIDGE_OUTPUT_CAP as number,
    structuredContent: values.MCP_BRIDGE_STRUCTURED_CONTENT as boolean,
    logLevel: values.MCP_BRIDGE_LOG_LEVEL as Config["logLevel"],
    logFormat: values.MCP_BRIDGE_LOG_FORMAT as Config["logFormat"],
    ociRuntime: values.MCP_BRIDGE_OCI_RUNTIME as string | undefined,
    prewarm: values.MCP_BRIDGE_PREWARM as boolean,
    channel: values.MCP_BRIDGE_CHANNEL as Config["channel"],
    tmpfsSize: values.MCP_BRIDGE_TMPFS_SIZE as string,
    shmSize: values.MCP_BRIDGE_SHM_SIZE as string,
    toolTimeoutSec: values.MCP_BRIDGE_TOOL_TIMEOUT as number,
    upstreamStartTimeoutSec: values.MCP_BRIDGE_UPSTREAM_START_TIMEOUT as number,
    workspace: values.MCP_BRIDGE_WORKSPACE as string | undefined,
    workspaceMode: values.MCP_BRIDGE_WORKSPACE_MODE as "ro" | "rw",
    imageCap: values.MCP_BRIDGE_IMAGE_CAP as number,
    fileCap: values.MCP_BRIDGE_FILE_CAP as number,
    maxMessageBytes: values.MCP_BRIDGE_MAX_MESSAGE as number,
    browser: values.MCP_BRIDGE_BROWSER as string[] | undefined,
    resultCap: values.MCP_BRIDGE_RESULT_CAP as number,
    auditMaxBytes: values.MCP_BRIDGE_AUDIT_MAX_SIZE as number,
    sharedServers: (values.MCP_BRIDGE_SHARED_SERVERS as string[] | undefined) ?? [],
    packages: {
      mode: values.MCP_BRIDGE_INSTALL as PackageSettings["mode"],
      always: (values.MCP_BRIDGE_PACKAGES as string[] | undefined) ?? [],
      wheelhouse: values.MCP_BRIDGE_WHEELHOUSE as string | undefined,
      index: values.MCP_BRIDGE_PACKAGE_INDEX as string,
      cooldownDays: values.MCP_BRIDGE_PACKAGE_COOLDOWN_DAYS as number,
      maxBytes: values.MCP_BRIDGE_PACKAGE_MAX_SIZE as number,
      uv: values.MCP_BRIDGE_UV as string | undefined,
    },
  };
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function defaultStateDir(env: Record<string, string | undefined>, home: string): string {
  const xdg = env.XDG_STATE_HOME?.trim();
  return `${xdg || `${home}/.local/state`}/mcp-code-exec`;
}

/** Rows for help output and README: variable, default, description, and its settings-file key. */
export function envTable(): Array<{ name: string; default: string; description: string; fileKey?: string }> {
  return (Object.keys(ENV_SCHEMA) as EnvKey[]).map((name) => ({
    name,
    default: ENV_DEFAULTS[name] ?? DEFAULTS_SHOWN[name] ?? "",
    description: ENV_SCHEMA[name].description ?? "",
    fileKey: (SETTINGS_FILE_KEYS as Partial<Record<EnvKey, string>>)[name],
  }));
}

/** The README's table of variables, generated from the schema (test/unit/env-config.test.ts compares). */
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
