/**
 * Drive the real MCP clients (Claude Code, Gemini CLI, Codex) against the compiled bridge, each through
 * its own config file in an isolated HOME, with a scripted stand-in for its model API on loopback.
 * What each stand-in records is what the model would have seen.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startAnthropicStub, type ModelStub } from "./anthropic-stub.ts";
import { startGeminiStub } from "./gemini-stub.ts";
import { runOpencode } from "./opencode.ts";
import { startResponsesStub } from "./responses-stub.ts";
import type { Seen, Step } from "./scenario.ts";
import { IMAGE, ROOT } from "../support/env.ts";

export const BIN = join(ROOT, "node_modules", ".bin");
const MEMORY = join(ROOT, "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js");

export interface ClientOptions {
  /** The bridge binary the client launches. */
  binary: string;
  steps: Step[];
  engine: string;
  /** Extra environment for the bridge (through the client's own config). */
  bridgeEnv?: Record<string, string>;
  /** The client's own per-call timeout for our tool, where it has one (it cancels the call). */
  toolTimeoutMs?: number;
}

export interface ClientRun {
  seen: Seen[];
  code: number;
  stdout: string;
  stderr: string;
  home: string;
  requests: unknown[];
}

export type ClientName = "claude" | "gemini" | "codex" | "mcporter" | "opencode";

export const CLIENTS: Record<ClientName, (o: ClientOptions) => Promise<ClientRun>> = {
  claude: runClaude,
  gemini: runGemini,
  codex: runCodex,
  mcporter: runMcporter,
  opencode: runOpencode,
};

/** A fresh HOME, and the bridge's environment: its own state dir and an upstream `memory` server. */
export function world(prefix: string, o: ClientOptions): { home: string; env: Record<string, string> } {
  const home = mkdtempSync(join(tmpdir(), `mcx-${prefix}-`));
  const upstream = join(home, "upstream.json");
  writeFileSync(
    upstream,
    JSON.stringify({ mcpServers: { memory: { command: "node", args: [MEMORY], env: { MEMORY_FILE_PATH: join(home, "memory.jsonl") } } } }),
  );
  const env: Record<string, string> = {
    MCP_BRIDGE_IMAGE: IMAGE,
    MCP_BRIDGE_RUNTIME: o.engine,
    MCP_BRIDGE_STATE_DIR: join(home, "bridge-state"),
    MCP_BRIDGE_CONFIG: upstream,
    MCP_BRIDGE_LOG_LEVEL: "WARNING",
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    ...o.bridgeEnv,
  };
  return { home, env };
}

async function spawnClient(
  argv: string[],
  env: Record<string, string>,
  cwd: string,
  stub: ModelStub,
  timeoutMs = 240_000,
): Promise<ClientRun> {
  const proc = Bun.spawn(argv, { env, cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  stub.close();
  return { seen: stub.seen, code, stdout, stderr, home: cwd, requests: stub.requests };
}

const baseEnv = (home: string) => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, LANG: "C.UTF-8", NO_COLOR: "1" });

/** `claude -p` with the server added to ~/.claude.json by `claude mcp add`, as a user would. */
export async function runClaude(o: ClientOptions): Promise<ClientRun> {
  const { home, env } = world("claude", o);
  const stub = startAnthropicStub(o.steps);
  const clientEnv: Record<string, string> = {
    ...baseEnv(home),
    ANTHROPIC_BASE_URL: stub.url,
    ANTHROPIC_API_KEY: "sk-ant-stub",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
  };
  if (o.toolTimeoutMs) clientEnv.MCP_TOOL_TIMEOUT = String(o.toolTimeoutMs);
  const add = Bun.spawnSync(
    [
      join(BIN, "claude"),
      "mcp",
      "add",
      "--scope",
      "user",
      "code-exec",
      ...Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]),
      "--",
      o.binary,
    ],
    { env: clientEnv, cwd: home },
  );
  if (add.exitCode !== 0) throw new Error(`claude mcp add failed: ${add.stderr.toString()}`);
  return spawnClient(
    [join(BIN, "claude"), "-p", "Use run_python.", "--allowedTools", "mcp__code-exec__run_python", "--output-format", "json"],
    clientEnv,
    home,
    stub,
  );
}

/** `gemini -p` with the server in ~/.gemini/settings.json. */
export async function runGemini(o: ClientOptions): Promise<ClientRun> {
  const { home, env } = world("gemini", o);
  const stub = startGeminiStub(o.steps);
  mkdirSync(join(home, ".gemini"));
  const server: Record<string, unknown> = { command: o.binary, env, trust: true };
  if (o.toolTimeoutMs) server.timeout = o.toolTimeoutMs;
  const settings = {
    security: { auth: { selectedType: "gemini-api-key" }, folderTrust: { enabled: false } },
    mcpServers: { "code-exec": server },
  };
  writeFileSync(join(home, ".gemini", "settings.json"), JSON.stringify(settings, null, 2));
  const clientEnv = { ...baseEnv(home), GOOGLE_GEMINI_BASE_URL: stub.url, GEMINI_API_KEY: "stub-key", GEMINI_CLI_NO_RELAUNCH: "1" };
  // An explicit model skips the router's classifier calls, which a scripted model cannot answer.
  return spawnClient(
    [join(BIN, "gemini"), "-p", "Use run_python.", "--output-format", "json", "--yolo", "-m", "gemini-2.5-flash"],
    clientEnv,
    home,
    stub,
  );
}

/** `codex exec` with a Responses provider and the server in $CODEX_HOME/config.toml. */
export async function runCodex(o: ClientOptions): Promise<ClientRun> {
  const { home, env } = world("codex", o);
  const stub = startResponsesStub(o.steps);
  const codexHome = join(home, ".codex");
  mkdirSync(codexHome);
  writeFileSync(join(codexHome, "config.toml"), codexConfig(stub.url, o.binary, env, o.toolTimeoutMs));
  const clientEnv = { ...baseEnv(home), CODEX_HOME: codexHome, STUB_API_KEY: "stub" };
  return spawnClient(
    [join(BIN, "codex"), "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "Use run_python."],
    clientEnv,
    home,
    stub,
  );
}

/** Codex's config.toml: a Responses provider on loopback and our server. A known model name keeps image input on. */
export function codexConfig(providerUrl: string, binary: string, env: Record<string, string>, toolTimeoutMs?: number): string {
  const toml = (s: string) => JSON.stringify(s);
  const lines = [
    `model = "gpt-5.1"`,
    `model_provider = "stub"`,
    `[model_providers.stub]`,
    `name = "stub"`,
    `base_url = ${toml(providerUrl)}`,
    `env_key = "STUB_API_KEY"`,
    `wire_api = "responses"`,
    `[mcp_servers.code-exec]`,
    `command = ${toml(binary)}`,
    `env = { ${Object.entries(env)
      .map(([k, v]) => `${k} = ${toml(v)}`)
      .join(", ")} }`,
  ];
  if (toolTimeoutMs) lines.push(`tool_timeout_sec = ${toolTimeoutMs / 1000}`);
  return `${lines.join("\n")}\n`;
}

/**
 * mcporter (an MCP CLI agents call from a shell): one `mcporter call` per step, the server kept alive by
 * mcporter's daemon so state persists; what it prints is what the calling agent reads.
 */
export async function runMcporter(o: ClientOptions): Promise<ClientRun> {
  const { home, env } = world("mcporter", o);
  mkdirSync(join(home, "config"));
  writeFileSync(
    join(home, "config", "mcporter.json"),
    JSON.stringify({ mcpServers: { "code-exec": { command: o.binary, env, lifecycle: "keep-alive" } } }),
  );
  const clientEnv = baseEnv(home);
  const seen: Seen[] = [];
  let stderr = "";
  try {
    for (const step of o.steps) {
      const argv = [
        join(BIN, "mcporter"),
        "call",
        "code-exec.run_python",
        "--args",
        JSON.stringify(step.args),
        "--save-images",
        join(home, "images"),
      ];
      if (o.toolTimeoutMs) argv.push("--timeout", String(o.toolTimeoutMs));
      const proc = Bun.spawn(argv, { env: clientEnv, cwd: home, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
      const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      stderr += err;
      // mcporter saves image blocks to files and says so (on stderr): that is how an agent gets them.
      const images = [...`${out}\n${err}`.matchAll(/Saved image: \S+\.(png|jpe?g|gif|webp)/g)].map((m) => `image/${m[1]}`);
      seen.push({ label: step.label, text: out.trim(), images, isError: code !== 0, raw: { code, stderr: err } });
    }
  } finally {
    Bun.spawnSync([join(BIN, "mcporter"), "daemon", "stop"], { env: clientEnv, cwd: home });
  }
  return { seen, code: 0, stdout: "", stderr, home, requests: [] };
}
