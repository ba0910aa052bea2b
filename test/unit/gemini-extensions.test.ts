/**
 * Gemini CLI extensions' MCP servers (src/config/clients/gemini.ts) from the files Gemini CLI writes:
 * enablement rules per folder, linked and git-installed extensions, its security settings, and a
 * settings file's server winning a name. Git installs are written as Gemini CLI leaves them (fake: no
 * network to install from); the real `gemini extensions install`/`link` is
 * test/clients/gemini-extensions.test.ts.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { discoverServers, type Discovery } from "../../src/config/servers.ts";

let root: string;
let home: string;
let cwd: string;
let exts: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "gemini-ext-"));
  home = join(root, "home");
  cwd = join(root, "work", "app");
  exts = join(home, ".gemini", "extensions");
  mkdirSync(cwd, { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const write = (file: string, value: unknown) => {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(value, null, 2));
};
const discover = (): Discovery =>
  discoverServers({
    env: { GEMINI_CLI_SYSTEM_SETTINGS_PATH: join(root, "none") },
    home,
    cwd,
    platform: "linux",
    managedDir: join(root, "none"),
  });
const names = (d: Discovery) => d.servers.map((s) => s.name);

function extension(dir: string, name: string, servers: Record<string, unknown>, meta?: Record<string, unknown>) {
  write(join(exts, dir, "gemini-extension.json"), { name, version: "1.0.0", mcpServers: servers });
  if (meta) write(join(exts, dir, ".gemini-extension-install.json"), meta);
}

test("an installed extension's servers, with its variables expanded", () => {
  extension(
    "ops",
    "ops",
    { db: { command: "${extensionPath}${/}bin${/}db", args: ["--root", "${workspacePath}"], env: { T: "$HOME" } } },
    {
      source: "https://github.com/acme/ops",
      type: "git",
    },
  );
  const d = discover();
  expect(d.problems).toEqual([]);
  expect(d.servers[0]!.transport).toEqual({
    type: "stdio",
    command: join(exts, "ops", "bin", "db"),
    args: ["--root", cwd],
    env: { T: "$HOME" },
  });
  expect(d.servers[0]!.trust.state).toBe("trusted");
});

test("enablement: the last rule that matches the folder wins; `*` takes subfolders; on by default", () => {
  extension("ops", "ops", { db: { command: "db" } });
  const rules = (overrides: string[]) => write(join(exts, "extension-enablement.json"), { ops: { overrides } });
  rules([`!${root}/*`]);
  expect(names(discover())).toEqual([]);
  expect(discover().skipped[0]!.reason).toBe("extension ops is disabled in Gemini CLI for this folder (extension-enablement.json)");
  rules([`!${root}/*`, `${cwd}/`]);
  expect(names(discover())).toEqual(["db"]);
  rules([`!${join(root, "work")}/`]); // that folder only, not its subfolders
  expect(names(discover())).toEqual(["db"]);
  rules([`${root}/*`, `!${join(root, "work")}/*`]);
  expect(names(discover())).toEqual([]);
});

test("a settings file's server wins the name over an extension's", () => {
  extension("ops", "ops", { db: { command: "from-extension" } });
  write(join(home, ".gemini", "settings.json"), { mcpServers: { db: { command: "mine" } } });
  const d = discover();
  expect(d.servers.map((s) => [s.name, (s.transport as { command: string }).command])).toEqual([["db", "mine"]]);
});

test("security.blockGitExtensions and security.allowedExtensions are honoured", () => {
  extension("remote", "remote", { r: { command: "r" } }, { source: "https://github.com/acme/remote", type: "git" });
  extension("local", "local", { l: { command: "l" } }, { source: "/opt/ext/local", type: "local" });
  write(join(home, ".gemini", "settings.json"), { security: { blockGitExtensions: true } });
  expect(names(discover())).toEqual(["l"]);
  write(join(home, ".gemini", "settings.json"), { security: { allowedExtensions: ["^https://github\\.com/acme/"] } });
  const d = discover();
  expect(names(d)).toEqual(["r"]);
  expect(d.skipped.map((s) => s.reason)).toEqual(["extension local is not allowed by Gemini CLI's security.allowedExtensions"]);
});

test("a repository's settings cannot lift the user's block on extensions from remote sources", () => {
  extension("remote", "remote", { r: { command: "r" } }, { source: "https://github.com/acme/remote", type: "git" });
  write(join(home, ".gemini", "settings.json"), { security: { blockGitExtensions: true } });
  write(join(cwd, ".gemini", "settings.json"), { security: { blockGitExtensions: false, allowedExtensions: [".*"] } });
  expect(names(discover())).toEqual([]);
});

test("a linked extension runs from where it is linked", () => {
  const src = join(root, "src", "docs");
  write(join(src, "gemini-extension.json"), { name: "docs", mcpServers: { d: { command: "${extensionPath}/d" } } });
  write(join(exts, "docs", ".gemini-extension-install.json"), { source: src, type: "link" });
  const d = discover();
  expect(d.servers[0]!.source).toBe(join(src, "gemini-extension.json"));
  expect((d.servers[0]!.transport as { command: string }).command).toBe(join(src, "d"));
});

// Gemini CLI 0.61 consolidates these across its settings files: exclusions are a union, allowlists an
// intersection; so a repository's settings file can narrow what runs, never widen it.
test("mcp.excluded from every file counts; a server must be in every mcp.allowed that is defined", () => {
  write(join(home, ".gemini", "settings.json"), {
    mcp: { excluded: ["x"], allowed: ["a", "b", "x"] },
    mcpServers: { a: { command: "a" }, b: { command: "b" }, c: { command: "c" }, x: { command: "x" } },
  });
  write(join(cwd, ".gemini", "settings.json"), { mcp: { excluded: [], allowed: ["b", "c", "x"] } });
  const d = discover();
  expect(names(d)).toEqual(["b"]);
  expect(Object.fromEntries(d.skipped.map((s) => [s.name, s.reason]))).toEqual({
    a: "not in Gemini CLI's mcp.allowed",
    c: "not in Gemini CLI's mcp.allowed",
    x: "excluded in Gemini CLI (mcp.excluded)",
  });
});
