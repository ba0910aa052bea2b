import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BridgeError } from "../../src/errors.ts";
import { loadPolicy, RunSlots, serverRefusal, toolRefusal } from "../../src/policy.ts";

const home = () => mkdtempSync(join(tmpdir(), "policy-"));

describe("policy", () => {
  test("defaults allow everything, with limits", () => {
    const p = loadPolicy({}, home());
    expect(serverRefusal(p, "github")).toBeUndefined();
    expect(toolRefusal(p, "github", "delete_repo")).toBeUndefined();
    expect(p).toMatchObject({ maxToolCallsPerRun: 10000, maxConcurrentRuns: 4, maxCodeBytes: 1048576 });
  });

  test("deny wins over allow; globs match server/tool or a bare tool name on any server", () => {
    const p = loadPolicy(
      {
        MCP_BRIDGE_ALLOW_SERVERS: "git*,memory",
        MCP_BRIDGE_DENY_TOOLS: "*/delete_*,merge_pull_request",
        MCP_BRIDGE_DENY_SERVERS: "gitlab",
      },
      home(),
    );
    expect(serverRefusal(p, "github")).toBeUndefined();
    expect(serverRefusal(p, "gitlab")?.message).toBe(
      'refused by policy: server gitlab matches "gitlab" in denyServers (MCP_BRIDGE_DENY_SERVERS)',
    );
    expect(serverRefusal(p, "slack")?.message).toBe(
      "refused by policy: server slack is not in [git*, memory] of allowServers (MCP_BRIDGE_ALLOW_SERVERS)",
    );
    expect(toolRefusal(p, "github", "delete_repo")?.message).toBe(
      'refused by policy: tool github/delete_repo matches "*/delete_*" in denyTools (MCP_BRIDGE_DENY_TOOLS)',
    );
    expect(toolRefusal(p, "github", "merge_pull_request")?.message).toContain('"merge_pull_request" in denyTools');
    expect(toolRefusal(p, "github", "create_issue")).toBeUndefined();
    expect(toolRefusal(p, "slack", "post")?.message).toContain("server slack is not in [git*, memory] of allowServers");
  });

  test("the settings file's policy section applies; env wins per field; sources are named", () => {
    const h = home();
    mkdirSync(join(h, ".config", "mcp-code-exec"), { recursive: true });
    writeFileSync(
      join(h, ".config", "mcp-code-exec", "config.json"),
      JSON.stringify({ policy: { denyTools: ["rm*"], maxToolCallsPerRun: 5 } }),
    );
    const p = loadPolicy({ MCP_BRIDGE_MAX_TOOL_CALLS: "7" }, h);
    expect(p.maxToolCallsPerRun).toBe(7);
    expect(toolRefusal(p, "fs", "rm_rf")?.message).toContain(`(${join(h, ".config", "mcp-code-exec", "config.json")}: policy.denyTools)`);
  });

  test("a broken settings file or variable is a clear error", () => {
    const h = home();
    const file = join(h, "settings.json");
    writeFileSync(file, JSON.stringify({ policy: { maxToolCallsPerRun: -1, denyTool: ["x"] } }));
    expect(() => loadPolicy({ MCP_BRIDGE_SETTINGS: file }, h)).toThrow(BridgeError);
    expect(() => loadPolicy({ MCP_BRIDGE_SETTINGS: file }, h)).toThrow(/policy/);
    writeFileSync(file, "{nope");
    expect(() => loadPolicy({ MCP_BRIDGE_SETTINGS: file }, h)).toThrow(/not valid JSON/);
    expect(() => loadPolicy({ MCP_BRIDGE_SETTINGS: join(h, "missing.json") }, h)).toThrow(/cannot read settings file/);
    expect(() => loadPolicy({ MCP_BRIDGE_MAX_CONCURRENT_RUNS: "many" }, h)).toThrow(/MCP_BRIDGE_MAX_CONCURRENT_RUNS="many"/);
  });

  test("run slots", () => {
    const slots = new RunSlots(2);
    const a = slots.tryAcquire();
    const b = slots.tryAcquire();
    expect(slots.tryAcquire()).toBeUndefined();
    a!();
    a!();
    expect(slots.tryAcquire()).toBeDefined();
    expect(slots.tryAcquire()).toBeUndefined();
    b!();
  });
});
