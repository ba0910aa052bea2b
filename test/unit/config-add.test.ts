/**
 * `config add` for every client: the entry lands in the client's own file, read back by that client's
 * reader; comments and the rest of the file stay; a backup is made; an existing entry needs --force.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { addToClient } from "../../src/cli/config-add.ts";
import { CLIENTS, TARGETS } from "../../src/cli/client-targets.ts";
import { discoverServers } from "../../src/config/servers.ts";

let root: string;
let home: string;
let cwd: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "config-add-"));
  home = join(root, "home");
  cwd = join(root, "project");
  mkdirSync(cwd, { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

// Not our binary's name, so discovery lists it instead of skipping it as a self-reference.
const launch = { command: "/opt/tools/code-exec-bridge", args: ["--stdio"] };
const ctx = () => ({ home, env: {}, platform: "linux" as const });
const fileOf = (c: (typeof CLIENTS)[number]) => TARGETS[c].file({ env: {}, home, platform: "linux" });
const discover = () =>
  discoverServers({
    env: { GEMINI_CLI_SYSTEM_SETTINGS_PATH: join(root, "none") },
    home,
    cwd,
    platform: "linux",
    managedDir: join(root, "none"),
  });

const EXISTING: Record<string, string> = {
  json: '{\n  // kept comment\n  "theme": "dark",\n  "KEY": {\n    "other": { "command": "other-cmd" }\n  }\n}\n',
  toml: '# kept comment\nmodel = "o4"\n\n[mcp_servers.other]\ncommand = "other-cmd"\n',
  yaml: "# kept comment\nGOOSE_PROVIDER: openai\nextensions:\n  other:\n    type: stdio\n    cmd: other-cmd\n    enabled: true\n",
  continue: "# kept comment\nname: cfg\nversion: 0.0.1\nschema: v1\nmcpServers:\n  - name: other\n    command: other-cmd\n",
};

describe("config add, for every client", () => {
  for (const client of CLIENTS) {
    test(client, () => {
      const t = TARGETS[client];
      const file = fileOf(client);
      mkdirSync(dirname(file), { recursive: true });
      let original =
        client === "continue"
          ? EXISTING.continue!
          : t.format === "json"
            ? EXISTING.json!.replace("KEY", t.path("x")[0]!)
            : EXISTING[t.format]!;
      if (client === "opencode") original = original.replace('{ "command": "other-cmd" }', '{ "type": "local", "command": ["other-cmd"] }');
      writeFileSync(file, original);

      const r = addToClient(client, "code-exec", launch, { MCP_BRIDGE_IMAGE: "img:1" }, ctx());
      expect(r).toMatchObject({ file, replaced: false });
      expect(readFileSync(r.backup!, "utf8")).toBe(original);
      const text = readFileSync(file, "utf8");
      expect(text).toContain("kept comment");
      expect(text).toContain("other-cmd");

      // Read back the way the client reads it.
      const d = discover();
      const ours = d.servers.find((s) => s.name === "code-exec");
      expect(d.problems).toEqual([]);
      expect(ours).toMatchObject({
        client,
        source: file,
        transport: { type: "stdio", command: launch.command, args: launch.args, env: { MCP_BRIDGE_IMAGE: "img:1" } },
      });
      expect(d.servers.find((s) => s.name === "other")?.client).toBe(client);

      expect(() => addToClient(client, "code-exec", launch, {}, ctx())).toThrow(`${file} already has a server named "code-exec"`);
      const again = addToClient(client, "code-exec", { command: "/opt/tools/v2", args: [] }, {}, { ...ctx(), force: true });
      expect(again.replaced).toBe(true);
      const replaced = discover().servers.find((s) => s.name === "code-exec");
      expect(replaced?.transport).toMatchObject({ command: "/opt/tools/v2", args: [] });
      expect(readFileSync(file, "utf8")).toContain("kept comment");
    });
  }

  test("a missing file is created; no backup is made", () => {
    const r = addToClient("cursor", "code-exec", launch, {}, ctx());
    expect(r.backup).toBeUndefined();
    expect(JSON.parse(readFileSync(r.file, "utf8"))).toEqual({
      mcpServers: { "code-exec": { command: launch.command, args: launch.args } },
    });
    expect(readdirSync(dirname(r.file))).toEqual(["mcp.json"]);
  });

  test("a broken file is left alone with a clear error", () => {
    const file = fileOf("codex");
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, "[mcp_servers.x\n");
    expect(() => addToClient("codex", "code-exec", launch, {}, ctx())).toThrow("fix it first");
    expect(readFileSync(file, "utf8")).toBe("[mcp_servers.x\n");
    expect(existsSync(`${file}.tmp-${process.pid}`)).toBe(false);
  });

  // stow, chezmoi (symlink mode), yadm and home-manager keep a client's file in the user's dotfiles and
  // link it into place: writing over the link would cut the file loose from them.
  test("a file that is a link to the user's dotfiles is written where it points; the link stays", () => {
    const file = fileOf("cursor");
    const kept = join(root, "dotfiles", "cursor", "mcp.json");
    mkdirSync(dirname(kept), { recursive: true });
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(kept, '{ "mcpServers": { "other": { "command": "other-cmd" } } }\n');
    symlinkSync(join("..", "..", "dotfiles", "cursor", "mcp.json"), file); // relative, as stow makes them
    const r = addToClient("cursor", "code-exec", launch, {}, ctx());
    expect(lstatSync(file).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readFileSync(kept, "utf8")).mcpServers).toEqual({
      other: { command: "other-cmd" },
      "code-exec": { command: launch.command, args: launch.args },
    });
    expect(readFileSync(r.backup!, "utf8")).toBe('{ "mcpServers": { "other": { "command": "other-cmd" } } }\n');
    expect(dirname(r.backup!)).toBe(dirname(file));
    expect(readdirSync(dirname(kept))).toEqual(["mcp.json"]);
  });
});
