/** `mcp-code-exec config snippet` from the compiled binary: its own absolute path, each client's format. */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY } from "../support/binary.ts";
import { run } from "../support/run.ts";

const EMPTY = mkdtempSync(join(tmpdir(), "mcp-code-exec-snippet-"));
const PATH = "/usr/local/bin:/usr/bin:/bin";
const snippet = (args: string[], env: Record<string, string> = {}) => run([BINARY, "config", "snippet", ...args], { cwd: EMPTY, env: { PATH, HOME: EMPTY, ...env } });

describe("config snippet", () => {
  test("every JSON client gets valid JSON naming this binary; MCP_BRIDGE_IMAGE only when set", async () => {
    for (const [client, key, type] of [["claude-desktop", "mcpServers", undefined], ["cursor", "mcpServers", undefined], ["vscode", "servers", "stdio"]] as const) {
      const plain = await snippet(["--client", client]);
      expect(plain.code).toBe(0);
      expect(JSON.parse(plain.stdout)).toEqual({ [key]: { "code-exec": { ...(type ? { type } : {}), command: BINARY } } });
      expect(plain.stderr).toStartWith("# merge into");
      const withImage = await snippet(["--client", client, "--name", "py"], { MCP_BRIDGE_IMAGE: "mcp-code-exec-sandbox:bookworm" });
      expect(JSON.parse(withImage.stdout)[key].py.env).toEqual({ MCP_BRIDGE_IMAGE: "mcp-code-exec-sandbox:bookworm" });
    }
  });

  test("claude-code: the claude mcp add line, and the .mcp.json block with --json", async () => {
    const line = await snippet(["--client", "claude-code"], { MCP_BRIDGE_IMAGE: "mcp-code-exec-sandbox:bookworm" });
    expect(line.stdout).toBe(`claude mcp add code-exec -e MCP_BRIDGE_IMAGE=mcp-code-exec-sandbox:bookworm -- ${BINARY}\n`);
    const block = await snippet(["--client", "claude-code", "--json"]);
    expect(JSON.parse(block.stdout)).toEqual({ mcpServers: { "code-exec": { type: "stdio", command: BINARY } } });
  });

  test("a name on PATH that points at this binary is preferred (it survives upgrades)", async () => {
    const bin = mkdtempSync(join(tmpdir(), "mcp-code-exec-path-"));
    symlinkSync(BINARY, join(bin, "mcp-code-exec"));
    const r = await run([join(bin, "mcp-code-exec"), "config", "snippet", "--client", "cursor"], { cwd: EMPTY, env: { PATH: `${bin}:${PATH}`, HOME: EMPTY } });
    expect(JSON.parse(r.stdout).mcpServers["code-exec"].command).toBe(join(bin, "mcp-code-exec"));
  });

  test("a missing or unknown client is a usage error that lists the clients", async () => {
    for (const args of [[], ["--client", "emacs"]]) {
      const r = await snippet(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("pass --client claude-desktop|claude-code|cursor|vscode");
    }
  });
});
