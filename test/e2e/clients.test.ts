/**
 * Every client's files through the compiled binary: `servers --json` field by field, and real proxied
 * calls to @modelcontextprotocol/server-memory configured in Codex's TOML, opencode's command array and
 * Goose's YAML. A wrapper script that launches the bridge is recognised as the bridge itself.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startBridge } from "../support/bridge.ts";
import { writeClientWorld } from "../support/client-fixtures.ts";
import { BINARY } from "../support/binary.ts";
import { bridgeEnv, ENGINES, ROOT } from "../support/env.ts";
import { run } from "../support/run.ts";

const MEMORY = join(ROOT, "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js");
const root = mkdtempSync(join(tmpdir(), "mcx-clients-"));
const w = writeClientWorld(root, MEMORY);
const env = bridgeEnv({
  HOME: w.home,
  XDG_CONFIG_HOME: join(w.home, ".config"),
  MCP_BRIDGE_STATE_DIR: join(root, "state"),
  MCP_BRIDGE_RUNTIME: ENGINES[0]!,
  GEMINI_CLI_SYSTEM_SETTINGS_PATH: join(root, "none.json"),
  ...w.env,
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Row = Record<string, any>;
async function serversJson(
  extra: Record<string, string> = {},
): Promise<{ servers: Row[]; skipped: Row[]; problems: Row[]; looked: Row[]; order: string }> {
  const r = await run([BINARY, "servers", "--json"], { cwd: w.cwd, env: { ...env, ...extra } });
  return JSON.parse(r.stdout);
}

describe("servers --json from the compiled binary", () => {
  test("every client is read, with client, scope, source, transport and trust", async () => {
    const d = await serversJson();
    expect(d.problems).toEqual([]);
    const by = (n: string) => d.servers.find((s) => s.name === n)!;
    expect(by("cc-dup")).toMatchObject({
      client: "claude-code",
      scope: "local",
      command: "local-version",
      shadowed: [w.files.mcpJson, w.files.claudeJson],
    });
    expect(by("desk")).toMatchObject({ client: "claude-desktop", args: ["${HOME}"] });
    expect(by("vs-ws")).toMatchObject({
      client: "vscode",
      scope: "project",
      args: [`${w.cwd}/server.js`, "project", w.home],
      env: { FROM_FILE: "yes", PORT: "8080", SECRET_TOKEN: "***" },
      needs: [{ what: "${input:api-token}" }],
    });
    expect(by("vs-user")).toMatchObject({ type: "http", url: "https://vs.example/mcp", headers: { "X-Org": "vo" } });
    expect(by("cur-dup")).toMatchObject({ client: "cursor", scope: "project", command: "project-version" });
    expect(by("ws-remote")).toMatchObject({ client: "windsurf", type: "http", url: "https://ws.example/mcp" });
    expect(by("codex-mem")).toMatchObject({ client: "codex", at: "mcp_servers.codex-mem", command: "node", args: [MEMORY] });
    expect(by("codex-http").needs[0]).toMatchObject({ what: "CODEX_TOKEN" });
    expect(by("gem-sse")).toMatchObject({ client: "gemini", type: "sse" });
    expect(by("gem-http")).toMatchObject({ type: "http", headers: { "X-Org": "go" } });
    expect(by("zed-new")).toMatchObject({ client: "zed", scope: "project", args: ["override"], trust: { state: "needs-approval" } });
    expect(by("oc-local")).toMatchObject({ client: "opencode", command: "node", args: [MEMORY] });
    expect(by("cline-sse")).toMatchObject({ client: "cline", type: "sse" });
    expect(by("cont-user")).toMatchObject({ client: "continue", env: { PLAIN: "from-continue-env" } });
    expect(by("goose-mem")).toMatchObject({ client: "goose", command: "node", env: { GOOSE_KEY: "***" } });
    expect(by("cop-local")).toMatchObject({ client: "copilot-cli", scope: "user", command: "cop-cmd" });
    expect(d.skipped.map((s) => s.name)).toEqual(
      expect.arrayContaining(["ws-off", "codex-off", "gem-ex", "zed-ext", "zed-off", "oc-off", "cline-off", "developer", "goose-off"]),
    );
    expect(d.order).toContain(
      "Claude Code, Claude Desktop, VS Code, Cursor, Windsurf, Codex, Gemini CLI, Zed, opencode, Cline, Continue, Goose, GitHub Copilot CLI",
    );
    const found = d.looked.filter((l) => l.status === "found").map((l) => l.client);
    expect(new Set(found)).toEqual(
      new Set([
        "claude-code",
        "claude-desktop",
        "vscode",
        "cursor",
        "windsurf",
        "codex",
        "gemini",
        "zed",
        "opencode",
        "cline",
        "continue",
        "goose",
        "copilot-cli",
      ]),
    );
  });

  test("the human listing shows state, command, file and every path looked at", async () => {
    const r = await run([BINARY, "servers"], { cwd: w.cwd, env });
    expect(r.stdout).toContain("zed-new (mcp_zed_new) NEEDS APPROVAL: Zed, project scope, stdio");
    expect(r.stdout).toContain("vs-ws (mcp_vs_ws) NEEDS APPROVAL");
    expect(r.stdout).toContain("needs ${input:api-token} at servers.vs-ws.env.SECRET_TOKEN");
    expect(r.stdout).toContain(`found      ${w.files.codexUser}  [Codex, user]`);
    expect(r.stdout).toMatch(
      /absent {5}\S+\/\.config\/Code\/User\/globalStorage\/saoudrizwan\.claude-dev\/settings\/cline_mcp_settings\.json {2}\[Cline, user\]/,
    );
  });

  test("a wrapper script that launches the bridge is the bridge itself", async () => {
    const wrapper = join(root, "bin", "code-exec-wrapper");
    await run(["mkdir", "-p", join(root, "bin")]);
    writeFileSync(wrapper, `#!/bin/sh\nexec ${BINARY} "$@"\n`);
    chmodSync(wrapper, 0o755);
    writeFileSync(
      join(w.home, ".copilot", "mcp-config.json"),
      JSON.stringify({
        mcpServers: { wrapped: { command: "code-exec-wrapper" }, shell: { command: "sh", args: ["-c", "npx -y mcp-code-exec"] } },
      }),
    );
    const d = await serversJson({ PATH: `${join(root, "bin")}:${env.PATH}` });
    expect(d.servers.map((s) => s.name)).not.toContain("wrapped");
    expect(d.skipped.find((s) => s.name === "wrapped")?.reason).toContain(
      `launches this bridge (mcp-code-exec) again via ${JSON.stringify(wrapper)}`,
    );
    expect(d.skipped.find((s) => s.name === "shell")?.reason).toContain("launches this bridge");
  });
});

describe("real proxied calls to server-memory configured in TOML, a command array and YAML", () => {
  test("codex-mem, oc-local and goose-mem each store and read an entity", async () => {
    const bridge = await startBridge(env, { cwd: w.cwd });
    try {
      for (const [server, alias] of [
        ["codex-mem", "codex_mem"],
        ["oc-local", "oc_local"],
        ["goose-mem", "goose_mem"],
      ]) {
        const r = await bridge.run(
          `await mcp_${alias}.create_entities(entities=[{'name': '${server}', 'entityType': 'test', 'observations': ['ok']}])\n[e['name'] for e in (await mcp_${alias}.read_graph())['entities']]`,
          { servers: [server!] },
        );
        expect(r.text).toBe(`[value] ['${server}']`);
      }
    } finally {
      await bridge.close();
    }
    expect(readFileSync(join(root, "codex-memory.jsonl"), "utf8")).toContain("codex-mem");
    expect(readFileSync(join(root, "oc-memory.jsonl"), "utf8")).toContain("oc-local");
    expect(readFileSync(join(root, "goose-memory.jsonl"), "utf8")).toContain("goose-mem");
  });
});
