/**
 * The real clients reaching a bridge that serves HTTP (`serve --http`), each registered the way its own
 * docs tell a user to: Claude Code by `claude mcp add --transport http … --header`, Codex by `codex mcp
 * add --url … --bearer-token-env-var`, Gemini CLI by `httpUrl` and `headers` in settings.json, mcporter
 * by `mcporter config add --url … --header`, the MCP Inspector by its CLI's `--header`. The models are
 * the same scripted stand-ins as over stdio (clients.ts); what they record is what a model was shown.
 *
 * mcporter and the Inspector CLI are one process per call, as an agent calling them from a shell runs
 * them: each call is a new MCP connection, so the state of one call reaches the next by the session
 * handle the result names (`[session] s_…`), which the next call passes as `session`, as the agent would.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startAnthropicStub, type ModelStub } from "./anthropic-stub.ts";
import { BIN, type ClientRun } from "./clients.ts";
import { startGeminiStub } from "./gemini-stub.ts";
import { startResponsesStub } from "./responses-stub.ts";
import type { Seen, Step } from "./scenario.ts";

export interface HttpClientOptions {
  /** The bridge's endpoint, http://127.0.0.1:PORT/mcp. */
  url: string;
  /** A token from MCP_BRIDGE_HTTP_TOKENS, sent as `Authorization: Bearer`. */
  token: string;
  steps: Step[];
}

export type HttpClientName = "claude" | "codex" | "gemini" | "mcporter" | "inspector";

export const HTTP_CLIENTS: Record<HttpClientName, (o: HttpClientOptions) => Promise<ClientRun>> = {
  claude: runClaudeHttp,
  codex: runCodexHttp,
  gemini: runGeminiHttp,
  mcporter: runMcporterHttp,
  inspector: runInspectorHttp,
};

const home = (name: string) => mkdtempSync(join(tmpdir(), `mcx-${name}-http-`));
const baseEnv = (dir: string): Record<string, string> => ({
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: dir,
  LANG: "C.UTF-8",
  NO_COLOR: "1",
});

async function spawnModelClient(argv: string[], env: Record<string, string>, cwd: string, stub: ModelStub): Promise<ClientRun> {
  const proc = Bun.spawn(argv, { env, cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), 240_000);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  stub.close();
  return { seen: stub.seen, code, stdout, stderr, home: cwd, requests: stub.requests };
}

function must(argv: string[], env: Record<string, string>, cwd: string): string {
  const r = Bun.spawnSync(argv, { env, cwd });
  if (r.exitCode !== 0)
    throw new Error(`${argv.slice(0, 3).join(" ")} failed (${r.exitCode}): ${r.stderr.toString()}${r.stdout.toString()}`);
  return r.stdout.toString();
}

/** `claude mcp add --transport http NAME URL --header "Authorization: Bearer …"`, then `claude -p`. */
export async function runClaudeHttp(o: HttpClientOptions): Promise<ClientRun> {
  const dir = home("claude");
  const stub = startAnthropicStub(o.steps);
  const env = {
    ...baseEnv(dir),
    ANTHROPIC_BASE_URL: stub.url,
    ANTHROPIC_API_KEY: "sk-ant-stub",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
  };
  const claude = join(BIN, "claude");
  must(
    [claude, "mcp", "add", "--scope", "user", "--transport", "http", "code-exec", o.url, "--header", `Authorization: Bearer ${o.token}`],
    env,
    dir,
  );
  return spawnModelClient(
    [claude, "-p", "Use run_python.", "--allowedTools", "mcp__code-exec__run_python", "--output-format", "json"],
    env,
    dir,
    stub,
  );
}

/** A Responses provider on loopback in config.toml, then `codex mcp add NAME --url URL --bearer-token-env-var VAR`. */
export async function runCodexHttp(o: HttpClientOptions): Promise<ClientRun> {
  const dir = home("codex");
  const stub = startResponsesStub(o.steps);
  const codexHome = join(dir, ".codex");
  mkdirSync(codexHome);
  const provider = [
    `model = "gpt-5.1"`,
    `model_provider = "stub"`,
    `[model_providers.stub]`,
    `name = "stub"`,
    `base_url = ${JSON.stringify(stub.url)}`,
    `env_key = "STUB_API_KEY"`,
    `wire_api = "responses"`,
  ];
  writeFileSync(join(codexHome, "config.toml"), `${provider.join("\n")}\n`);
  const env = { ...baseEnv(dir), CODEX_HOME: codexHome, STUB_API_KEY: "stub", CODE_EXEC_TOKEN: o.token };
  const codex = join(BIN, "codex");
  must([codex, "mcp", "add", "code-exec", "--url", o.url, "--bearer-token-env-var", "CODE_EXEC_TOKEN"], env, dir);
  return spawnModelClient(
    [codex, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "Use run_python."],
    env,
    dir,
    stub,
  );
}

/** Gemini CLI's settings.json: `httpUrl` (Streamable HTTP) and `headers`. */
export async function runGeminiHttp(o: HttpClientOptions): Promise<ClientRun> {
  const dir = home("gemini");
  const stub = startGeminiStub(o.steps);
  mkdirSync(join(dir, ".gemini"));
  const settings = {
    security: { auth: { selectedType: "gemini-api-key" }, folderTrust: { enabled: false } },
    mcpServers: { "code-exec": { httpUrl: o.url, headers: { Authorization: `Bearer ${o.token}` }, trust: true } },
  };
  writeFileSync(join(dir, ".gemini", "settings.json"), JSON.stringify(settings, null, 2));
  const env = { ...baseEnv(dir), GOOGLE_GEMINI_BASE_URL: stub.url, GEMINI_API_KEY: "stub-key", GEMINI_CLI_NO_RELAUNCH: "1" };
  return spawnModelClient(
    [join(BIN, "gemini"), "-p", "Use run_python.", "--output-format", "json", "--yolo", "-m", "gemini-2.5-flash"],
    env,
    dir,
    stub,
  );
}

/** The handle a result names, for the next call of a one-process-per-call client. */
export function sessionOf(text: string): string | undefined {
  return /\[session\] (s_[A-Za-z0-9_-]{22})/.exec(text)?.[1];
}

/** Each step as one process (`call`); the session handle of the first result carried into the next calls. */
async function perCall(
  steps: Step[],
  call: (args: Record<string, unknown>, label: string) => Promise<Seen>,
  carrySession = true,
): Promise<{ seen: Seen[]; handle?: string }> {
  const seen: Seen[] = [];
  let handle: string | undefined;
  for (const step of steps) {
    const s = await call(handle ? { ...step.args, session: handle } : step.args, step.label);
    seen.push(s);
    if (carrySession) handle ??= sessionOf(s.text);
  }
  return { seen, handle };
}

/** `mcporter config add NAME --url URL --header Authorization=…`, then one `mcporter call` per step. */
export async function runMcporterHttp(o: HttpClientOptions): Promise<ClientRun> {
  const dir = home("mcporter");
  const env = baseEnv(dir);
  const mcporter = join(BIN, "mcporter");
  must([mcporter, "config", "add", "code-exec", "--url", o.url, "--header", `Authorization=Bearer ${o.token}`], env, dir);
  let stderr = "";
  const { seen } = await perCall(o.steps, async (args, label) => {
    const argv = [mcporter, "call", "code-exec.run_python", "--args", JSON.stringify(args), "--save-images", join(dir, "images")];
    const proc = Bun.spawn(argv, { env, cwd: dir, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    stderr += err;
    const images = [...`${out}\n${err}`.matchAll(/Saved image: \S+\.(png|jpe?g|gif|webp)/g)].map((m) => `image/${m[1]}`);
    return { label, text: out.trim(), images, isError: code !== 0, raw: { code, stderr: err } };
  });
  return { seen, code: 0, stdout: "", stderr, home: dir, requests: [] };
}

/**
 * The MCP Inspector's CLI (`mcp-inspector --cli URL --header "Authorization: Bearer …" --method tools/call`),
 * one process per step; `--format json` prints the tool result as the calling agent reads it. It runs
 * on this machine's Node (20; the package asks for 22.19 but its CLI works): under Bun it waits ~10 s
 * before it exits.
 * `era`: its `--protocol-era` (legacy is its default for a URL); `carrySession: false` passes no handle.
 */
export async function runInspectorHttp(
  o: HttpClientOptions & { era?: "legacy" | "auto" | "modern"; carrySession?: boolean },
): Promise<ClientRun> {
  const dir = home("inspector");
  const env = baseEnv(dir);
  let stderr = "";
  const { seen } = await perCall(
    o.steps,
    async (args, label) => {
      const argv = [
        "node",
        join(BIN, "mcp-inspector"),
        "--cli",
        o.url,
        "--header",
        `Authorization: Bearer ${o.token}`,
        "--method",
        "tools/call",
        "--tool-name",
        "run_python",
        "--tool-args-json",
        JSON.stringify(args),
        "--format",
        "json",
        ...(o.era ? ["--protocol-era", o.era] : []),
      ];
      const proc = Bun.spawn(argv, { env, cwd: dir, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
      const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      stderr += err;
      type Block = { type: string; text?: string; mimeType?: string; resource?: { uri: string; text?: string } };
      const result = (JSON.parse(out || "{}") as { result?: { content?: Block[]; isError?: boolean } }).result;
      const content = result?.content ?? [];
      // Text blocks, and the text of embedded resources (a file from /tmp/outputs), as the agent reads them.
      const text = content
        .map((c) => (c.type === "text" ? c.text : c.type === "resource" ? `${c.resource?.uri}\n${c.resource?.text ?? ""}` : undefined))
        .filter((t) => t !== undefined)
        .join("\n");
      const images = content.filter((c) => c.type === "image").map((c) => c.mimeType ?? "image");
      return { label, text, images, isError: code !== 0 || result?.isError === true, raw: { code, out, err } };
    },
    o.carrySession ?? true,
  );
  return { seen, code: 0, stdout: "", stderr, home: dir, requests: [] };
}
