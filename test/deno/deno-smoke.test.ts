/**
 * The bridge from source under Deno (the `deno` devDependency): `--version`, `exec` against the
 * offline image on every engine, `config snippet`, and run_python over MCP stdio with the SDK client
 * (and with its v2 client, at protocol revision 2026-07-28).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioClientV2 } from "@modelcontextprotocol/client/stdio";
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { bridgeEnv, ENGINES, ROOT } from "../support/env.ts";
import { run } from "../support/run.ts";

// The platform binary itself; node_modules/.bin/deno is a Node wrapper around the same file.
const DENO =
  [join(ROOT, "node_modules/@deno/linux-x64-glibc/deno"), join(ROOT, "node_modules/.bin/deno")].find((p) => existsSync(p)) ?? "deno";
const MAIN = join(ROOT, "src/main.ts");
// Deno 2.9 imports `with { type: "text" }` (entrypoint/*.py) without --unstable-raw-imports; no flag needed.
const DENO_ARGS = ["run", "-A", "--no-lock", MAIN];
const EMPTY_DIR = mkdtempSync(join(tmpdir(), "mcp-code-exec-deno-"));

const deno = (args: string[], env: Record<string, string> = {}) =>
  run([DENO, ...DENO_ARGS, ...args], { cwd: EMPTY_DIR, env: bridgeEnv(env) });

describe("under Deno", () => {
  test("--version", async () => {
    const r = await deno(["--version"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toStartWith(`mcp-code-exec/${pkg.version} `);
  });

  for (const engine of ENGINES) {
    test(`exec -c on ${engine}`, async () => {
      const r = await deno(["exec", "-c", "print(6*7)"], { MCP_BRIDGE_RUNTIME: engine });
      expect(r.stderr).toBe("");
      expect(r.stdout).toBe("42\n");
      expect(r.code).toBe(0);
    });
  }

  test("the search index and its built-in word vectors", async () => {
    const r = await run([DENO, "run", "-A", "--no-lock", join(ROOT, "test/deno/fixtures/search-by-meaning.ts")], {
      cwd: EMPTY_DIR,
      env: bridgeEnv(),
    });
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toEqual({ entries: 67992, top: "maps_elevation" });
  });

  test("server discovery from a ~/.claude.json of megabytes (read in chunks, only the parts used)", async () => {
    const r = await run([DENO, "run", "-A", "--no-lock", join(ROOT, "test/deno/fixtures/large-claude-json.ts")], {
      cwd: EMPTY_DIR,
      env: bridgeEnv(),
    });
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toEqual({ megabytes: true, servers: ["local", "user"], problems: 0 });
  });

  test("config snippet names deno, its flags and the entry script", async () => {
    const r = await deno(["config", "snippet", "--client", "vscode"]);
    expect(r.code).toBe(0);
    const entry = JSON.parse(r.stdout).servers["code-exec"];
    expect(entry).toMatchObject({ type: "stdio", args: ["run", "-A", MAIN] });
    expect(entry.command).toEndWith("deno");
  });

  test("serves run_python over MCP stdio", async () => {
    const transport = new StdioClientTransport({ command: DENO, args: DENO_ARGS, env: bridgeEnv(), cwd: EMPTY_DIR, stderr: "pipe" });
    const client = new Client({ name: "deno-smoke", version: "0.0.0" });
    await client.connect(transport);
    try {
      const r = await client.callTool({ name: "run_python", arguments: { code: "x = 6\nx * 7" } });
      expect(r.isError).toBe(false);
      expect(r.structuredContent).toMatchObject({ value: "42" });
      const again = await client.callTool({ name: "run_python", arguments: { code: "x + 1" } });
      expect(again.structuredContent).toMatchObject({ value: "7" });
    } finally {
      await client.close();
    }
  });

  test("speaks protocol revision 2026-07-28 to a client that asks for it (the MCP SDK's v2 client)", async () => {
    const transport = new StdioClientV2({ command: DENO, args: DENO_ARGS, env: bridgeEnv(), cwd: EMPTY_DIR, stderr: "ignore" });
    const client = new ClientV2({ name: "deno-smoke", version: "0.0.0" }, { versionNegotiation: { mode: "auto" } });
    await client.connect(transport);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      const r = await client.callTool({ name: "run_python", arguments: { code: "6 * 7" } });
      expect(r.structuredContent).toMatchObject({ value: "42" });
    } finally {
      await client.close();
    }
  }, 60_000);
});
