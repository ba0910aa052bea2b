/**
 * The compiled bridge serving HTTP (`serve --http`), and the two ways a client talks to it: the SDK's
 * Streamable HTTP client (protocol sessions, 2025-11-25) and bare 2026-07-28 POSTs (no session, every
 * request carries its version in `_meta`), both with a Bearer token when given one.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult, ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { BINARY } from "./binary.ts";
import { bridgeEnv } from "./env.ts";

export interface HttpBridge {
  /** http://127.0.0.1:PORT/mcp */
  url: string;
  origin: string;
  pid: number;
  stderr(): string;
  close(): Promise<number>;
}

export async function startHttpBridge(env: Record<string, string>, args: string[] = ["--listen", "127.0.0.1:0"]): Promise<HttpBridge> {
  const proc = Bun.spawn([BINARY, "serve", "--http", ...args], { env: bridgeEnv(env), stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  let stderr = "";
  void (async () => {
    const dec = new TextDecoder();
    for await (const c of proc.stderr) stderr += dec.decode(c);
  })();
  const reader = proc.stdout.getReader();
  let out = "";
  while (!out.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`serve --http did not start (exit ${await proc.exited}): ${stderr}`);
    out += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const url = out.trim().split("\n")[0]!;
  return {
    url,
    origin: new URL(url).origin,
    pid: proc.pid,
    stderr: () => stderr,
    async close() {
      proc.kill("SIGTERM");
      return proc.exited;
    },
  };
}

export interface LegacyClient {
  client: Client;
  transport: StreamableHTTPClientTransport;
  run(code: string, extra?: Record<string, unknown>): Promise<{ text: string; isError: boolean; structured: Record<string, unknown> }>;
  close(): Promise<void>;
}

/** A 2025-11-25 client over Streamable HTTP (a protocol session), signed in with `token`. */
export async function legacyClient(
  url: string,
  token?: string,
  opts: { capabilities?: ClientCapabilities; setup?: (c: Client) => void } = {},
): Promise<LegacyClient> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: token ? { authorization: `Bearer ${token}` } : {} },
  });
  const client = new Client({ name: "http-test-client", version: "0.0.0" }, { capabilities: opts.capabilities ?? {} });
  opts.setup?.(client);
  await client.connect(transport);
  return {
    client,
    transport,
    async run(code, extra = {}) {
      const raw = (await client.callTool({ name: "run_python", arguments: { code, ...extra } }, undefined, {
        timeout: 300_000,
      })) as CallToolResult;
      const text = raw.content.map((c) => (c.type === "text" ? c.text : `<${c.type}>`)).join("\n");
      return { text, isError: raw.isError === true, structured: (raw.structuredContent ?? {}) as Record<string, unknown> };
    },
    async close() {
      await transport.terminateSession().catch(() => {});
      await client.close().catch(() => {});
    },
  };
}

export const MODERN = "2026-07-28";

export const modernMeta = (extra: Record<string, unknown> = {}) => ({
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientInfo": { name: "modern-http-test", version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
  ...extra,
});

/** One 2026-07-28 request as a bare POST: the HTTP status and the JSON-RPC answer. */
export async function modernPost(
  url: string,
  token: string | undefined,
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, any>; headers: Headers }> {
  const r = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json",
      "mcp-protocol-version": MODERN,
      "mcp-method": method,
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: { ...params, _meta: modernMeta(params._meta as Record<string, unknown>) },
    }),
  });
  const text = await r.text();
  let body: Record<string, any> = {};
  try {
    body = JSON.parse(text);
  } catch {
    body = { raw: text };
  }
  return { status: r.status, body, headers: r.headers };
}

/** run_python as a bare 2026-07-28 POST; its structured payload. */
export async function modernRun(url: string, token: string | undefined, code: string, extra: Record<string, unknown> = {}) {
  const r = await modernPost(url, token, "tools/call", { name: "run_python", arguments: { code, ...extra } });
  return {
    status: r.status,
    result: r.body.result as CallToolResult & { structuredContent?: Record<string, unknown> },
    error: r.body.error,
    body: r.body,
  };
}
