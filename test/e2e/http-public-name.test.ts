/**
 * `serve --http` on loopback behind a TLS-terminating reverse proxy, its public URL in
 * MCP_BRIDGE_HTTP_RESOURCE: a proxy that passes the browser's or client's `Host` on (Caddy does by
 * default, nginx with `proxy_set_header Host $host`) sends the public name, which is one of this
 * server's names; any other name is still refused (DNS rebinding). The requests below carry the Host
 * header such a proxy sends (no proxy runs: the bridge sees the same bytes either way).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ENGINES } from "../support/env.ts";
import { MODERN, modernMeta, startHttpBridge, type HttpBridge } from "../support/http-bridge.ts";

const TOKEN = `proxy-${crypto.randomUUID()}`;
const PUBLIC = "https://mcp.example.test/mcp";
let b: HttpBridge;

beforeAll(async () => {
  const home = mkdtempSync(join(tmpdir(), "mcx-http-public-"));
  b = await startHttpBridge({
    HOME: home,
    MCP_BRIDGE_STATE_DIR: join(home, "state"),
    MCP_BRIDGE_RUNTIME: ENGINES[0]!,
    MCP_BRIDGE_PREWARM: "0",
    MCP_BRIDGE_HTTP_TOKENS: `alice=${TOKEN}`,
    MCP_BRIDGE_HTTP_RESOURCE: PUBLIC,
  });
}, 60_000);
afterAll(async () => {
  expect(await b?.close()).toBe(0);
});

const listTools = (host: string, origin?: string) =>
  fetch(b.url, {
    method: "POST",
    headers: {
      host,
      ...(origin ? { origin } : {}),
      "content-type": "application/json",
      accept: "application/json",
      authorization: `Bearer ${TOKEN}`,
      "mcp-protocol-version": MODERN,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: modernMeta() } }),
  });

test("a request the proxy passes on with the public Host (and a browser's Origin of that name) is served", async () => {
  const r = await listTools("mcp.example.test", "https://mcp.example.test");
  expect(r.status).toBe(200);
  expect(JSON.stringify(await r.json())).toContain("run_python");
  // The challenge points clients at the public metadata.
  const none = await fetch(b.url, {
    method: "POST",
    headers: { host: "mcp.example.test", "content-type": "application/json" },
    body: "{}",
  });
  expect(none.headers.get("www-authenticate")).toContain(
    'resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp"',
  );
});

test("any other name is still refused before sign-in, and the loopback names still work", async () => {
  const other = await listTools("evil.example");
  expect(other.status).toBe(403);
  expect(((await other.json()) as { error: { message: string } }).error.message).toContain("mcp.example.test");
  expect((await listTools(new URL(b.url).host)).status).toBe(200);
});
