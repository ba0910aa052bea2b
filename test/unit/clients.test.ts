/** Every client read as it reads itself: one fixture per client, checked field by field. */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { discoverServers, formatProblem, type Discovery, type ServerEntry } from "../../src/config/servers.ts";
import { writeClientWorld } from "../support/client-fixtures.ts";

const root = mkdtempSync(join(tmpdir(), "clients-unit-"));
const w = writeClientWorld(root);
const managedDir = join(root, "no-managed");
const discover = (env: Record<string, string> = w.env): Discovery =>
  discoverServers({
    env: { ...env, GEMINI_CLI_SYSTEM_SETTINGS_PATH: join(root, "no-gemini-system.json") },
    home: w.home,
    cwd: w.cwd,
    platform: "linux",
    managedDir,
  });
const d = discover();
afterAll(() => rmSync(root, { recursive: true, force: true }));

function s(name: string): ServerEntry {
  const x = d.servers.find((e) => e.name === name);
  if (!x)
    throw new Error(
      `no ${name}; problems: ${d.problems.map(formatProblem).join("; ")}; skipped: ${d.skipped.map((k) => k.name).join(", ")}`,
    );
  return x;
}
const skip = (name: string) => d.skipped.find((k) => k.name === name);

test("the fixture has no problems", () => {
  expect(d.problems.map(formatProblem)).toEqual([]);
});

describe("Claude Code", () => {
  test("local beats project beats user; whole entries", () => {
    expect(s("cc-dup")).toMatchObject({
      client: "claude-code",
      scope: "local",
      source: w.files.claudeJson,
      transport: { command: "local-version" },
      shadowed: [w.files.mcpJson, w.files.claudeJson],
    });
  });
  test("${VAR} and ${VAR:-default}; local scope of a trusted folder is trusted", () => {
    expect(s("cc-user").transport).toEqual({ type: "stdio", command: "cc-user-cmd", args: ["cv", "fallback"], env: {} });
    expect(s("cc-local")).toMatchObject({
      scope: "local",
      at: `projects[${JSON.stringify(w.cwd)}].mcpServers.cc-local`,
      transport: { env: { PLAIN: "cv" } },
      trust: { state: "trusted" },
    });
    expect(s("cc-local").trust.reason).toContain("hasTrustDialogAccepted");
    expect(s("cc-proj")).toMatchObject({
      scope: "project",
      transport: { type: "http", url: "https://cc.example/cv/mcp", headers: { "X-Org": "cv" } },
      trust: { state: "needs-approval" },
    });
  });
});

test("Claude Desktop: no variable substitution", () => {
  expect(s("desk")).toMatchObject({
    client: "claude-desktop",
    scope: "user",
    transport: { type: "stdio", command: "desk-cmd", args: ["${HOME}"], env: { PLAIN: "v" } },
  });
});

describe("VS Code", () => {
  test("workspace file: predefined variables, numeric and null env, envFile, ${input:} as a need", () => {
    const v = s("vs-ws");
    expect(v).toMatchObject({ client: "vscode", scope: "project", source: w.files.vscodeWs });
    expect(v.transport).toEqual({
      type: "stdio",
      command: "node",
      args: [`${w.cwd}/server.js`, "project", w.home],
      env: { FROM_FILE: "yes", PORT: "8080", SECRET_TOKEN: "${input:api-token}" },
    });
    expect(v.needs).toEqual([
      {
        what: "${input:api-token}",
        at: "servers.vs-ws.env.SECRET_TOKEN",
        why: expect.stringContaining("VS Code prompts"),
        supply: expect.stringContaining("MCP_BRIDGE_INPUT_API_TOKEN"),
      },
    ]);
    const supplied = discover({ ...w.env, MCP_BRIDGE_INPUT_API_TOKEN: "tok" }).servers.find((e) => e.name === "vs-ws")!;
    expect(supplied.needs).toEqual([]);
    expect(supplied.transport).toMatchObject({ env: { SECRET_TOKEN: "tok" } });
  });
  test("user profile mcp.json with ${env:X}", () => {
    expect(s("vs-user")).toMatchObject({
      scope: "user",
      source: w.files.vscodeUser,
      transport: { type: "http", url: "https://vs.example/mcp", headers: { "X-Org": "vo" } },
    });
  });
});

test("Cursor: project beats global; a URL is Streamable HTTP; ${env:} and ${workspaceFolder}", () => {
  expect(s("cur-dup")).toMatchObject({
    scope: "project",
    transport: { command: "project-version", args: [w.cwd] },
    shadowed: [w.files.cursorGlobal],
  });
  expect(s("cur-g").transport).toEqual({ type: "http", url: "https://cur.example/mcp", headers: { "X-Org": "co" } });
});

test("Windsurf: serverUrl, disabled, ${env:} and ${file:}", () => {
  expect(s("ws-remote").transport).toEqual({ type: "http", url: "https://ws.example/mcp", headers: {} });
  expect(s("ws-file").transport).toMatchObject({ env: { PLAIN: "from-file", ORG: "wo" } });
  expect(skip("ws-off")).toMatchObject({ client: "windsurf", reason: 'disabled ("disabled": true)' });
});

describe("Codex", () => {
  test("TOML tables: env table, env_vars pass-through, bearer_token_env_var, enabled = false", () => {
    expect(s("codex-mem")).toMatchObject({
      client: "codex",
      scope: "user",
      at: "mcp_servers.codex-mem",
      transport: { command: "node", env: { MEMORY_FILE_PATH: join(root, "codex-memory.jsonl"), CODEX_PASS: "cp" } },
    });
    expect(s("codex-http").needs).toEqual([
      {
        what: "CODEX_TOKEN",
        at: "mcp_servers.codex-http",
        why: expect.stringContaining("Authorization"),
        supply: "set CODEX_TOKEN in the bridge's environment",
      },
    ]);
    const withToken = discover({ ...w.env, CODEX_TOKEN: "ct" }).servers.find((e) => e.name === "codex-http")!;
    expect(withToken.transport).toEqual({ type: "http", url: "https://codex.example/mcp", headers: { Authorization: "Bearer ct" } });
    expect(skip("codex-off")?.reason).toBe("disabled (enabled = false)");
  });
  test("a trusted project's .codex/config.toml is approved by Codex's own trust_level", () => {
    expect(s("codex-proj")).toMatchObject({
      scope: "project",
      transport: { command: "codex-proj-cmd", args: ["--x"] },
      trust: { state: "trusted" },
    });
    expect(s("codex-proj").trust.reason).toContain("trust_level");
  });
});

test("Gemini CLI: url is SSE, httpUrl is Streamable HTTP, $VAR and ${VAR}, mcp.excluded", () => {
  expect(s("gem-sse").transport).toEqual({ type: "sse", url: "https://g.example/sse", headers: {} });
  expect(s("gem-http").transport).toEqual({ type: "http", url: "https://g.example/mcp", headers: { "X-Org": "go" } });
  expect(s("gem-stdio").transport).toEqual({ type: "stdio", command: "gem-cmd", args: ["go", "$GEM_UNSET"], env: {}, cwd: "/tmp" });
  expect(skip("gem-ex")?.reason).toContain("mcp.excluded");
  expect(s("gem-proj")).toMatchObject({ scope: "project", trust: { state: "needs-approval" } });
});

test("Zed: both entry forms and remote; project settings merged on top; extensions and enabled: false are off", () => {
  expect(s("zed-new")).toMatchObject({
    scope: "project",
    source: w.files.zedProject,
    transport: { command: "zn", args: ["override"], env: { PLAIN: "1" } },
    trust: { state: "needs-approval" },
  });
  expect(s("zed-new").notes.join()).toContain(w.files.zedUser);
  expect(s("zed-old").transport).toEqual({ type: "stdio", command: "zo", args: ["b"], env: { E: "1" } });
  expect(s("zed-remote").transport).toEqual({ type: "http", url: "https://zed.example/mcp", headers: { "X-Org": "z" } });
  expect(skip("zed-ext")?.reason).toContain("Zed extension");
  expect(skip("zed-off")?.reason).toContain("enabled: false");
});

test("opencode: command arrays, environment, {env:X}, enabled: false", () => {
  expect(s("oc-local").transport).toMatchObject({ type: "stdio", command: "node", args: ["/opt/memory.js"], env: { PLAIN: "ov" } });
  expect(s("oc-remote")).toMatchObject({
    transport: { type: "http", url: "https://oc.example/mcp", headers: { "X-Org": "ov" } },
    notes: [],
  });
  expect(skip("oc-off")?.reason).toContain("enabled: false");
});

test("Cline: a URL without type is SSE, streamableHttp is Streamable HTTP, disabled", () => {
  expect(s("cline-sse").transport).toEqual({ type: "sse", url: "https://cl.example/sse", headers: {} });
  expect(s("cline-http").transport).toEqual({ type: "http", url: "https://cl.example/mcp", headers: {} });
  expect(skip("cline-off")?.client).toBe("cline");
});

test("Continue: YAML list, secrets from ~/.continue/.env, workspace blocks first", () => {
  expect(s("cont-user")).toMatchObject({
    client: "continue",
    at: "mcpServers[0]",
    transport: { command: "npx", args: ["-y", "some-server"], env: { PLAIN: "from-continue-env" } },
  });
  expect(s("cont-missing").needs[0]).toMatchObject({ what: "${{ secrets.NOT_SET_ANYWHERE }}", at: "mcpServers[1].env.OTHER" });
  expect(s("cont-proj")).toMatchObject({ scope: "project", transport: { type: "http", url: "https://cont.example/mcp" } });
});

test("Goose: cmd/envs/env_keys, streamable_http uri, builtin and disabled extensions", () => {
  expect(s("goose-mem").transport).toMatchObject({
    command: "node",
    env: { MEMORY_FILE_PATH: join(root, "goose-memory.jsonl"), GOOSE_KEY: "gk" },
  });
  const noKey = discover({ ...w.env, GOOSE_KEY: "" }).servers.find((e) => e.name === "goose-mem")!;
  expect(noKey.needs).toEqual([]);
  const { GOOSE_KEY: _, ...without } = w.env;
  expect(discover(without).servers.find((e) => e.name === "goose-mem")!.needs[0]).toMatchObject({
    what: "GOOSE_KEY",
    supply: "set GOOSE_KEY in the bridge's environment",
  });
  expect(s("goose-remote").transport).toEqual({ type: "http", url: "https://goose.example/mcp", headers: {} });
  expect(skip("developer")?.reason).toContain("inside Goose");
  expect(skip("goose-off")?.reason).toContain("enabled: false");
});

test("GitHub Copilot CLI: type local; .mcp.json hides .github/mcp.json in the same folder (copilot-cli.test.ts has the rest)", () => {
  expect(s("cop-local").transport).toEqual({ type: "stdio", command: "cop-cmd", args: ["a"], env: {} });
  expect(d.servers.map((e) => e.name)).not.toContain("cop-proj");
  expect(d.looked.find((l) => l.path === w.files.copilotProject)).toMatchObject({
    status: "ignored",
    note: `GitHub Copilot CLI reads ${w.files.mcpJson} in this folder instead`,
  });
});

test("our order between clients decides a name defined by several", () => {
  const order = d.servers.map((e) => e.client);
  const firstIndex = (c: string) => order.indexOf(c);
  expect(firstIndex("claude-code")).toBeLessThan(firstIndex("vscode"));
  expect(firstIndex("vscode")).toBeLessThan(firstIndex("cursor"));
  expect(firstIndex("codex")).toBeLessThan(firstIndex("goose"));
});

describe("broken files of each format say file, position or path, and problem", () => {
  const broken = mkdtempSync(join(tmpdir(), "clients-broken-"));
  const b = writeClientWorld(broken);
  writeFileSync(b.files.codexUser, '[mcp_servers.x]\ncommand = "a"\nargs = [1,\n');
  writeFileSync(b.files.continueUser, "mcpServers:\n  - name: a\n   command: x\n");
  writeFileSync(b.files.goose, "extensions:\n  g:\n    type: stdio\n    cmd: 5\n    args: notalist\n");
  writeFileSync(b.files.copilotUser, '{"mcpServers": {"a": {"command": "x",}, "b": }}');
  writeFileSync(b.files.opencode, JSON.stringify({ mcp: { o: { type: "local", command: "not-an-array" } } }));
  const db = discoverServers({ env: {}, home: b.home, cwd: b.cwd, platform: "linux", managedDir });
  const problemsOf = (file: string) =>
    db.problems.filter((p) => p.file === file).map((p) => (p.path ? `${p.path}: ${p.message}` : p.message));
  afterAll(() => rmSync(broken, { recursive: true, force: true }));

  test("TOML", () => expect(problemsOf(b.files.codexUser)).toEqual([expect.stringMatching(/^invalid TOML at line 4, column 1: /)]));
  test("YAML syntax", () =>
    expect(problemsOf(b.files.continueUser)).toEqual([expect.stringMatching(/^invalid YAML at line 3, column \d+: /)]));
  test("YAML values", () =>
    expect(problemsOf(b.files.goose)).toEqual([
      "extensions.g.cmd: expected string, received number",
      "extensions.g.args: expected array, received string",
    ]));
  test("JSON", () =>
    expect(problemsOf(b.files.copilotUser)).toEqual([
      expect.stringMatching(/^invalid JSON at line 1, column \d+ \(in mcpServers\.b\): expected a value/),
    ]));
  test("opencode shape", () => expect(problemsOf(b.files.opencode)).toEqual(["mcp.o.command: expected array, received string"]));
  test("the other clients still load", () => expect(db.servers.map((e) => e.name)).toContain("desk"));
});
