/** renderSnippet: each client's own format, from a fixed launch command. */
import { describe, expect, test } from "bun:test";
import { CLIENTS, renderSnippet, shellQuote } from "../../src/cli/config-snippet.ts";
import { CLIENT_READERS } from "../../src/config/clients/index.ts";

const launch = { command: "/opt/My Tools/mcp-code-exec", args: [] };
const env = { MCP_BRIDGE_IMAGE: "mcp-code-exec-sandbox:bookworm" };

describe("config snippet formats", () => {
  test("claude-desktop and cursor: mcpServers with command and env", () => {
    for (const client of ["claude-desktop", "cursor"] as const) {
      const { text } = renderSnippet({ client, name: "code-exec", launch, env }, "/home/u", "linux");
      expect(JSON.parse(text)).toEqual({ mcpServers: { "code-exec": { command: "/opt/My Tools/mcp-code-exec", env } } });
    }
    expect(renderSnippet({ client: "claude-desktop", name: "x", launch, env: {} }, "/Users/u", "darwin").where).toContain(
      "/Users/u/Library/Application Support/Claude/claude_desktop_config.json",
    );
  });

  test("vscode: servers with type stdio; args only when there are some", () => {
    const { text } = renderSnippet({
      client: "vscode",
      name: "py",
      launch: { command: "/usr/bin/deno", args: ["run", "-A", "/src/main.ts"] },
      env: {},
    });
    expect(JSON.parse(text)).toEqual({ servers: { py: { type: "stdio", command: "/usr/bin/deno", args: ["run", "-A", "/src/main.ts"] } } });
  });

  test("claude-code: a shell-quoted claude mcp add line, or the .mcp.json block with --json", () => {
    const line = renderSnippet({ client: "claude-code", name: "code-exec", launch, env }).text;
    expect(line).toBe("claude mcp add code-exec -e MCP_BRIDGE_IMAGE=mcp-code-exec-sandbox:bookworm -- '/opt/My Tools/mcp-code-exec'");
    const block = renderSnippet({ client: "claude-code", name: "code-exec", launch, env, json: true }).text;
    expect(JSON.parse(block)).toEqual({ mcpServers: { "code-exec": { type: "stdio", command: "/opt/My Tools/mcp-code-exec", env } } });
  });

  test("shell quoting survives spaces and single quotes", () => {
    expect(shellQuote("/usr/bin/x")).toBe("/usr/bin/x");
    expect(shellQuote("it's here")).toBe(`'it'\\''s here'`);
    expect(new Set<string>(CLIENTS)).toEqual(new Set(CLIENT_READERS.map((r) => r.id).filter((id) => id !== "bridge")));
  });
});

describe("snippets of the other clients", () => {
  const l = { command: "/opt/bin/mcp-code-exec", args: [] };
  test("codex: a TOML table; goose and continue: YAML; opencode: a command array; zed: context_servers", () => {
    expect(renderSnippet({ client: "codex", name: "code-exec", launch: l, env }).text).toBe(
      '[mcp_servers.code-exec]\ncommand = "/opt/bin/mcp-code-exec"\n\n[mcp_servers.code-exec.env]\nMCP_BRIDGE_IMAGE = "mcp-code-exec-sandbox:bookworm"',
    );
    expect(renderSnippet({ client: "goose", name: "code-exec", launch: l, env: {} }).text).toBe(
      "extensions:\n  code-exec:\n    name: code-exec\n    type: stdio\n    cmd: /opt/bin/mcp-code-exec\n    args: []\n    envs: {}\n    enabled: true\n    timeout: 300",
    );
    expect(renderSnippet({ client: "continue", name: "code-exec", launch: l, env: {} }).text).toContain(
      "mcpServers:\n  - name: code-exec\n    type: stdio\n    command: /opt/bin/mcp-code-exec",
    );
    // opencode waits 60 s for a call unless told otherwise: its timeout covers the longest run (120 s) and a margin.
    expect(JSON.parse(renderSnippet({ client: "opencode", name: "x", launch: l, env }).text)).toEqual({
      mcp: { x: { type: "local", command: ["/opt/bin/mcp-code-exec"], enabled: true, environment: env, timeout: 150_000 } },
    });
    const longer = { MCP_BRIDGE_MAX_TIMEOUT: "10m" };
    expect(JSON.parse(renderSnippet({ client: "opencode", name: "x", launch: l, env: longer }).text).mcp.x.timeout).toBe(630_000);
    expect(JSON.parse(renderSnippet({ client: "zed", name: "x", launch: l, env: {} }).text)).toEqual({
      context_servers: { x: { command: "/opt/bin/mcp-code-exec" } },
    });
    expect(JSON.parse(renderSnippet({ client: "copilot-cli", name: "x", launch: l, env: {} }).text)).toEqual({
      mcpServers: { x: { type: "local", command: "/opt/bin/mcp-code-exec", tools: ["*"] } },
    });
  });
});
