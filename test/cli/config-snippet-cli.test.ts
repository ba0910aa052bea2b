/** `mcp-code-exec config snippet` from the compiled binary: its own absolute path, each client's format. */
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { BINARY } from "../support/binary.ts";
import { run } from "../support/run.ts";

const EMPTY = mkdtempSync(join(tmpdir(), "mcp-code-exec-snippet-"));
const PATH = "/usr/local/bin:/usr/bin:/bin";
const snippet = (args: string[], env: Record<string, string> = {}) =>
  run([BINARY, "config", "snippet", ...args], { cwd: EMPTY, env: { PATH, HOME: EMPTY, ...env } });

describe("config snippet", () => {
  test("every JSON client gets valid JSON naming this binary; MCP_BRIDGE_IMAGE only when set", async () => {
    for (const [client, key, type] of [
      ["claude-desktop", "mcpServers", undefined],
      ["cursor", "mcpServers", undefined],
      ["vscode", "servers", "stdio"],
    ] as const) {
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
    const r = await run([join(bin, "mcp-code-exec"), "config", "snippet", "--client", "cursor"], {
      cwd: EMPTY,
      env: { PATH: `${bin}:${PATH}`, HOME: EMPTY },
    });
    expect(JSON.parse(r.stdout).mcpServers["code-exec"].command).toBe(join(bin, "mcp-code-exec"));
  });

  test("--npx: the npx form pinned to this version, for every client", async () => {
    const spec = `mcp-code-exec@${pkg.version}`;
    const cursor = await snippet(["--client", "cursor", "--npx"]);
    expect(JSON.parse(cursor.stdout)).toEqual({ mcpServers: { "code-exec": { command: "npx", args: ["-y", spec] } } });
    const line = await snippet(["--client", "claude-code", "--npx"]);
    expect(line.stdout).toBe(`claude mcp add code-exec -- npx -y ${spec}\n`);
  });

  test("a missing or unknown client is a usage error that lists the clients", async () => {
    for (const args of [[], ["--client", "emacs"]]) {
      const r = await snippet(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(
        "pass --client claude-code|claude-desktop|vscode|cursor|windsurf|codex|gemini|zed|opencode|cline|continue|goose|copilot-cli",
      );
    }
  });
});

describe("config add", () => {
  test("writes this binary into Codex's config.toml, keeps the rest, backs up, and refuses to overwrite without --force", async () => {
    const home = mkdtempSync(join(tmpdir(), "mcp-code-exec-add-"));
    const file = join(home, ".codex", "config.toml");
    mkdirSync(join(home, ".codex"));
    writeFileSync(file, '# mine\nmodel = "o4"\n');
    const add = () => run([BINARY, "config", "add", "--client", "codex"], { cwd: EMPTY, env: { PATH, HOME: home } });
    const first = await add();
    expect(first.code).toBe(0);
    expect(first.stdout).toStartWith(`Added code-exec in ${file} (backup: ${file}.bak-`);
    expect(readFileSync(file, "utf8")).toBe(`# mine\nmodel = "o4"\n\n[mcp_servers.code-exec]\ncommand = ${JSON.stringify(BINARY)}\n`);
    const second = await add();
    expect(second.code).toBe(2);
    expect(second.stderr).toContain("already has a server named");
    expect(second.stderr).toContain("--force");
    const forced = await run([BINARY, "config", "add", "--client", "codex", "--force"], { cwd: EMPTY, env: { PATH, HOME: home } });
    expect(forced.stdout).toStartWith("Replaced code-exec");
  });

  test("--npx writes the npx form of this version", async () => {
    const home = mkdtempSync(join(tmpdir(), "mcp-code-exec-add-npx-"));
    const r = await run([BINARY, "config", "add", "--client", "cursor", "--npx"], { cwd: EMPTY, env: { PATH, HOME: home } });
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(join(home, ".cursor", "mcp.json"), "utf8"))).toEqual({
      mcpServers: { "code-exec": { command: "npx", args: ["-y", `mcp-code-exec@${pkg.version}`] } },
    });
  });
});
