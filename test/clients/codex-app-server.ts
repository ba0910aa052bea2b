/**
 * Codex's `app-server` (JSON-RPC over stdio), the way IDE extensions drive Codex: direct MCP tool calls
 * (`mcpServer/tool/call`, the raw result Codex holds) and a turn interrupted while our tool runs
 * (`turn/interrupt`, a real user cancel), with the Responses stand-in as the model.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { BIN, codexConfig, world, type ClientOptions } from "./clients.ts";
import { startResponsesStub } from "./responses-stub.ts";
import type { ModelStub } from "./anthropic-stub.ts";
import { writeFileSync } from "node:fs";

type Message = {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
};

export interface AppServer {
  stub: ModelStub;
  threadId: string;
  request(method: string, params: unknown, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves with the first notification for which `match` is true (seen before or after the call). */
  notification(match: (m: Message) => boolean, timeoutMs?: number): Promise<Message>;
  close(): Promise<void>;
}

export async function startAppServer(o: ClientOptions): Promise<AppServer> {
  const { home, env } = world("codex-app", o);
  const stub = startResponsesStub(o.steps);
  const codexHome = join(home, ".codex");
  mkdirSync(codexHome);
  writeFileSync(join(codexHome, "config.toml"), codexConfig(stub.url, o.binary, env, o.toolTimeoutMs));
  const proc = Bun.spawn([join(BIN, "codex"), "app-server"], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, CODEX_HOME: codexHome, STUB_API_KEY: "stub", LANG: "C.UTF-8" },
    cwd: home,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "ignore",
  });
  const pending = new Map<number, (m: Message) => void>();
  const notes: Message[] = [];
  const waiters: Array<{ match: (m: Message) => boolean; resolve: (m: Message) => void }> = [];
  let nextId = 1;
  void (async () => {
    let buf = "";
    const dec = new TextDecoder();
    for await (const chunk of proc.stdout) {
      buf += dec.decode(chunk);
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (!line) continue;
        const m = JSON.parse(line) as Message;
        if (m.id !== undefined && !m.method) pending.get(m.id)?.(m);
        else if (m.id !== undefined && m.method) proc.stdin.write(`${JSON.stringify({ id: m.id, result: { decision: "accept" } })}\n`);
        else {
          notes.push(m);
          for (const w of [...waiters]) if (w.match(m)) waiters.splice(waiters.indexOf(w), 1) && w.resolve(m);
        }
      }
    }
  })();
  const send = (m: unknown) => {
    proc.stdin.write(`${JSON.stringify(m)}\n`);
    proc.stdin.flush();
  };
  const request = (method: string, params: unknown, timeoutMs = 120_000) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => reject(new Error(`codex app-server: ${method} got no answer in ${timeoutMs} ms`)), timeoutMs);
      pending.set(id, (m) => {
        clearTimeout(timer);
        if (m.error) reject(new Error(`codex app-server: ${method}: ${m.error.message}`));
        else resolve(m.result ?? {});
      });
      send({ id, method, params });
    });
  const notification = (match: (m: Message) => boolean, timeoutMs = 120_000) => {
    const seen = notes.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise<Message>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`codex app-server: no matching notification in ${timeoutMs} ms`)), timeoutMs);
      waiters.push({ match, resolve: (m) => (clearTimeout(timer), resolve(m)) });
    });
  };
  await request("initialize", { clientInfo: { name: "mcp-code-exec-tests", version: "0.0.0" } });
  send({ method: "initialized" });
  const started = await request("thread/start", { cwd: home, approvalPolicy: "never", sandbox: "danger-full-access" });
  const threadId = String((started.thread as { id: string }).id);
  return {
    stub,
    threadId,
    request,
    notification,
    async close() {
      proc.stdin.end();
      const timer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
      await proc.exited;
      clearTimeout(timer);
      stub.close();
    },
  };
}
