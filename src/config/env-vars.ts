/**
 * Every environment variable of the bridge, declared once (ENV_VARS): its parser, whose `.describe()`
 * is the text `--help` and docs/configuration.md show, its default, and its key in our settings file. What reads
 * them (loadConfig, the policy, the docs/configuration.md table) is in env.ts.
 */
import { isAbsolute } from "node:path";
import * as z from "zod";
import { bytes, commandLine, flag, globList, isDirectory, isFile, positiveInt, seconds } from "./env-parsers.ts";
import { VERSION } from "../version.ts";

/**
 * The sandbox image a bridge uses unless told otherwise: the batteries image of this very version
 * (image/ in the repository), published to GitHub's registry beside the release; a first call pulls
 * it, `mcp-code-exec image build` makes it from the same pins on a machine without a registry.
 */
export const DEFAULT_IMAGE = `ghcr.io/mcp-code-exec/mcp-code-exec-sandbox:${VERSION}`;

export const OUTPUT_MODES = ["compact", "toon", "json"] as const;
export const LOG_LEVELS = ["DEBUG", "INFO", "WARNING", "ERROR"] as const;

/** What a variable declares (ENV_VARS); `T` is what its schema gives. */
export interface Variable<T = unknown> {
  readonly schema: z.ZodType<T, string>;
  /** The default, as the user would write it. */
  readonly default?: string;
  /** A default computed at run time, as help and docs/configuration.md show it. */
  readonly shown?: string;
  /** Where the variable's setting also lives in our settings file (the variable wins, per field). */
  readonly fileKey?: string;
}

/**
 * Every variable, declared once: its parser (whose `.describe()` is the text help and docs/configuration.md show), its
 * default as the user would write it, how help shows a default computed at run time, and its key in our
 * settings file, when it has one. The Config type and the docs/configuration.md table are derived from these.
 */
export const ENV_VARS = {
  MCP_BRIDGE_RUNTIME: {
    schema: z
      .string()
      .trim()
      .toLowerCase()
      .describe(
        "Container engine to use: podman, docker, nerdctl, podman-machine (auto: the first of these that answers), or kubernetes (never automatic; docs/kubernetes.md)",
      ),
    shown: "auto",
  },
  MCP_BRIDGE_ADAPTER: {
    schema: z
      .string()
      .trim()
      .min(1)
      .refine((p) => isAbsolute(p), "must be an absolute path")
      .refine((p) => /\.(ts|mts|js|mjs|cjs)$/.test(p), "must be a .ts or .js module")
      .refine((p) => isFile(p), "is not an existing file")
      .describe(
        "External engine adapter module (default export: an AdapterFactory); used instead of MCP_BRIDGE_RUNTIME and auto-selection",
      ),
  },
  MCP_BRIDGE_IMAGE: {
    schema: z
      .string()
      .trim()
      .min(1)
      .describe(
        "Sandbox image: by default the batteries image of this release (Python 3.13 and the data stack), pulled at first use or made by `image build`",
      ),
    default: DEFAULT_IMAGE,
  },
  MCP_BRIDGE_PULL: {
    schema: z
      .enum(["missing", "never"])
      .describe(
        "Pull the sandbox image when the engine lacks it: missing (at the first start that needs it, its progress sent to the waiting call) or never",
      ),
    default: "missing",
  },
  MCP_BRIDGE_PULL_TIMEOUT: {
    schema: seconds("MCP_BRIDGE_PULL_TIMEOUT").describe("Longest a pull of the sandbox image may take"),
    default: "15m",
  },
  MCP_BRIDGE_TIMEOUT: {
    schema: seconds("MCP_BRIDGE_TIMEOUT").describe("Default run_python timeout in seconds"),
    default: "30",
  },
  MCP_BRIDGE_MAX_TIMEOUT: {
    schema: seconds("MCP_BRIDGE_MAX_TIMEOUT").describe("Largest timeout a call may ask for"),
    default: "120",
  },
  MCP_BRIDGE_MEMORY: {
    schema: z
      .string()
      .trim()
      .toLowerCase()
      .regex(/^\d+(\.\d+)?[kmg]?$/, "expected an engine memory size like 512m or 2g")
      .describe("Sandbox memory limit (swap disabled)"),
    default: "512m",
  },
  MCP_BRIDGE_PIDS: {
    schema: positiveInt("MCP_BRIDGE_PIDS").describe("Sandbox process/thread limit"),
    default: "128",
  },
  MCP_BRIDGE_CPUS: {
    schema: z
      .string()
      .trim()
      .regex(/^\d+(\.\d+)?$/, "expected a number of CPUs like 1 or 0.5")
      .transform(Number)
      .refine((n) => n > 0, "must be greater than 0")
      .describe("Sandbox CPU limit"),
    default: "1",
  },
  MCP_BRIDGE_CONTAINER_USER: {
    schema: z
      .string()
      .trim()
      .regex(/^\d+(:\d+)?$/, 'expected a numeric "uid:gid" such as 65534:65534')
      .refine((v) => !/^0(:|$)/.test(v), "refusing to run the sandbox as root (uid 0)")
      .describe("Unprivileged uid:gid inside the sandbox"),
    default: "65534:65534",
  },
  MCP_BRIDGE_RUNTIME_IDLE_TIMEOUT: {
    schema: seconds("MCP_BRIDGE_RUNTIME_IDLE_TIMEOUT").describe("Stop the sandbox after this many idle seconds (state is lost)"),
    default: "300",
  },
  MCP_BRIDGE_CONTAINER_LIFETIME: {
    schema: seconds("MCP_BRIDGE_CONTAINER_LIFETIME").describe(
      "Hard cap on a sandbox's life, enforced by the sandbox's own init even if the bridge dies",
    ),
    default: "8h",
  },
  MCP_BRIDGE_SESSION_TTL: {
    schema: seconds("MCP_BRIDGE_SESSION_TTL").describe(
      "A Python session (a handle run_python answers with) unused this long ends; the next call with it is told its state is gone",
    ),
    default: "24h",
  },
  MCP_BRIDGE_MAX_SESSIONS_PER_USER: {
    schema: positiveInt("MCP_BRIDGE_MAX_SESSIONS_PER_USER").describe(
      'Python sessions one user may hold at once (run_python(session="new") makes another)',
    ),
    default: "8",
  },
  MCP_BRIDGE_STATE_DIR: {
    schema: z
      .string()
      .trim()
      .min(1)
      .describe(
        "Where caches and state live. Where it cannot be written (a read-only home, a full disk), sandboxes still start and calls still work: the seccomp profile and the watchdog's list of upstream servers go to a fresh folder of the bridge's own in the temporary folder, removed at exit; the log says so once, `doctor` fails its `state dir` check, and the audit log, skills, sign-ins and caches are not kept (`save_skill` says why)",
      ),
    shown: "$XDG_STATE_HOME/mcp-code-exec",
  },
  MCP_BRIDGE_OUTPUT_MODE: {
    schema: z.string().trim().toLowerCase().pipe(z.enum(OUTPUT_MODES)).describe("Result rendering: compact, toon or json"),
    default: "compact",
  },
  MCP_BRIDGE_STRUCTURED_CONTENT: {
    schema: flag.describe(
      "Also send results as structuredContent, with a declared outputSchema (Codex and Claude Code then show their model only that JSON: no plot, no rendered text)",
    ),
    default: "0",
  },
  MCP_BRIDGE_OUTPUT_CAP: {
    schema: bytes("MCP_BRIDGE_OUTPUT_CAP").describe("Cap per output stream per call (e.g. 64k)"),
    default: "64k",
  },
  MCP_BRIDGE_LOG_LEVEL: {
    schema: z
      .string()
      .trim()
      .toUpperCase()
      .transform((v) => (v === "WARN" ? "WARNING" : v))
      .pipe(z.enum(LOG_LEVELS))
      .describe("Log level on stderr: DEBUG, INFO, WARNING, ERROR"),
    default: "INFO",
  },
  MCP_BRIDGE_LOG_FORMAT: {
    schema: z
      .string()
      .trim()
      .toLowerCase()
      .pipe(z.enum(["text", "json"]))
      .describe("Log lines on stderr: text or json"),
    default: "text",
  },
  MCP_BRIDGE_OCI_RUNTIME: {
    schema: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9._/-]+$/, "expected an OCI runtime name or path such as runc or runsc")
      .describe("OCI runtime passed to the engine (runsc = gVisor)"),
    shown: "engine default",
  },
  MCP_BRIDGE_KUBE_NAMESPACE: {
    schema: z
      .string()
      .trim()
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "expected a Kubernetes namespace name")
      .describe("kubernetes engine: the namespace sandboxes run in (default: the kubeconfig context's, or the service account's)"),
    shown: "the context's",
  },
  MCP_BRIDGE_KUBE_WARM_POOL: {
    schema: z
      .string()
      .trim()
      .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, "expected the name of a SandboxWarmPool")
      .describe(
        "kubernetes engine: the agent-sandbox SandboxWarmPool new sessions claim a ready pod from (runc sandboxes; none: every pod starts cold)",
      ),
    shown: "none",
  },
  MCP_BRIDGE_KUBE_RUNTIME_CLASS: {
    schema: z
      .string()
      .trim()
      .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, "expected a RuntimeClass name")
      .describe("kubernetes engine: the RuntimeClass of gVisor pods (MCP_BRIDGE_OCI_RUNTIME=runsc)"),
    default: "gvisor",
  },
  MCP_BRIDGE_KUBE_SECCOMP: {
    schema: z
      .string()
      .trim()
      .regex(/^(RuntimeDefault|[A-Za-z0-9._/-]+\.json)$/, "expected RuntimeDefault or a profile path under the kubelet's seccomp folder")
      .describe(
        "kubernetes engine: the sandbox's seccomp profile on the nodes (a Localhost profile; a -gvisor.json twin for gVisor pods), or RuntimeDefault",
      ),
    default: "mcp-code-exec/seccomp.json",
  },
  MCP_BRIDGE_KUBE_LEASE: {
    schema: seconds("MCP_BRIDGE_KUBE_LEASE").describe(
      "kubernetes engine: a sandbox whose bridge stopped renewing it is deleted this long after (agent-sandbox's shutdown time)",
    ),
    default: "60",
  },
  MCP_BRIDGE_PREWARM: {
    schema: flag.describe("Start the sandbox in the background once a client initializes"),
    default: "1",
  },
  MCP_BRIDGE_PREWARM_SERVERS: {
    schema: flag.describe(
      "With prewarm on, also start (at initialize) the trusted stdio servers run_python calls named in the last session in this folder (at most 4)",
    ),
    default: "1",
  },
  MCP_BRIDGE_CHANNEL: {
    schema: z
      .string()
      .trim()
      .toLowerCase()
      .pipe(z.enum(["auto", "stdio"]))
      .describe(
        "What frames to the sandbox run over: auto (a socket the engine passes or mounts when it is local: podman, docker) or stdio (always the engine's stdin/stdout)",
      ),
    default: "auto",
  },
  MCP_BRIDGE_TOOL_TIMEOUT: {
    schema: seconds("MCP_BRIDGE_TOOL_TIMEOUT").describe("Timeout of one proxied MCP tool call from the sandbox"),
    default: "60",
  },
  MCP_BRIDGE_UPSTREAM_START_TIMEOUT: {
    schema: seconds("MCP_BRIDGE_UPSTREAM_START_TIMEOUT").describe("How long an upstream MCP server may take to start and list its tools"),
    default: "60",
  },
  MCP_BRIDGE_CONFIG: {
    schema: z.string().trim().min(1).describe("Extra MCP server config file or folder, read first"),
  },
  MCP_BRIDGE_WORKSPACE: {
    schema: z
      .string()
      .trim()
      .min(1)
      .refine((p) => isAbsolute(p), "must be an absolute path")
      .refine((p) => isDirectory(p), "is not an existing directory")
      .describe("Host folder mounted at /workspace in the sandbox (read-only unless MCP_BRIDGE_WORKSPACE_MODE=rw)"),
  },
  MCP_BRIDGE_WORKSPACE_MODE: {
    schema: z
      .string()
      .trim()
      .toLowerCase()
      .pipe(z.enum(["ro", "rw"]))
      .describe("ro or rw"),
    default: "ro",
  },
  MCP_BRIDGE_IMAGE_CAP: {
    schema: bytes("MCP_BRIDGE_IMAGE_CAP").describe("Largest image returned from a run"),
    default: "2m",
  },
  MCP_BRIDGE_FILE_CAP: {
    schema: bytes("MCP_BRIDGE_FILE_CAP").describe("Largest file returned from /tmp/outputs/"),
    default: "1m",
  },
  MCP_BRIDGE_RESULT_CAP: {
    schema: bytes("MCP_BRIDGE_RESULT_CAP").describe(
      "Images and files one run returns, in all, base64 included (clients such as the MCP SDK drop a response over 10 MiB)",
    ),
    default: "8m",
  },
  MCP_BRIDGE_MAX_MESSAGE: {
    schema: bytes("MCP_BRIDGE_MAX_MESSAGE").describe(
      "Largest MCP message read from the client; a larger one is answered with an error and skipped",
    ),
    default: "16m",
  },
  MCP_BRIDGE_TMPFS_SIZE: {
    schema: z
      .string()
      .trim()
      .toLowerCase()
      .regex(/^\d+[kmg]?$/, "expected a size like 64m")
      .describe("Size of the sandbox's /tmp"),
    default: "64m",
  },
  MCP_BRIDGE_SHM_SIZE: {
    schema: z
      .string()
      .trim()
      .toLowerCase()
      .regex(/^\d+[kmg]?$/, "expected a size like 64m")
      .describe("Size of the sandbox's /dev/shm"),
    default: "64m",
  },
  MCP_BRIDGE_ALLOW_SELF_SERVER: {
    schema: flag.describe("Allow MCP config entries that launch this bridge again (skipped by default)"),
  },
  MCP_BRIDGE_SETTINGS: {
    schema: z.string().trim().min(1).describe("Our settings file (the `policy` section)"),
    shown: "$XDG_CONFIG_HOME/mcp-code-exec/config.json",
  },
  MCP_BRIDGE_ALLOW_SERVERS: {
    schema: globList("MCP_BRIDGE_ALLOW_SERVERS").describe("Servers code may load, comma-separated globs (all when unset)"),
    default: "*",
    fileKey: "policy.allowServers",
  },
  MCP_BRIDGE_DENY_SERVERS: {
    schema: globList("MCP_BRIDGE_DENY_SERVERS").describe("Servers code may never load, comma-separated globs; deny wins"),
    fileKey: "policy.denyServers",
  },
  MCP_BRIDGE_ALLOW_TOOLS: {
    schema: globList("MCP_BRIDGE_ALLOW_TOOLS").describe('Tools code may call, as "server/tool" or "tool" globs (all when unset)'),
    default: "*",
    fileKey: "policy.allowTools",
  },
  MCP_BRIDGE_DENY_TOOLS: {
    schema: globList("MCP_BRIDGE_DENY_TOOLS").describe("Tools code may never call; deny wins"),
    fileKey: "policy.denyTools",
  },
  MCP_BRIDGE_ASK_TOOLS: {
    schema: globList("MCP_BRIDGE_ASK_TOOLS").describe(
      "Tools that run only once you approve the call (asked through your MCP client); deny wins over ask, ask over allow",
    ),
    fileKey: "policy.askTools",
  },
  MCP_BRIDGE_TOOL_DEFAULT: {
    schema: z
      .string()
      .trim()
      .toLowerCase()
      .pipe(z.enum(["allow", "ask", "deny"]))
      .describe(
        "allow, ask or deny: for a tool no list names and whose server marks it neither read-only (then allow) nor destructive (then ask)",
      ),
    default: "allow",
    fileKey: "policy.toolDefault",
  },
  MCP_BRIDGE_ASK_TIMEOUT: {
    schema: seconds("MCP_BRIDGE_ASK_TIMEOUT").describe("How long an approval question waits for your answer before the call is refused"),
    default: "120",
    fileKey: "policy.askTimeout",
  },
  MCP_BRIDGE_MAX_TOOL_CALLS: {
    schema: positiveInt("MCP_BRIDGE_MAX_TOOL_CALLS").describe("Proxied tool calls one run may make"),
    default: "10000",
    fileKey: "policy.maxToolCallsPerRun",
  },
  MCP_BRIDGE_MAX_CONCURRENT_RUNS: {
    schema: positiveInt("MCP_BRIDGE_MAX_CONCURRENT_RUNS").describe("run_python calls executing at once, across sessions"),
    default: "4",
    fileKey: "policy.maxConcurrentRuns",
  },
  MCP_BRIDGE_MAX_CODE_BYTES: {
    schema: positiveInt("MCP_BRIDGE_MAX_CODE_BYTES").describe("Largest code one run may send, in bytes"),
    default: "1048576",
    fileKey: "policy.maxCodeBytes",
  },
  MCP_BRIDGE_AUDIT_MAX_SIZE: {
    schema: bytes("MCP_BRIDGE_AUDIT_MAX_SIZE").describe(
      "Size at which the audit log of proxied calls (audit.jsonl in the state dir) is rotated; the 3 files before it are kept",
    ),
    default: "10m",
  },
  MCP_BRIDGE_OFFLINE_IMAGE: {
    schema: z
      .string()
      .trim()
      .min(1)
      .describe(
        "Name `image build` gives the image it builds; when another than the default, also the sandbox image on an engine that lacks the default (MCP_BRIDGE_IMAGE unset)",
      ),
    default: DEFAULT_IMAGE,
  },
  MCP_BRIDGE_IMAGE_CACHE: {
    schema: z.string().trim().min(1).describe("Where `image build` caches the Debian packages, wheels and root filesystem it builds from"),
    default: "/var/cache/mcp-code-exec",
  },
  MCP_BRIDGE_HTTP_LISTEN: {
    schema: z
      .string()
      .trim()
      .regex(/^(\[[0-9a-f:]+\]|[\w.-]+):\d{1,5}$/i, "expected HOST:PORT such as 127.0.0.1:8931 or [::1]:8931")
      .describe(
        "`serve --http`: where to listen (HOST:PORT); anything but loopback needs sign-in (MCP_BRIDGE_HTTP_TOKENS or MCP_BRIDGE_HTTP_ISSUER)",
      ),
    default: "127.0.0.1:8931",
  },
  MCP_BRIDGE_HTTP_TOKENS: {
    schema: z
      .string()
      .trim()
      .min(1)
      .describe(
        "`serve --http`: static sign-in, `name=token` pairs (comma-separated) or the path of a file of such lines; each name is a user",
      ),
  },
  MCP_BRIDGE_HTTP_ISSUER: {
    schema: z
      .url()
      .describe(
        "`serve --http`: the OAuth authorization server whose JWT access tokens are accepted (issuer URL; its keys come from its metadata)",
      ),
  },
  MCP_BRIDGE_HTTP_JWKS_URL: {
    schema: z.url().describe("`serve --http`: the issuer's JWKS, when its metadata does not name it"),
  },
  MCP_BRIDGE_HTTP_RESOURCE: {
    schema: z
      .url()
      .describe("`serve --http`: this server's public URL of /mcp, the audience tokens must name (RFC 8707); default: the listen address"),
  },
  MCP_BRIDGE_HTTP_SCOPES: {
    schema: z.string().trim().describe("`serve --http`: scopes every access token must carry (space-separated)"),
  },
  MCP_BRIDGE_HTTP_PRINCIPAL_CLAIM: {
    schema: z
      .string()
      .trim()
      .regex(/^[\w.:-]{1,64}$/, "expected a claim name such as sub or email")
      .describe("`serve --http`: the JWT claim that names the user"),
    default: "sub",
  },
  MCP_BRIDGE_HTTP_ORIGINS: {
    schema: globList("MCP_BRIDGE_HTTP_ORIGINS").describe(
      "`serve --http`: web origins allowed to call (comma-separated); a browser request from any other is refused (DNS rebinding)",
    ),
  },
  MCP_BRIDGE_SHARED_SERVERS: {
    schema: globList("MCP_BRIDGE_SHARED_SERVERS").describe(
      "`serve --http`: upstream servers every user shares one process or connection of (only those that keep no per-user state); the rest run per user, with each user's own sign-ins",
    ),
  },
  MCP_BRIDGE_USER_CALLS_PER_MINUTE: {
    schema: positiveInt("MCP_BRIDGE_USER_CALLS_PER_MINUTE").describe(
      "`serve --http`: run_python calls one user may make per minute (bursts up to it); past it, an error saying when to retry",
    ),
    default: "120",
  },
  MCP_BRIDGE_USER_MEMORY: {
    schema: bytes("MCP_BRIDGE_USER_MEMORY").describe(
      "`serve --http`: memory one user's sandboxes may hold together (each at MCP_BRIDGE_MEMORY); bounds how many sessions a user has",
    ),
  },
  MCP_BRIDGE_NODE_SANDBOXES: {
    schema: positiveInt("MCP_BRIDGE_NODE_SANDBOXES").describe(
      "`serve --http`: Python sessions this server holds for all users together (default: 8 per core, at most what 80% of its memory holds)",
    ),
    shown: "8 per core, within 80% of memory",
  },
  MCP_BRIDGE_HTTP_MAX_CONNECTIONS: {
    schema: positiveInt("MCP_BRIDGE_HTTP_MAX_CONNECTIONS").describe("`serve --http`: MCP protocol sessions one user may hold open"),
    default: "16",
  },
  MCP_BRIDGE_BROWSER: {
    schema: commandLine("MCP_BRIDGE_BROWSER").describe(
      "Browser command `auth login` opens the sign-in page with (the URL is added last): a command line or a JSON array; `none` only prints the link",
    ),
    shown: "open, xdg-open or wslview",
  },
  MCP_BRIDGE_INSTALL: {
    schema: z
      .string()
      .trim()
      .toLowerCase()
      .pipe(z.enum(["ask", "allow", "deny"]))
      .describe(
        "runtime.install() from sandbox code: ask (a download from the package index waits for your approval; the wheelhouse and wheels approved before install at once), allow (downloads without asking) or deny (no installs)",
      ),
    default: "ask",
  },
  MCP_BRIDGE_PACKAGES: {
    schema: globList("MCP_BRIDGE_PACKAGES")
      .refine((l) => l.length <= 20, "at most 20 packages")
      .describe(
        'Packages every session gets before its first run, comma-separated requirements such as "rich,tabulate==0.9.0" (your list counts as your approval of their download)',
      ),
  },
  MCP_BRIDGE_WHEELHOUSE: {
    schema: z
      .string()
      .trim()
      .min(1)
      .refine((p) => isAbsolute(p), "must be an absolute path")
      .describe("Folder of wheels installs use without asking (fill it with `mcp-code-exec packages add` on a connected machine)"),
  },
  MCP_BRIDGE_PACKAGE_INDEX: {
    schema: z
      .string()
      .trim()
      .regex(/^https?:\/\/[^\s]+$/, "expected an http(s) URL of a PEP 503 simple index")
      .describe("PEP 503 simple index installs download from after approval (a devpi or Artifactory mirror works)"),
    default: "https://pypi.org/simple",
  },
  MCP_BRIDGE_PACKAGE_COOLDOWN_DAYS: {
    schema: positiveInt("MCP_BRIDGE_PACKAGE_COOLDOWN_DAYS").describe(
      "A release younger than this many days is flagged in the approval question",
    ),
    default: "14",
  },
  MCP_BRIDGE_PACKAGE_MAX_SIZE: {
    schema: bytes("MCP_BRIDGE_PACKAGE_MAX_SIZE").describe("Largest install: the wheels downloaded, and each wheel once unpacked"),
    default: "2g",
  },
  MCP_BRIDGE_UV: {
    schema: z
      .string()
      .trim()
      .min(1)
      .refine((p) => isAbsolute(p), "must be an absolute path")
      .describe(
        "The uv binary installs resolve with (default: the pinned uv, unpacked into the state dir from the wheelhouse or the index, or uv on PATH)",
      ),
  },
} as const satisfies Record<string, Variable>;

/** Families of variables named after something the user defines; listed in help and docs/configuration.md. */
export const ENV_FAMILIES: Record<string, string> = {
  MCP_BRIDGE_INPUT_:
    "MCP_BRIDGE_INPUT_<ID>: the value of a VS Code ${input:<id>} prompt in a server definition (id upper-cased, other characters as _)",
};
