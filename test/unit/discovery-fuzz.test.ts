/**
 * Every client's JSON files (the fixture world, plus Claude Code, Copilot CLI and Gemini CLI plugin and
 * extension files), with parts replaced by values of other shapes (null, numbers, strings, lists,
 * objects) in 1,500 seeded rounds: no reader may trip over a shape. Discovery runs before the
 * `initialize` answer, so a reader that throws would have stopped the bridge's start over one odd file;
 * a reader that throws now loses only its own client's servers (reported as a bug of ours), and this
 * suite fails on any such report.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { CLIENT_READERS } from "../../src/config/clients/index.ts";
import { discoverServers } from "../../src/config/servers.ts";
import { writeClientWorld } from "../support/client-fixtures.ts";

const root = mkdtempSync(join(tmpdir(), "discovery-fuzz-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const w = writeClientWorld(root);
const { home, cwd } = w;
const put = (f: string, v: unknown) => {
  mkdirSync(dirname(f), { recursive: true });
  writeFileSync(f, JSON.stringify(v));
};
const PLUGIN_FILES: Record<string, unknown> = {
  [join(home, ".claude", "settings.json")]: { enabledPlugins: { "notes@m": true } },
  [join(home, ".claude", "plugins", "installed_plugins.json")]: {
    version: 2,
    plugins: { "notes@m": [{ scope: "user", installPath: join(root, "pl") }] },
  },
  [join(home, ".claude", "plugins", "known_marketplaces.json")]: {
    m: { source: { source: "directory", path: join(root, "mk") }, installLocation: join(root, "mk") },
  },
  [join(root, "mk", ".claude-plugin", "marketplace.json")]: { name: "m", plugins: [{ name: "notes", source: "./p" }] },
  [join(root, "mk", "p", ".mcp.json")]: { s: { command: "x", args: ["${CLAUDE_PLUGIN_ROOT}"] } },
  [join(root, "mk", "p", ".claude-plugin", "plugin.json")]: { name: "notes", mcpServers: { t: { command: "y" } } },
  [join(home, ".copilot", "settings.json")]: {
    disabledMcpServers: ["a"],
    enabledPlugins: { "c@cm": true, "d@r": true },
    extraKnownMarketplaces: { cm: { source: { source: "directory", path: join(root, "cm") } } },
  },
  [join(home, ".copilot", "config.json")]: {
    trustedFolders: [cwd],
    installedPlugins: [
      { name: "d", marketplace: "r", cache_path: join(root, "dp"), enabled: true },
      { name: "e", marketplace: "", enabled: true },
    ],
  },
  [join(root, "cm", "marketplace.json")]: { name: "cm", plugins: [{ name: "c", source: "./c" }] },
  [join(root, "cm", "c", "plugin.json")]: { name: "c", mcpServers: { u: { command: "z" } } },
  [join(root, "dp", ".mcp.json")]: { mcpServers: { v: { command: "w" } } },
  [join(cwd, ".github", "copilot", "settings.json")]: { disabledMcpServers: ["b"], enabledPlugins: { "c@cm": false } },
  [join(home, ".gemini", "extensions", "ext1", "gemini-extension.json")]: {
    name: "ext1",
    version: "1",
    mcpServers: { g: { command: "g" } },
  },
  [join(home, ".gemini", "extensions", "extension-enablement.json")]: { ext1: { overrides: ["!/elsewhere/*"] } },
};
for (const [f, v] of Object.entries(PLUGIN_FILES)) put(f, v);
const strictJson = (f: string) => {
  try {
    JSON.parse(readFileSync(f, "utf8"));
    return true;
  } catch {
    return false; // JSONC (Zed, VS Code): left as written
  }
};
const files = [...Object.values(w.files).filter((f) => f.endsWith(".json") && strictJson(f)), ...Object.keys(PLUGIN_FILES)];
const originals = new Map(files.map((f) => [f, readFileSync(f, "utf8")]));
const discover = () => discoverServers({ env: w.env, home, cwd, platform: "linux", managedDir: join(root, "none") });

/** A small seeded generator (the same rounds every run). */
function generator(seed: number) {
  let s = seed;
  const rnd = () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
  const value = (d: number): unknown => {
    const makers = [
      () => null,
      () => 5,
      () => "s",
      () => true,
      () => "/tmp",
      () => [value(d + 1)],
      () => ({ a: value(d + 1), name: "x", source: value(d + 1), command: value(d + 1) }),
    ];
    return makers[Math.floor(rnd() * (d > 2 ? 5 : makers.length))]!();
  };
  const mutate = (v: unknown): unknown => {
    if (rnd() < 0.3 || v === null || typeof v !== "object") return rnd() < 0.5 ? value(0) : v;
    if (Array.isArray(v)) return v.map((x) => (rnd() < 0.7 ? mutate(x) : x));
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, rnd() < 0.7 ? mutate(x) : x]));
  };
  return { rnd, mutate };
}

test("the unmutated world loads every reader's servers with no problem", () => {
  const d = discover();
  expect(d.problems).toEqual([]);
  for (const name of ["plugin:notes:s", "plugin:notes:t", "g", "v", "cop-local", "codex-mem", "zed-new"])
    expect(d.servers.map((s) => s.name)).toContain(name);
});

test("1,500 rounds of files of the wrong shape: no reader trips over one, and what could not be read is reported", () => {
  const { rnd, mutate } = generator(20261127);
  const crashes: string[] = [];
  let reported = 0;
  for (let round = 0; round < 1500; round++) {
    for (const [f, text] of originals) writeFileSync(f, text);
    const victims = [files[Math.floor(rnd() * files.length)]!, files[Math.floor(rnd() * files.length)]!];
    for (const f of victims) writeFileSync(f, JSON.stringify(mutate(JSON.parse(originals.get(f)!))));
    try {
      const { problems } = discover();
      if (problems.length > 0) reported++;
      const bug = problems.find((p) => p.message.includes("this is a bug in mcp-code-exec"));
      if (bug) crashes.push(`${victims.map((f) => f.slice(root.length)).join(", ")}: ${bug.message}`);
    } catch (e) {
      crashes.push(`${victims.map((f) => f.slice(root.length)).join(", ")}: ${(e as Error).stack?.split("\n").slice(0, 3).join(" ")}`);
    }
  }
  expect(crashes.slice(0, 5)).toEqual([]);
  // The rounds reach the readers' checks: a good share of them breaks a file badly enough to be reported.
  expect(reported).toBeGreaterThan(300);
}, 600_000); // CPU-bound: 20-40 s at load 10 on 2 cores, 135 s at load 55; the suite's 120 s guard is for waits

test("a reader that throws anyway loses its own client's servers, reported with the file it last read; the others load", () => {
  for (const [f, text] of originals) writeFileSync(f, text);
  const reader = CLIENT_READERS.find((r) => r.id === "copilot-cli")!;
  const read = reader.read;
  reader.read = (ctx) => {
    read(ctx);
    throw new TypeError("x is not iterable");
  };
  try {
    const d = discover();
    expect(d.servers.map((s) => s.name)).not.toContain("cop-local");
    expect(d.servers.map((s) => s.name)).toContain("codex-mem");
    expect(d.problems).toEqual([
      {
        file: expect.stringContaining(join(root)),
        path: "",
        message:
          "GitHub Copilot CLI's configuration could not be read (x is not iterable), so its servers are left out; this is a bug in mcp-code-exec: please report it with the shape of this file",
      },
    ]);
  } finally {
    reader.read = read;
  }
});
