/**
 * doctor's start-time comparison on fake engines (no engine is needed to judge the arithmetic): each
 * "engine" starts a real process that sleeps for its start time, or fails the way an engine would.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ContainerSpec, RuntimeAdapter } from "../../adapters/types.ts";
import { speedChecks } from "../../src/cli/doctor-speed.ts";
import { loadConfig } from "../../src/config/env.ts";
import type { Selected } from "../../src/engines/registry.ts";

function fakeEngine(name: string, argv: (spec: ContainerSpec) => string[], ociRuntime = "runc"): Selected {
  const adapter = {
    name,
    probe: async () => ({ engine: name, binary: `/fake/${name}`, version: "0", details: { ociRuntime } }),
    runArgv: async (spec: ContainerSpec) => argv(spec),
    imageExists: async () => true,
    remove: async () => {},
    removeSync: () => {},
    list: async () => [],
    imageHint: () => "",
  } satisfies RuntimeAdapter;
  return { adapter, info: { engine: name, binary: `/fake/${name}`, version: "0", details: { ociRuntime } } };
}

const sleep = (s: number) => () => ["/bin/sh", "-c", `sleep ${s}`];
const config = loadConfig({ MCP_BRIDGE_STATE_DIR: mkdtempSync(join(tmpdir(), "speed-")) }, "/root");
const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };

describe("speedChecks (fake engines: processes that sleep or fail)", () => {
  test("a clearly faster engine gets a tip naming the setting; a failing one says why", async () => {
    const slow = fakeEngine("slowpoke", sleep(0.4));
    const fast = fakeEngine("quick", sleep(0.05));
    const broken = fakeEngine("broken", () => ["/bin/sh", "-c", "echo 'Error: cgroups in hybrid mode not supported' >&2; exit 126"]);
    const [check] = await speedChecks({ chosen: slow, available: [slow, fast, broken], config, env });
    expect(check!.ok).toBe(true);
    expect(check!.detail).toContain("slowpoke with runc (in use):");
    expect(check!.detail).toContain("broken: does not start here (cgroups in hybrid mode not supported)");
    expect(check!.tip).toStartWith("MCP_BRIDGE_RUNTIME=quick starts sandboxes");
  });

  test("no tip when what is in use is the fastest, and nothing at all with a single choice", async () => {
    const fast = fakeEngine("quick", sleep(0.05));
    const slow = fakeEngine("slowpoke", sleep(0.4));
    const [check] = await speedChecks({ chosen: fast, available: [fast, slow], config, env });
    expect(check!.tip).toBeUndefined();
    expect(await speedChecks({ chosen: fast, available: [fast], config, env })).toEqual([]);
  });
});
