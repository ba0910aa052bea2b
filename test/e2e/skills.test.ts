/**
 * Skills end to end: the model saves a function from sandbox code, a fresh interpreter (and a new
 * bridge) imports it, search finds it, MCP clients read it as skill://name, and the user reviews
 * and removes it with `mcp-code-exec skills`. Compiled bridge, real engine, real MCP client.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startBridge, type BridgeHandle } from "../support/bridge.ts";
import { BINARY } from "../support/binary.ts";
import { bridgeEnv, ENGINES } from "../support/env.ts";
import { run } from "../support/run.ts";

const engine = ENGINES[0]!;
const home = mkdtempSync(join(tmpdir(), "mcx-skills-home-"));
const state = mkdtempSync(join(tmpdir(), "mcx-skills-state-"));
const env = { HOME: home, MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_STATE_DIR: state };
let bridge: BridgeHandle;

beforeAll(async () => {
  bridge = await startBridge(env, { cwd: home });
}, 60_000);
afterAll(async () => {
  await bridge?.close();
});

const SAVE = `
def c_to_f(celsius):
    """Convert a temperature from Celsius to Fahrenheit."""
    return celsius * 9 / 5 + 32

from mcp import runtime
runtime.save_skill(c_to_f)
`;

describe(`skills on ${engine}`, () => {
  test("save_skill keeps a function's source and docstring in a file the user can read", async () => {
    const r = await bridge.run(SAVE);
    expect(r.isError, JSON.stringify(r.structured)).toBe(false);
    expect(String(r.structured.value)).toContain("saved skill 'c_to_f'");
    const file = readFileSync(join(state, "skills", "c_to_f.py"), "utf8");
    expect(file).toStartWith('"""Convert a temperature from Celsius to Fahrenheit."""\n\ndef c_to_f(celsius):');
  });

  test("a fresh interpreter imports it: from skills import name", async () => {
    const r = await bridge.run("from skills import c_to_f\nc_to_f(100)", { reset: true });
    expect(r.structured.value).toBe("212.0");
    const missing = await bridge.run("from skills import nothing_here");
    expect(missing.isError).toBe(true);
    expect((missing.structured.error as { message: string }).message).toContain('no skill named "nothing_here"; saved skills: c_to_f');
  });

  test("bad skills are refused with a reason", async () => {
    const r = await bridge.run("from mcp import runtime\nruntime.save_skill('x = 1', 'not_defined_here')");
    expect((r.structured.error as { message: string }).message).toContain("does not define 'not_defined_here'");
    const path = await bridge.run("runtime.save_skill('def f(): pass', '../escape')");
    expect((path.structured.error as { message: string }).message).toContain("a skill name is a Python identifier");
  });

  test("search finds skills next to tools", async () => {
    const r = await bridge.run(
      "from mcp import runtime\n[(h['server'], h['tool']) for h in runtime.search_tool_docs_sync('convert celsius to fahrenheit', limit=3)]",
    );
    expect(String(r.structured.value)).toStartWith("[('skills', 'c_to_f')");
  });

  test("MCP clients list and read skill://name", async () => {
    const list = await bridge.client.listResources();
    expect(list.resources.map((x) => x.uri)).toContain("skill://c_to_f");
    const read = await bridge.client.readResource({ uri: "skill://c_to_f" });
    expect((read.contents[0] as { text: string }).text).toContain("return celsius * 9 / 5 + 32");
  });

  test("mcp-code-exec skills list, show and rm", async () => {
    const list = await run([BINARY, "skills", "list"], { env: bridgeEnv(env) });
    expect(list.code).toBe(0);
    expect(list.stdout).toStartWith("c_to_f  Convert a temperature from Celsius to Fahrenheit.");
    const show = await run([BINARY, "skills", "show", "c_to_f"], { env: bridgeEnv(env) });
    expect(show.stdout).toContain("def c_to_f(celsius):");
    const rm = await run([BINARY, "skills", "rm", "c_to_f"], { env: bridgeEnv(env) });
    expect(rm.stdout).toBe("removed skill c_to_f\n");
    const gone = await run([BINARY, "skills", "show", "c_to_f"], { env: bridgeEnv(env) });
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('no skill named "c_to_f"');
    const after = await bridge.run("import sys\nsys.modules.pop('skills.c_to_f', None)\nfrom skills import c_to_f", { reset: true });
    expect(after.isError).toBe(true);
  });
});
