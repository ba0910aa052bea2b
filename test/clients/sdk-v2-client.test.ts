/**
 * The MCP TypeScript SDK's v2 client (`@modelcontextprotocol/client` 2.4.0, a dual-era client: it probes
 * `server/discover` and speaks revision 2026-07-28 where the server does, and fulfils multi round-trip
 * results through its own elicitation handler) against the compiled bridge over stdio, with a real
 * upstream (test/fixtures/interactive-server.ts) on a real engine. The same client in its default legacy
 * mode gets the handshake-based revision from the same binary.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { BINARY } from "../support/binary.ts";
import { bridgeEnv, ENGINES, ROOT } from "../support/env.ts";

const FIXTURE = join(ROOT, "test", "fixtures", "interactive-server.ts");
const home = mkdtempSync(join(tmpdir(), "mcx-sdk-v2-"));
mkdirSync(join(home, ".config", "mcp", "servers"), { recursive: true });
writeFileSync(
  join(home, ".config", "mcp", "servers", "interactive.json"),
  JSON.stringify({ mcpServers: { interactive: { command: process.execPath, args: [FIXTURE] } } }),
);
afterAll(() => rmSync(home, { recursive: true, force: true }));

type Answer = { action: "accept"; content: { decision: string } } | { action: "decline" };

async function connect(mode: "auto" | "legacy", answer: () => Answer, asked: string[]) {
  const client = new Client(
    { name: "sdk-v2-test", version: "1.0.0" },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode } },
  );
  client.setRequestHandler("elicitation/create", async (req) => {
    asked.push(String((req.params as { message: string }).message));
    return answer();
  });
  const transport = new StdioClientTransport({
    command: BINARY,
    env: bridgeEnv({
      HOME: home,
      MCP_BRIDGE_STATE_DIR: join(home, "state"),
      MCP_BRIDGE_RUNTIME: ENGINES[0]!,
      MCP_BRIDGE_PREWARM: "0",
      MCP_BRIDGE_STRUCTURED_CONTENT: "0",
    }),
    stderr: "ignore",
  });
  await client.connect(transport);
  return client;
}

const text = (r: unknown) => (r as { content: Array<{ text: string }> }).content.map((c) => c.text).join("");

describe("the MCP SDK's v2 client", () => {
  test("negotiates revision 2026-07-28 and gets two approvals asked through its own handler, one round each", async () => {
    const asked: string[] = [];
    const client = await connect("auto", () => ({ action: "accept", content: { decision: "once" } }), asked);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      expect(client.getServerVersion()).toMatchObject({ name: "mcp-code-exec" });
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["run_python"]);
      const r = await client.callTool({
        name: "run_python",
        arguments: {
          code: 'import asyncio\nr = await asyncio.gather(mcp_interactive.delete_note(id="a"), mcp_interactive.delete_note(id="b"))\nprint(r)',
          servers: ["interactive"],
        },
      });
      expect(text(r)).toBe("[{'deleted': 'a'}, {'deleted': 'b'}]");
      expect(asked).toHaveLength(2);
      for (const q of asked) expect(q).toContain("Tool: delete_note");
    } finally {
      await client.close();
    }
  }, 120_000);

  test("a declined approval is a refusal in code, and the session goes on", async () => {
    const asked: string[] = [];
    const client = await connect("auto", () => ({ action: "decline" }), asked);
    try {
      const r = await client.callTool({
        name: "run_python",
        arguments: {
          code: 'try:\n    await mcp_interactive.delete_note(id="c")\nexcept Exception as e:\n    print(type(e).__name__)\nx = 5',
          servers: ["interactive"],
        },
      });
      expect(text(r)).toBe("McpPolicyError");
      expect(text(await client.callTool({ name: "run_python", arguments: { code: "print(x + 1)" } }))).toBe("6");
    } finally {
      await client.close();
    }
  }, 120_000);

  test("in its default legacy mode it gets the handshake-based revision, and the approval as a request", async () => {
    const asked: string[] = [];
    const client = await connect("legacy", () => ({ action: "accept", content: { decision: "once" } }), asked);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe("2025-11-25");
      const r = await client.callTool({
        name: "run_python",
        arguments: { code: 'print(await mcp_interactive.delete_note(id="d"))', servers: ["interactive"] },
      });
      expect(text(r)).toBe("{'deleted': 'd'}");
      expect(asked).toHaveLength(1);
    } finally {
      await client.close();
    }
  }, 120_000);
});
