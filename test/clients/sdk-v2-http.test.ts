/**
 * The MCP TypeScript SDK's v2 client (`@modelcontextprotocol/client` 2.4.0) over Streamable HTTP
 * against the compiled binary's `serve --http`, signed in with a static token through the client's
 * own `authProvider` (its documented way to send a bearer token). In its dual-era mode it probes
 * `server/discover` and speaks 2026-07-28: stateless POSTs, approvals as `input_required` results its
 * elicitation handler answers; in its legacy mode, a 2025-11-25 protocol session. A real upstream
 * (test/fixtures/interactive-server.ts) on a real engine.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import "../support/binary.ts";
import { ENGINES, ROOT } from "../support/env.ts";
import { startHttpBridge, type HttpBridge } from "../support/http-bridge.ts";

const FIXTURE = join(ROOT, "test", "fixtures", "interactive-server.ts");
const TOKEN = `sdk-${crypto.randomUUID()}`;
type Block = { type: string; text?: string; mimeType?: string };
const text = (r: unknown) =>
  ((r as { content: Block[] }).content ?? [])
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");

let bridge: HttpBridge;
beforeAll(async () => {
  const home = mkdtempSync(join(tmpdir(), "mcx-sdk-v2-http-"));
  mkdirSync(join(home, ".config", "mcp", "servers"), { recursive: true });
  writeFileSync(
    join(home, ".config", "mcp", "servers", "interactive.json"),
    JSON.stringify({ mcpServers: { interactive: { command: process.execPath, args: [FIXTURE] } } }),
  );
  bridge = await startHttpBridge({
    HOME: home,
    MCP_BRIDGE_STATE_DIR: join(home, "state"),
    MCP_BRIDGE_RUNTIME: ENGINES[0]!,
    MCP_BRIDGE_PREWARM: "0",
    MCP_BRIDGE_STRUCTURED_CONTENT: "0",
    MCP_BRIDGE_HTTP_TOKENS: `sdk=${TOKEN}`,
  });
}, 60_000);
afterAll(async () => {
  expect(await bridge?.close()).toBe(0);
});

async function connect(mode: "auto" | "legacy", asked: string[], token: string | null = TOKEN) {
  const client = new Client(
    { name: "sdk-v2-http-test", version: "1.0.0" },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode } },
  );
  client.setRequestHandler("elicitation/create", async (req) => {
    asked.push(String((req.params as { message: string }).message));
    return { action: "accept", content: { decision: "once" } };
  });
  const transport = new StreamableHTTPClientTransport(new URL(bridge.url), {
    ...(token ? { authProvider: { token: async () => token } } : {}),
  });
  await client.connect(transport);
  return { client, transport };
}

describe("the MCP SDK's v2 client over HTTP", () => {
  test("negotiates 2026-07-28 with no protocol session; text, a traceback, a PNG, and state across calls", async () => {
    const { client, transport } = await connect("auto", []);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      expect(transport.sessionId).toBeUndefined();
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["run_python"]);
      const set = await client.callTool({ name: "run_python", arguments: { code: "x = 41\nprint('x is set')" } });
      expect(text(set)).toContain("x is set");
      expect(text(await client.callTool({ name: "run_python", arguments: { code: "x + 1" } }))).toContain("[value] 42");
      const err = await client.callTool({ name: "run_python", arguments: { code: "def f():\n    return 1 / 0\nf()" } });
      expect((err as { isError?: boolean }).isError).toBe(true);
      expect(text(err)).toContain("ZeroDivisionError: division by zero");
      expect(text(err)).toContain("line 2, in f");
      const plot = await client.callTool({
        name: "run_python",
        arguments: { code: "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nplt.plot([1, 2])\nNone" },
      });
      expect((plot as { content: Block[] }).content.map((c) => c.mimeType).filter(Boolean)).toContain("image/png");
    } finally {
      await client.close();
    }
  }, 120_000);

  test("two approvals of a proxied call come back as input_required and its elicitation handler answers them", async () => {
    const asked: string[] = [];
    const { client } = await connect("auto", asked);
    try {
      const r = await client.callTool({
        name: "run_python",
        arguments: {
          code: 'import asyncio\nr = await asyncio.gather(mcp_interactive.delete_note(id="a"), mcp_interactive.delete_note(id="b"))\nprint(r)',
          servers: ["interactive"],
        },
      });
      expect(text(r)).toContain("[{'deleted': 'a'}, {'deleted': 'b'}]");
      expect(asked).toHaveLength(2);
      for (const q of asked) expect(q).toContain("Tool: delete_note");
    } finally {
      await client.close();
    }
  }, 120_000);

  test("in its legacy mode: a 2025-11-25 protocol session (Mcp-Session-Id), the approval asked as a request", async () => {
    const asked: string[] = [];
    const { client, transport } = await connect("legacy", asked);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe("2025-11-25");
      expect(transport.sessionId).toMatch(/^[A-Za-z0-9_-]{22}$/);
      const r = await client.callTool({
        name: "run_python",
        arguments: { code: 'print(await mcp_interactive.delete_note(id="d"))', servers: ["interactive"] },
      });
      expect(text(r)).toContain("{'deleted': 'd'}");
      expect(asked).toHaveLength(1);
    } finally {
      await transport.terminateSession();
      await client.close();
    }
  }, 120_000);

  test("without its token the client cannot connect, and says it was not authorized", async () => {
    await expect(connect("auto", [], null)).rejects.toThrow("the server requires authorization (HTTP 401)");
  });
});
