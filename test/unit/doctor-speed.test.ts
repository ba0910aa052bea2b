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

function fakeEngine(
  name: string,
  argv: (spec: ContainerSpec) => string[],
  ociRuntime = "runc",
  images: (image: string) => boolean = () => true,
): Selected {
  const adapter = {
    name,
    probe: async () => ({ engine: name, binary: `/fake/${name}`, version: "0", details: { ociRuntime } }),
    runArgv: async (spec: ContainerSpec) => argv(spec),
    imageExists: async (image: string) => images(image),
    remove: async () => {},
    removeSync: () => {},
    list: async () => [],
    imageHint: () => "",
  } satisfies RuntimeAdapter;
  return { adapter, info: { engine: name, binary: `/fake/${name}`, version: "0", details: { ociRuntime } } };
}

const sleep = (s: number) => () => ["/bin/sh", "-c", `sleep ${s}`];
// An offline image named apart from the default: the fallback a session uses where the default is missing.
const config = loadConfig(
  { MCP_BRIDGE_STATE_DIR: mkdtempSync(join(tmpdir(), "speed-")), MCP_BRIDGE_OFFLINE_IMAGE: "mcp-code-exec-sandbox:offline" },
  "/root",
);
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

  test("each engine runs the image a session would: the configured one, else the offline image; none is said", async () => {
    const ran: string[] = [];
    const offlineOnly = (image: string) => image === config.imageFallback;
    const a = fakeEngine("a", (spec) => (ran.push(`a ${spec.image}`), ["/bin/sh", "-c", "sleep 0.05"]), "runc", offlineOnly);
    const b = fakeEngine(
      "b",
      (spec) => (ran.push(`b ${spec.image}`), ["/bin/sh", "-c", "exit 0"]),
      "runc",
      () => false,
    );
    const [check] = await speedChecks({ chosen: a, available: [a, b], config, env });
    expect(config.imageFallback).toBeTruthy();
    expect(new Set(ran)).toEqual(new Set([`a ${config.imageFallback}`]));
    expect(check!.detail).toContain(`b: does not start here (no image: ${config.image} is not in b)`);
  });

  test("a start that fails the way docker's CLI does is reported by its error line, not the --help line", async () => {
    const out =
      "docker: Error response from daemon: OCI runtime create failed: permission denied.\nRun 'docker run --help' for more information";
    const chosen = fakeEngine("quick", sleep(0.05));
    const failing = fakeEngine("dockerish", () => ["/bin/sh", "-c", `printf '%s\\n' "${out.split("\n").join('" "')}" >&2; exit 126`]);
    const [check] = await speedChecks({ chosen, available: [chosen, failing], config, env });
    expect(check!.detail).toContain("dockerish: does not start here (OCI runtime create failed: permission denied.)");
  });
});
