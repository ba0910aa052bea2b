import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { CLIENT_ORDER } from "../../src/config/client-names.ts";
import { PRUNED_READ_FROM_BYTES } from "../../src/config/config-file.ts";
import { CLIENT_READERS } from "../../src/config/clients/index.ts";
import {
  type DiscoverOptions,
  type Discovery,
  discoverServers,
  formatProblem,
  type ServerEntry,
  toPythonAlias,
} from "../../src/config/servers.ts";

let root: string;
let home: string;
let cwd: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "servers-config-"));
  home = join(root, "home");
  cwd = join(root, "project");
  mkdirSync(home, { recursive: true });
  mkdirSync(cwd, { recursive: true });
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

function write(file: string, content: unknown): string {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content, null, 2));
  return file;
}

function discover(env: Record<string, string | undefined> = {}, extra: Partial<DiscoverOptions> = {}): Discovery {
  return discoverServers({ env, home, cwd, platform: "linux", ...extra });
}

function byName(d: Discovery, name: string): ServerEntry {
  const s = d.servers.find((x) => x.name === name);
  if (!s)
    throw new Error(
      `no server ${name}; have ${d.servers.map((x) => x.name).join(", ")}; problems: ${d.problems.map(formatProblem).join("; ")}`,
    );
  return s;
}

const stdio = (command: string, args: string[] = []) => ({ command, args });

describe("sources", () => {
  test("nothing configured: no servers, no problems, every client looked at in our order", () => {
    const d = discover();
    expect(d.servers).toEqual([]);
    expect(d.problems).toEqual([]);
    expect(d.skipped).toEqual([]);
    expect(d.looked.every((l) => l.status === "absent")).toBe(true);
    const clients = [...new Set(d.looked.filter((l) => l.scope).map((l) => l.client))];
    expect(clients).toEqual([...CLIENT_ORDER]);
    expect(CLIENT_READERS.map((r) => r.id)).toEqual([...CLIENT_ORDER]);
    expect(
      d.looked
        .filter((l) => l.client === "bridge")
        .map((l) => l.path)
        .slice(0, 3),
    ).toEqual([join(home, "MCPs"), join(home, ".config/mcp/servers"), join(cwd, "mcp-servers")]);
  });

  test("MCP_BRIDGE_CONFIG as a file", () => {
    const f = write(join(root, "elsewhere", "bridge.json"), { mcpServers: { one: stdio("one-cmd") } });
    const d = discover({ MCP_BRIDGE_CONFIG: f });
    expect(byName(d, "one").source).toBe(f);
    expect(d.looked.find((l) => l.scope === "explicit")).toMatchObject({ path: f, status: "found" });
    expect(d.problems).toEqual([]);
  });

  test("MCP_BRIDGE_CONFIG as a folder: *.json sorted by name, first file wins", () => {
    const dir = join(root, "cfg");
    write(join(dir, "b.json"), { mcpServers: { shared: stdio("from-b"), b: stdio("b") } });
    write(join(dir, "a.json"), { mcpServers: { shared: stdio("from-a"), a: stdio("a") } });
    write(join(dir, "notes.txt"), "not json");
    write(join(dir, ".hidden.json"), "{ broken");
    const d = discover({ MCP_BRIDGE_CONFIG: dir });
    expect(d.problems).toEqual([]);
    expect(d.servers.map((s) => s.name)).toEqual(["shared", "a", "b"]);
    const shared = byName(d, "shared");
    expect(shared.transport).toMatchObject({ type: "stdio", command: "from-a" });
    expect(shared.source).toBe(join(dir, "a.json"));
    expect(shared.shadowed).toEqual([join(dir, "b.json")]);
    expect(d.looked.filter((l) => l.scope === "explicit").map((l) => l.path)).toEqual([dir, join(dir, "a.json"), join(dir, "b.json")]);
  });

  test("MCP_BRIDGE_CONFIG path list (platform delimiter, relative to cwd, ~) and a missing entry", () => {
    const f1 = write(join(cwd, "local.json"), { mcpServers: { x: stdio("x") } });
    const f2 = write(join(home, "mine.json"), { servers: { y: stdio("y") } });
    const d = discover({ MCP_BRIDGE_CONFIG: `local.json:~/mine.json::${join(root, "nope.json")}` });
    expect(byName(d, "x").source).toBe(f1);
    expect(byName(d, "y").source).toBe(f2);
    expect(d.problems).toHaveLength(1);
    expect(d.problems[0]).toMatchObject({ file: join(root, "nope.json"), path: "" });
    expect(d.problems[0]!.message).toContain("does not exist");

    const w = discover({ MCP_BRIDGE_CONFIG: `${f1};${f2}` }, { platform: "win32" });
    expect(w.servers.map((s) => s.name)).toEqual(["x", "y"]);
  });

  test("~/MCPs, ~/.config/mcp/servers, ./mcp-servers (including one-server-per-file form)", () => {
    write(join(home, "MCPs", "tools.json"), { mcpServers: { m1: stdio("m1") } });
    write(join(home, "MCPs", "solo.json"), { command: "solo-cmd", args: ["--x"] });
    write(join(home, ".config/mcp/servers", "s.json"), { servers: { m2: { url: "https://example.com/mcp" } } });
    write(join(cwd, "mcp-servers", "p.json"), { mcpServers: { m3: stdio("m3") } });
    write(join(cwd, "mcp-servers", "junk.json"), { hello: "world" });
    const d = discover();
    expect(d.servers.map((s) => s.name)).toEqual(["solo", "m1", "m2", "m3"]);
    expect(byName(d, "solo").transport).toEqual({ type: "stdio", command: "solo-cmd", args: ["--x"], env: {} });
    expect(byName(d, "m2").source).toBe(join(home, ".config/mcp/servers", "s.json"));
    expect(d.problems).toHaveLength(1);
    expect(d.problems[0]!.file).toBe(join(cwd, "mcp-servers", "junk.json"));
    expect(d.problems[0]!.message).toContain("mcpServers");
  });

  test("./.mcp.json (Claude Code project)", () => {
    const f = write(join(cwd, ".mcp.json"), {
      mcpServers: { proj: { type: "stdio", command: "proj", args: ["a"], env: { K: "v" } } },
    });
    const d = discover();
    const s = byName(d, "proj");
    expect(s.source).toBe(f);
    expect(s.transport).toEqual({ type: "stdio", command: "proj", args: ["a"], env: { K: "v" } });
  });

  test("~/.claude.json: top-level mcpServers and projects[cwd].mcpServers (project scope first)", () => {
    const f = write(join(home, ".claude.json"), {
      numStartups: 12,
      mcpServers: { user: stdio("user-cmd"), both: stdio("user-both") },
      projects: {
        [cwd]: { mcpServers: { local: stdio("local-cmd"), both: stdio("local-both") }, allowedTools: [] },
        [join(root, "other")]: { mcpServers: { other: stdio("other-cmd") } },
        "/broken/project": { mcpServers: 42 },
      },
    });
    const d = discover();
    expect(d.problems).toEqual([]);
    expect(d.servers.map((s) => s.name)).toEqual(["local", "both", "user"]);
    expect(byName(d, "both").transport).toMatchObject({ command: "local-both" });
    expect(byName(d, "both").shadowed).toEqual([f]);
    expect(byName(d, "user").source).toBe(f);
  });

  test("~/.claude.json project key matched with a trailing slash", () => {
    write(join(home, ".claude.json"), { projects: { [`${cwd}/`]: { mcpServers: { local: stdio("l") } } } });
    expect(discover().servers.map((s) => s.name)).toEqual(["local"]);
  });

  test("~/.claude.json with a broken projects value still loads top-level servers", () => {
    const f = write(join(home, ".claude.json"), { projects: [], mcpServers: { ok: stdio("ok") } });
    const d = discover();
    expect(d.servers.map((s) => s.name)).toEqual(["ok"]);
    expect(d.problems.map(formatProblem)).toEqual([`${f}: projects: expected object, received array`]);
  });

  // Heavy users' ~/.claude.json runs to hundreds of megabytes of project history: it is walked for the
  // parts used (src/config/json-pruned.ts), not parsed whole, and must say the same as a small file.
  test("a ~/.claude.json of megabytes of other projects' history: the same servers, trust and toggles as a small one", () => {
    const parent = dirname(cwd);
    const own = {
      [cwd]: { mcpServers: { local: stdio("local-cmd") }, disabledMcpServers: ["off"], history: [{ display: 'a "quoted" \\ line' }] },
      // Trust given to a parent folder counts for the folder, and so the folder's own approvals.
      [`${parent}/`]: { hasTrustDialogAccepted: true },
    };
    write(join(cwd, ".claude", "settings.json"), { enabledMcpjsonServers: ["p"] });
    const small = { mcpServers: { user: stdio("user-cmd"), off: stdio("off-cmd") }, projects: own };
    write(join(cwd, ".mcp.json"), { mcpServers: { p: stdio("p-cmd") } });
    write(join(home, ".claude.json"), small);
    const expected = discover();
    const projects: Record<string, unknown> = { ...own };
    for (let i = 0; i < 500; i++)
      projects[join(root, `project-${i}`)] = {
        mcpServers: { [`other-${i}`]: stdio("x") },
        hasTrustDialogAccepted: true,
        history: Array.from({ length: 40 }, (_, j) => ({ display: `step ${j} of "${i}" \\ ünïcødé ${"x".repeat(40)}` })),
      };
    projects[`${cwd}-sibling`] = { mcpServers: { sibling: stdio("s") } };
    const big = write(join(home, ".claude.json"), { numStartups: 9, ...small, projects, tipsHistory: { a: 1 } });
    expect(Bun.file(big).size).toBeGreaterThan(PRUNED_READ_FROM_BYTES);
    const d = discover();
    expect(d.problems).toEqual([]);
    expect(d.servers.map((s) => [s.name, s.scope, s.trust.state, s.trust.reason])).toEqual(
      expected.servers.map((s) => [s.name, s.scope, s.trust.state, s.trust.reason]),
    );
    expect(d.servers.map((s) => s.name)).toEqual(["local", "p", "user"]);
    expect(d.servers[1]!.trust.reason).toContain("approved in Claude Code");
    expect(d.skipped.map((s) => [s.name, s.reason])).toEqual(expected.skipped.map((s) => [s.name, s.reason]));
    expect(d.skipped.map((s) => s.name)).toEqual(["off"]);
  });

  // A broken ~/.claude.json (a crash mid-write, two sessions writing at once, a zero-filled page) reads
  // as it always did, whatever its size: a problem that says where, none of its servers, no trust from
  // it, and the rest of discovery goes on. Each fault is tried in a file of megabytes (walked for the
  // parts used) and in a small one (parsed whole), which must say the same.
  describe("a broken ~/.claude.json, large or small", () => {
    const text = (bulk: number) => {
      const projects: Record<string, unknown> = { [cwd]: { mcpServers: { local: stdio("l") }, hasTrustDialogAccepted: true } };
      for (let i = 0; i < bulk; i++)
        projects[join(root, `p-${i}`)] = { history: Array.from({ length: 40 }, () => ({ display: `y "${i}" \\ ${"y".repeat(100)}` })) };
      return JSON.stringify({ mcpServers: { user: stdio("u") }, projects, tipsHistory: { a: 1 } }, null, 2);
    };
    const faults: Array<[string, (t: string) => string | Uint8Array]> = [
      ["cut short", (t) => t.slice(0, -200)],
      ["cut inside the last project's history", (t) => t.slice(0, t.lastIndexOf('"display"') + 20)],
      ["another session's write appended", (t) => `${t}\n  "numStartups": 3\n}`],
      ["an unknown escape in another project's history", (t) => t.replace(/\\\\ y/, "\\q y")],
      ["a raw newline in another project's history", (t) => t.replace(/\\\\ y/, "\n y")],
      [
        "a zero-filled page inside other projects' history",
        (t) => {
          const b = new TextEncoder().encode(t);
          const at = t.indexOf('"display"', Math.floor(t.length / 2)) + 12;
          return b.fill(0, at, at + 40);
        },
      ],
      ["a missing comma between projects", (t) => t.replace(/\n    },\n    "/, '\n    }\n    "')],
    ];
    test.each(faults)("%s: a problem with where, no servers from it, the rest read", (_what, breakIt) => {
      write(join(cwd, ".mcp.json"), { mcpServers: { p: stdio("p-cmd") } });
      const f = join(home, ".claude.json");
      const results = [400, 2].map((bulk) => {
        const broken = breakIt(text(bulk));
        writeFileSync(f, broken);
        if (bulk === 400) expect(Bun.file(f).size).toBeGreaterThan(PRUNED_READ_FROM_BYTES);
        return discover();
      });
      for (const d of results) {
        expect(d.servers.map((s) => [s.name, s.trust.state])).toEqual([["p", "needs-approval"]]);
        expect(d.problems.map(formatProblem)[0]).toMatch(
          new RegExp(`^${f.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: invalid JSON at line \\d+, column \\d+`),
        );
      }
    });
  });

  // 1Password mounts .env files as named pipes and asks the user before each read; a read at discovery
  // held the bridge's start (and `servers`) until something wrote to it. A writer 3 s later keeps a
  // regression from hanging the suite: it would show as a slow discovery that read the secret.
  test("an envFile that is a named pipe is not read at discovery: it is left for the server's start", async () => {
    const fifo = join(root, "secrets.env");
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    const writer = Bun.spawn(["sh", "-c", `sleep 3; printf 'TOKEN=late\\n' > '${fifo}'`]);
    try {
      write(join(home, ".cursor", "mcp.json"), {
        mcpServers: { vault: { command: "node", args: ["v.js"], envFile: fifo, env: { A: "1" } } },
      });
      const t0 = performance.now();
      const d = discover();
      expect(performance.now() - t0).toBeLessThan(2_000);
      const s = byName(d, "vault");
      expect(s.transport).toEqual({ type: "stdio", command: "node", args: ["v.js"], env: { A: "1" }, envPipe: fifo });
      expect(s.needs).toEqual([]);
      expect(s.notes).toContain(`envFile ${fifo} is a named pipe: it is read when the server starts, not before`);
    } finally {
      writer.kill(9);
    }
  });

  test("a config file or a {file:...} value that is a named pipe is reported, not read", () => {
    const fifo = join(home, ".cursor", "mcp.json");
    mkdirSync(dirname(fifo), { recursive: true });
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    const token = join(root, "token");
    expect(Bun.spawnSync(["mkfifo", token]).exitCode).toBe(0);
    const writer = Bun.spawn(["sh", "-c", `sleep 3; echo '{}' > '${fifo}'; echo late > '${token}'`]);
    try {
      write(join(home, ".config", "opencode", "opencode.json"), {
        mcp: { remote: { type: "remote", url: "https://x.example/mcp", headers: { Authorization: `{file:${token}}` } } },
      });
      const t0 = performance.now();
      const d = discover();
      expect(performance.now() - t0).toBeLessThan(2_000);
      expect(d.problems.map(formatProblem)).toContain(
        `${fifo}: is a named pipe, not a file: not read (a read would wait for whatever writes to it)`,
      );
      expect(byName(d, "remote").needs.map((n) => n.why)).toEqual([
        `cannot read ${token}: it is a named pipe, not a file, and is not read when the bridge starts`,
      ]);
    } finally {
      writer.kill(9);
    }
  });

  test("Claude Desktop config on linux, darwin and win32", () => {
    const linux = write(join(home, ".config/Claude/claude_desktop_config.json"), { mcpServers: { lin: stdio("l") } });
    const mac = write(join(home, "Library/Application Support/Claude/claude_desktop_config.json"), {
      mcpServers: { mac: stdio("m") },
    });
    const appData = join(root, "appdata");
    const win = write(join(appData, "Claude/claude_desktop_config.json"), { mcpServers: { win: stdio("w") } });

    const l = discover({}, { platform: "linux" });
    expect(l.servers.map((s) => s.name)).toEqual(["lin"]);
    expect(l.servers[0]!.source).toBe(linux);
    const m = discover({}, { platform: "darwin" });
    expect(m.servers.map((s) => s.name)).toEqual(["mac"]);
    expect(m.servers[0]!.source).toBe(mac);
    expect(m.looked.map((l) => l.path)).toContain(mac);
    const w = discover({ APPDATA: appData }, { platform: "win32" });
    expect(w.servers.map((s) => s.name)).toEqual(["win"]);
    expect(w.servers[0]!.source).toBe(win);
  });

  test("mcpServers in ~/.claude/settings.json or ~/.claude/mcp.json are not read (Claude Code does not), and say so", () => {
    const st = write(join(home, ".claude/settings.json"), { mcpServers: { st: stdio("st") } });
    write(join(home, ".claude/mcp.json"), { theme: "dark" });
    const d = discover();
    expect(d.servers).toEqual([]);
    expect(d.looked.find((l) => l.path === st && l.status === "ignored")?.note).toContain("claude mcp add --scope user");
    expect(d.looked.some((l) => l.path === join(home, ".claude/mcp.json") && l.status === "ignored")).toBe(false);
  });

  test("./.vscode/mcp.json: servers key, explicit types, inputs ignored, JSONC", () => {
    const f = write(
      join(cwd, ".vscode/mcp.json"),
      `{
  // VS Code writes comments and trailing commas
  "inputs": [{ "type": "promptString", "id": "token", "description": "Token", "password": true }],
  "servers": {
    "local": { "type": "stdio", "command": "node", "args": ["\${workspaceFolder}/server.js"], },
    "remote": { "type": "http", "url": "https://api.example.com/mcp", "headers": { "X-Key": "\${env:API_KEY}" } },
    "legacy": { "type": "sse", "url": "http://localhost:8080/sse" },
  },
}`,
    );
    const d = discover({ API_KEY: "k-123" });
    expect(d.problems).toEqual([]);
    expect(d.servers.map((s) => s.name)).toEqual(["local", "remote", "legacy"]);
    expect(byName(d, "local").transport).toEqual({ type: "stdio", command: "node", args: [`${cwd}/server.js`], env: {} });
    expect(byName(d, "remote").transport).toEqual({
      type: "http",
      url: "https://api.example.com/mcp",
      headers: { "X-Key": "k-123" },
    });
    expect(byName(d, "legacy").transport).toEqual({ type: "sse", url: "http://localhost:8080/sse", headers: {} });
    expect(byName(d, "legacy").source).toBe(f);
  });

  test("VS Code ${input:...} is listed as a value to supply, not rejected and not passed through", () => {
    write(join(cwd, ".vscode/mcp.json"), {
      servers: { gh: { type: "http", url: "https://x.example/mcp", headers: { Authorization: "Bearer ${input:token}" } } },
    });
    const d = discover();
    expect(d.problems).toEqual([]);
    expect(byName(d, "gh").needs).toEqual([
      {
        what: "${input:token}",
        at: "servers.gh.headers.Authorization",
        why: "VS Code prompts for it and keeps the answer in its own secret storage",
        supply: expect.stringContaining("MCP_BRIDGE_INPUT_TOKEN"),
      },
    ]);
    expect(byName(discover({ MCP_BRIDGE_INPUT_TOKEN: "t0k" }), "gh").transport).toMatchObject({ headers: { Authorization: "Bearer t0k" } });
  });

  test("Cursor: ./.cursor/mcp.json beats ~/.cursor/mcp.json", () => {
    const g = write(join(home, ".cursor/mcp.json"), { mcpServers: { cg: stdio("g"), dup: stdio("global") } });
    const p = write(join(cwd, ".cursor/mcp.json"), { mcpServers: { cp: { url: "http://localhost:3000/mcp" }, dup: stdio("proj") } });
    const d = discover();
    expect(d.servers.map((s) => s.name)).toEqual(["cp", "dup", "cg"]);
    expect(byName(d, "dup").source).toBe(p);
    expect(byName(d, "dup").shadowed).toEqual([g]);
    expect(byName(d, "cp").transport).toEqual({ type: "http", url: "http://localhost:3000/mcp", headers: {} });
  });

  test("a file reached twice (cwd === home) is read once and does not shadow itself", () => {
    write(join(home, ".cursor/mcp.json"), { mcpServers: { only: stdio("o") } });
    const d = discoverServers({ env: {}, home, cwd: home, platform: "linux" });
    expect(d.servers).toHaveLength(1);
    expect(d.servers[0]!.shadowed).toEqual([]);
  });
});

describe("precedence", () => {
  test("earlier sources win; later definitions are listed in shadowed, in order", () => {
    const bridge = write(join(root, "bridge.json"), { mcpServers: { github: stdio("gh-bridge") } });
    const mcps = write(join(home, "MCPs/gh.json"), { mcpServers: { github: stdio("gh-mcps"), fs: stdio("fs") } });
    const project = write(join(cwd, ".mcp.json"), { mcpServers: { github: stdio("gh-project"), fs: stdio("fs2") } });
    const claude = write(join(home, ".claude.json"), { mcpServers: { github: { type: "http", url: "https://gh.example/mcp" } } });
    const desktop = write(join(home, ".config/Claude/claude_desktop_config.json"), { mcpServers: { github: stdio("d") } });
    const vscode = write(join(cwd, ".vscode/mcp.json"), { servers: { github: { type: "stdio", command: "v" } } });
    const cursor = write(join(cwd, ".cursor/mcp.json"), { mcpServers: { github: stdio("c") } });

    const d = discover({ MCP_BRIDGE_CONFIG: bridge });
    expect(d.problems).toEqual([]);
    const gh = byName(d, "github");
    expect(gh.source).toBe(bridge);
    expect(gh.transport).toMatchObject({ command: "gh-bridge" });
    expect(gh.shadowed).toEqual([mcps, project, claude, desktop, vscode, cursor]);
    expect(byName(d, "fs").source).toBe(mcps);
    expect(byName(d, "fs").shadowed).toEqual([project]);

    const without = discover();
    expect(byName(without, "github").source).toBe(mcps);
  });
});

describe("variables", () => {
  test("${VAR}, ${env:VAR} and ${VAR:-default} in command, args, env, cwd, url, headers", () => {
    write(join(home, "MCPs/vars.json"), {
      mcpServers: {
        local: {
          command: "${TOOLS}/bin/server",
          args: ["--token=${TOKEN}", "${env:TOKEN}", "${MISSING:-fallback}", "literal $TOKEN"],
          env: { API_KEY: "${TOKEN}", MIXED: "a-${env:TOKEN}-b" },
          cwd: "${TOOLS}/work",
        },
        remote: { url: "https://${HOST}/mcp", headers: { Authorization: "Bearer ${env:TOKEN}" } },
      },
    });
    const d = discover({ TOKEN: "s3cret", TOOLS: "/opt/tools", HOST: "mcp.example.com" });
    expect(d.problems).toEqual([]);
    expect(byName(d, "local").transport).toEqual({
      type: "stdio",
      command: "/opt/tools/bin/server",
      args: ["--token=s3cret", "s3cret", "fallback", "literal $TOKEN"],
      env: { API_KEY: "s3cret", MIXED: "a-s3cret-b" },
      cwd: "/opt/tools/work",
    });
    expect(byName(d, "remote").transport).toEqual({
      type: "http",
      url: "https://mcp.example.com/mcp",
      headers: { Authorization: "Bearer s3cret" },
    });
  });

  test("Claude Code keeps an unset ${VAR} as written, with a warning, as it does itself", () => {
    write(join(cwd, ".mcp.json"), { mcpServers: { github: { command: "gh-mcp", env: { GITHUB_TOKEN: "${GITHUB_TOKEN}" } } } });
    const gh = byName(discover({}), "github");
    expect(gh.transport).toMatchObject({ env: { GITHUB_TOKEN: "${GITHUB_TOKEN}" } });
    expect(gh.notes[0]).toStartWith("mcpServers.github.env.GITHUB_TOKEN: environment variable GITHUB_TOKEN is not set");
  });

  test("in our own files an undefined variable skips that entry with a problem naming file, path and variable", () => {
    const f = write(join(home, "MCPs", "x.json"), {
      mcpServers: {
        github: { command: "gh-mcp", env: { GITHUB_TOKEN: "${GITHUB_TOKEN}" } },
        other: { command: "ok" },
      },
    });
    const d = discover({});
    expect(d.servers.map((s) => s.name)).toEqual(["other"]);
    expect(d.problems).toHaveLength(1);
    const p = d.problems[0]!;
    expect(p.file).toBe(f);
    expect(p.path).toBe("mcpServers.github.env.GITHUB_TOKEN");
    expect(p.message).toContain("GITHUB_TOKEN");
    expect(formatProblem(p)).toStartWith(`${f}: mcpServers.github.env.GITHUB_TOKEN: `);
  });

  test("~ expands at the start of command and cwd; relative cwd resolves against the bridge cwd", () => {
    write(join(home, "MCPs/t.json"), {
      mcpServers: {
        a: { command: "~/bin/srv", args: ["~/not-expanded"], cwd: "~/work" },
        b: { command: "srv", cwd: "sub/dir" },
      },
    });
    const d = discover();
    expect(byName(d, "a").transport).toEqual({
      type: "stdio",
      command: join(home, "bin/srv"),
      args: ["~/not-expanded"],
      env: {},
      cwd: join(home, "work"),
    });
    expect(byName(d, "b").transport).toMatchObject({ cwd: join(cwd, "sub/dir") });
  });
});

describe("broken files", () => {
  test("bad JSON: problem names the file and the line/column; other files still load", () => {
    const bad = write(join(home, "MCPs/a-bad.json"), '{\n  "mcpServers": {\n    "x": { "command": "x" }\n    "y": {}\n  }\n}\n');
    write(join(home, "MCPs/b-good.json"), { mcpServers: { good: stdio("g") } });
    const d = discover();
    expect(d.servers.map((s) => s.name)).toEqual(["good"]);
    expect(d.problems).toHaveLength(1);
    expect(d.problems[0]!.file).toBe(bad);
    expect(d.problems[0]!.message).toContain("line 4, column 5");
    expect(formatProblem(d.problems[0]!)).toBe(
      `${bad}: invalid JSON at line 4, column 5 (in mcpServers.y): expected ',' between values (or a closing bracket), found '"y"'`,
    );
  });

  test("truncated and empty files", () => {
    const t = write(join(cwd, ".mcp.json"), '{"mcpServers": {"a": {"command": "x"');
    const e = write(join(home, ".cursor/mcp.json"), "");
    const d = discover();
    expect(d.problems.map((p) => p.file)).toEqual([t, e]);
    expect(d.problems[0]!.message).toContain("line 1, column 37");
    expect(d.problems[1]!.message).toBe("the file is empty; expected a JSON object");
  });

  test("wrong types are reported with the JSON path", () => {
    const f = write(join(cwd, ".mcp.json"), {
      mcpServers: { github: { command: "gh", args: ["a", "b", 3], env: { N: 1 } } },
    });
    const d = discover();
    expect(d.servers).toEqual([]);
    expect(d.problems.map(formatProblem)).toEqual([
      `${f}: mcpServers.github.args[2]: expected string, received number`,
      `${f}: mcpServers.github.env.N: expected string, received number`,
    ]);
  });

  test("a bad entry does not sink its siblings", () => {
    const f = write(join(cwd, ".mcp.json"), {
      mcpServers: {
        good1: stdio("one"),
        notObject: "npx something",
        noCommand: { args: ["x"] },
        badType: { type: "websocket", url: "ws://x" },
        emptyCmd: { command: "" },
        badUrl: { type: "http", url: "not a url" },
        "weird.name": { command: 5 },
        good2: { type: "http", url: "https://ok.example/mcp" },
        urlNoType: { url: "https://needs-type.example/mcp" },
      },
    });
    const d = discover();
    expect(d.servers.map((s) => s.name)).toEqual(["good1", "good2"]);
    const msgs = d.problems.map(formatProblem);
    expect(msgs).toEqual([
      `${f}: mcpServers.notObject: expected object, received string`,
      `${f}: mcpServers.noCommand: expected "command" (stdio server) or "url" (remote server)`,
      `${f}: mcpServers.badType.type: unknown type "websocket"; expected one of stdio, http, streamable-http, streamableHttp, streamable_http, sse`,
      `${f}: mcpServers.emptyCmd.command: must not be empty`,
      `${f}: mcpServers["weird.name"].command: expected string, received number`,
      `${f}: mcpServers.urlNoType: "url" without "type": the client skips it (Claude Code 2.1: "has a url but no type"); add "type": "http" (or "sse")`,
      `${f}: mcpServers.badUrl.url: not a valid URL: "not a url"`,
    ]);
  });

  test("wrong top-level shapes", () => {
    const arr = write(join(cwd, ".mcp.json"), [1, 2]);
    const wrong = write(join(home, ".cursor/mcp.json"), { mcpServers: ["x"], servers: { s: stdio("s") } });
    write(join(cwd, ".vscode/mcp.json"), { servers: { s: stdio("s") } });
    const d = discover();
    expect(d.servers.map((s) => s.name)).toEqual(["s"]);
    expect(d.problems.map(formatProblem)).toEqual([
      `${arr}: expected an object at the top level, received array`,
      `${wrong}: mcpServers: expected object, received array`,
    ]);
  });

  test("missing files are skipped silently", () => {
    write(join(home, "MCPs", "sub.json", "x.json"), {}); // a folder named *.json is ignored
    expect(discover().problems).toEqual([]);
  });
});

describe("self-reference", () => {
  const forms: Record<string, unknown> = {
    bin: { command: "mcp-code-exec" },
    binPath: { command: "/usr/local/bin/mcp-code-exec", args: ["--stdio"] },
    exe: { command: "C:\\Tools\\mcp-code-exec.exe" },
    npx: { command: "npx", args: ["-y", "mcp-code-exec@latest"] },
    bunx: { command: "bunx", args: ["mcp-code-exec"] },
    dist: { command: "node", args: ["/home/me/src/bridge/dist/mcp-code-exec"] },
    denoNpm: { command: "deno", args: ["run", "-A", "npm:mcp-code-exec"] },
  };

  test("every form is skipped with a reason", () => {
    const f = write(join(home, "MCPs/self.json"), {
      mcpServers: {
        ...forms,
        similar: { command: "npx", args: ["-y", "mcp-code-execution-server"] },
      },
    });
    const d = discover();
    expect(d.servers.map((s) => s.name)).toEqual(["similar"]);
    expect(d.skipped.map((s) => s.name)).toEqual(Object.keys(forms));
    for (const s of d.skipped) {
      expect(s.source).toBe(f);
      expect(s.reason).toContain("MCP_BRIDGE_ALLOW_SELF_SERVER");
    }
  });

  test("allowed with MCP_BRIDGE_ALLOW_SELF_SERVER=1", () => {
    write(join(home, "MCPs/self.json"), { mcpServers: forms });
    const d = discover({ MCP_BRIDGE_ALLOW_SELF_SERVER: "1" });
    expect(d.skipped).toEqual([]);
    expect(d.servers.map((s) => s.name)).toEqual(Object.keys(forms));
  });

  test("selfPaths matches the running binary exactly", () => {
    const self = write(join(root, "opt/bridge/main.js"), "// bridge");
    write(join(home, "MCPs/self.json"), {
      mcpServers: {
        mine: { command: "node", args: [self] },
        relative: { command: "node", args: ["../opt/bridge/main.js"] },
        notMine: { command: "node", args: [join(root, "opt/other/main.js")] },
      },
    });
    const d = discover({}, { selfPaths: [self] });
    expect(d.servers.map((s) => s.name)).toEqual(["notMine"]);
    expect(d.skipped.map((s) => s.name)).toEqual(["mine", "relative"]);
  });

  test("a directory named mcp-code-exec passed as an argument is not a self-reference", () => {
    const checkout = join(root, "src/mcp-code-exec");
    mkdirSync(checkout, { recursive: true });
    write(join(home, "MCPs/fs.json"), {
      mcpServers: { fs: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", checkout] } },
    });
    const d = discover();
    expect(d.skipped).toEqual([]);
    expect(d.servers.map((s) => s.name)).toEqual(["fs"]);
  });
});

describe("aliases", () => {
  test("toPythonAlias", () => {
    expect(toPythonAlias("github")).toBe("github");
    expect(toPythonAlias("My-Server")).toBe("my_server");
    expect(toPythonAlias("  weird..name!!  ")).toBe("weird_name");
    expect(toPythonAlias("@scope/pkg--x")).toBe("scope_pkg_x");
    expect(toPythonAlias("1password")).toBe("_1password");
    expect(toPythonAlias("class")).toBe("class_");
    expect(toPythonAlias("Import")).toBe("import_");
    expect(toPythonAlias("None")).toBe("none");
    expect(toPythonAlias("---")).toBe("server");
    expect(toPythonAlias("日本")).toBe("server");
  });

  test("collisions get _2, _3 in discovery order without stealing a natural alias", () => {
    write(join(home, "MCPs/a.json"), {
      mcpServers: { "my-server": stdio("1"), "My Server": stdio("2"), my_server_2: stdio("3"), "my.server": stdio("4") },
    });
    write(join(cwd, ".mcp.json"), { mcpServers: { lambda: stdio("5"), "9lives": stdio("6") } });
    const d = discover();
    expect(d.servers.map((s) => [s.name, s.alias])).toEqual([
      ["my-server", "my_server"],
      ["My Server", "my_server_3"],
      ["my_server_2", "my_server_2"],
      ["my.server", "my_server_4"],
      ["lambda", "lambda_"],
      ["9lives", "_9lives"],
    ]);
  });
});

describe("disabled entries", () => {
  test("are skipped with a reason and turn off the same name in later sources", () => {
    const mcps = write(join(home, "MCPs/a.json"), {
      mcpServers: {
        off: { command: "x", disabled: true },
        brokenButOff: { disabled: true, args: 5 },
        on: { command: "y", disabled: false },
      },
    });
    const cursor = write(join(home, ".cursor/mcp.json"), { mcpServers: { off: stdio("z") } });
    const d = discover();
    expect(d.problems).toEqual([]);
    expect(d.servers.map((s) => s.name)).toEqual(["on"]);
    expect(d.skipped).toEqual([
      { name: "off", source: mcps, reason: 'disabled ("disabled": true)', client: "bridge", scope: "user" },
      { name: "brokenButOff", source: mcps, reason: 'disabled ("disabled": true)', client: "bridge", scope: "user" },
      { name: "off", source: cursor, reason: `turned off by ${mcps}`, client: "cursor", scope: "user" },
    ]);
  });
});

describe("configHash", () => {
  test("sha256 hex, independent of key order, sensitive to content", () => {
    write(join(home, "MCPs/a.json"), {
      mcpServers: {
        a: { command: "c", args: ["1"], env: { A: "1", B: "2" } },
        b: { env: { B: "2", A: "1" }, args: ["1"], command: "c" },
        c: { command: "c", args: ["2"], env: { A: "1", B: "2" } },
      },
    });
    const d = discover();
    const [a, b, c] = [byName(d, "a"), byName(d, "b"), byName(d, "c")];
    expect(a.configHash).toMatch(/^[0-9a-f]{64}$/);
    expect(a.configHash).toBe(b.configHash);
    expect(a.configHash).not.toBe(c.configHash);
  });
});
