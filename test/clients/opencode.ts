/**
 * opencode (npm `opencode-ai`) against the compiled bridge: `opencode run` for one conversation, and
 * `opencode serve` (how its TUI and web app run) for many conversations through one bridge. The entry
 * is the one `config add --client opencode` writes, in ~/.config/opencode/opencode.json of an isolated
 * HOME; the model is a scripted stand-in for the Anthropic API on loopback (fake: no model service can
 * run here), reached through a provider entry in the same file.
 */
import { existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { entryFor } from "../../src/cli/client-targets.ts";
import { startAnthropicStub, type ModelStub } from "./anthropic-stub.ts";
import { world, type ClientOptions, type ClientRun } from "./clients.ts";
import { ROOT } from "../support/env.ts";

// clients.ts imports this file: only functions of it are used here, so neither needs the other at load.
export const OPENCODE = opencodeBinary();

/**
 * opencode-ai's postinstall (bun runs it: the package is on bun's default trusted list) puts the
 * platform's binary in its bin; without it that file is a script saying so, and the platform package's
 * own binary is used.
 */
function opencodeBinary(): string {
  const bin = join(ROOT, "node_modules", "opencode-ai", "bin", "opencode.exe");
  if (existsSync(bin) && statSync(bin).size > 1_000_000) return bin;
  return join(ROOT, "node_modules", `opencode-${process.platform}-${process.arch}`, "bin", "opencode");
}

export interface OpencodeOptions extends ClientOptions {
  /** false: an entry written by hand, without `timeout` (opencode then waits 60 s, reset by progress). */
  entryTimeout?: boolean;
}

export interface OpencodeWorld {
  home: string;
  /** The project folder opencode runs in (not HOME: opencode's file picker refuses a home folder). */
  project: string;
  env: Record<string, string>;
  /** Point the provider at this model stand-in (rewrites the config file). */
  useModel(url: string): void;
  /** `opencode ARGS...` in the project; resolves when it exits. */
  opencode(args: string[], timeoutMs?: number): Promise<{ code: number; stdout: string; stderr: string }>;
}

export function opencodeWorld(o: OpencodeOptions): OpencodeWorld {
  const { home, env: bridgeEnv } = world("opencode", o);
  const project = join(home, "project");
  mkdirSync(project);
  mkdirSync(join(home, ".config", "opencode"), { recursive: true });
  const entry = entryFor("opencode", "code-exec", { command: o.binary, args: [] }, bridgeEnv);
  if (o.toolTimeoutMs) entry.timeout = o.toolTimeoutMs;
  if (o.entryTimeout === false) delete entry.timeout;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    LANG: "C.UTF-8",
    NO_COLOR: "1",
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_SHARE: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
  };
  return {
    home,
    project,
    env,
    useModel(url) {
      const config = {
        model: "stub/claude-stub",
        provider: {
          stub: {
            npm: "@ai-sdk/anthropic",
            name: "Stub",
            options: { baseURL: `${url}/v1`, apiKey: "sk-ant-stub" },
            models: { "claude-stub": { name: "Claude stub", attachment: true, tool_call: true } },
          },
        },
        mcp: { "code-exec": entry },
      };
      writeFileSync(join(home, ".config", "opencode", "opencode.json"), JSON.stringify(config, null, 2));
    },
    async opencode(args, timeoutMs = 240_000) {
      const proc = Bun.spawn([OPENCODE, ...args], { env, cwd: project, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
      const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
      const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      clearTimeout(timer);
      return { code, stdout, stderr };
    },
  };
}

/** `opencode run` with one prompt: the model's scripted calls run in one conversation. */
export async function runOpencode(o: OpencodeOptions): Promise<ClientRun> {
  const w = opencodeWorld(o);
  const stub: ModelStub = startAnthropicStub(o.steps);
  try {
    w.useModel(stub.url);
    const r = await w.opencode(["run", "--print-logs", "Use run_python."]);
    return { seen: stub.seen, code: r.code, stdout: r.stdout, stderr: r.stderr, home: w.home, requests: stub.requests };
  } finally {
    stub.close();
  }
}

/** `opencode serve` on a free loopback port: sessions made and prompted through its HTTP API, as its TUI does. */
export async function opencodeServe(w: OpencodeWorld): Promise<OpencodeServer> {
  const port = freePort();
  const proc = Bun.spawn([OPENCODE, "serve", "--port", String(port), "--print-logs"], {
    env: w.env,
    cwd: w.project,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const logs = collect(proc.stderr);
  const out = proc.stdout.getReader();
  let printed = "";
  let url: string | undefined;
  const guard = setTimeout(() => proc.kill("SIGKILL"), 60_000);
  while (!url) {
    const { value, done } = await out.read();
    if (done) throw new Error(`opencode serve exited before listening:\n${printed}\n${logs().slice(-2000)}`);
    printed += new TextDecoder().decode(value);
    url = /listening on (http:\/\/\S+)/.exec(printed)?.[1];
  }
  clearTimeout(guard);
  const api = async (path: string, body?: unknown) => {
    const r = await fetch(url + path, {
      method: body === undefined ? "GET" : "POST",
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    if (!r.ok) throw new Error(`opencode serve ${path}: ${r.status} ${text.slice(0, 500)}`);
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  };
  return {
    url,
    logs,
    async newSession() {
      return String((await api("/session", {})).id);
    },
    async say(session, text) {
      await api(`/session/${session}/message`, { parts: [{ type: "text", text }] });
    },
    async close() {
      proc.kill("SIGTERM");
      const killer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
      await proc.exited;
      clearTimeout(killer);
    },
  };
}

export interface OpencodeServer {
  url: string;
  /** What it logged so far (for failures). */
  logs(): string;
  /** A new conversation (an opencode session). */
  newSession(): Promise<string>;
  /** A user message in that conversation; resolves when the model's turn is over. */
  say(session: string, text: string): Promise<void>;
  close(): Promise<void>;
}

/** A port the OS says is free now (opencode serve takes a port number; 0 makes it try 4096 first). */
function freePort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const { port } = probe;
  probe.stop(true);
  return port;
}

function collect(stream: ReadableStream<Uint8Array>): () => string {
  let text = "";
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) text += decoder.decode(chunk);
  })();
  return () => text;
}
