import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_IMAGE, ENV_FAMILIES, ENV_VARS, loadConfig } from "../../src/config/env.ts";
import { VERSION } from "../../src/version.ts";
import { BridgeError } from "../../src/errors.ts";

const load = (env: Record<string, string>) => loadConfig(env, "/home/u");

describe("environment configuration", () => {
  test("defaults match the seed bridge's, but for the image: this release's batteries image, pulled when missing", () => {
    expect(DEFAULT_IMAGE).toBe(`ghcr.io/mcp-code-exec/mcp-code-exec-sandbox:${VERSION}`);
    const c = load({});
    expect(c).toMatchObject({
      image: DEFAULT_IMAGE,
      imageFallback: undefined,
      pull: "missing",
      pullTimeoutSec: 900,
      timeoutSec: 30,
      maxTimeoutSec: 120,
      memory: "512m",
      pids: 128,
      user: "65534:65534",
      idleTimeoutSec: 300,
      outputMode: "compact",
      logLevel: "INFO",
      outputCap: 65536,
      stateDir: "/home/u/.local/state/mcp-code-exec",
      engine: undefined,
      prewarm: true,
    });
  });

  test("units and spellings users write are accepted", () => {
    const c = load({
      MCP_BRIDGE_TIMEOUT: "90s",
      MCP_BRIDGE_MAX_TIMEOUT: "5m",
      MCP_BRIDGE_OUTPUT_CAP: "1k",
      MCP_BRIDGE_LOG_LEVEL: "warn",
      MCP_BRIDGE_OUTPUT_MODE: "JSON",
      MCP_BRIDGE_RUNTIME: "Docker",
      MCP_BRIDGE_PREWARM: "off",
      XDG_STATE_HOME: "/x",
    });
    expect(c).toMatchObject({
      timeoutSec: 90,
      maxTimeoutSec: 300,
      outputCap: 1024,
      logLevel: "WARNING",
      outputMode: "json",
      engine: "docker",
      prewarm: false,
      stateDir: "/x/mcp-code-exec",
    });
    expect(load({ MCP_BRIDGE_RUNTIME: "auto" }).engine).toBeUndefined();
  });

  test("every bad variable is named with its value in one error", () => {
    let err: unknown;
    try {
      load({ MCP_BRIDGE_TIMEOUT: "soon", MCP_BRIDGE_PIDS: "-3", MCP_BRIDGE_OUTPUT_MODE: "yaml", MCP_BRIDGE_CONTAINER_USER: "root" });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(BridgeError);
    const text = (err as BridgeError).render();
    expect(text).toContain('MCP_BRIDGE_TIMEOUT="soon"');
    expect(text).toContain('MCP_BRIDGE_PIDS="-3"');
    expect(text).toContain('MCP_BRIDGE_OUTPUT_MODE="yaml"');
    expect(text).toContain('MCP_BRIDGE_CONTAINER_USER="root"');
  });

  test("a default timeout above the maximum is refused; root is refused", () => {
    expect(() => load({ MCP_BRIDGE_TIMEOUT: "200" })).toThrow(/larger than MCP_BRIDGE_MAX_TIMEOUT/);
    expect(() => load({ MCP_BRIDGE_CONTAINER_USER: "0:0" })).toThrow(/refusing to run the sandbox as root/);
    expect(() => load({ MCP_BRIDGE_TIMEOUT: "0" })).toThrow(/greater than 0/);
  });

  test("blank values fall back to defaults", () => {
    expect(load({ MCP_BRIDGE_TIMEOUT: "  " }).timeoutSec).toBe(30);
  });
});

describe("one source for every setting", () => {
  test("docs/configuration.md's table of variables is the one the schema generates (bun scripts/config-reference.ts)", async () => {
    const { withEnvTable, CONFIG_DOC } = await import("../../scripts/config-reference.ts");
    const page = readFileSync(CONFIG_DOC, "utf8");
    expect(withEnvTable(page), "run `bun scripts/config-reference.ts` and commit docs/configuration.md").toBe(page);
  });

  test("every MCP_BRIDGE_ variable the code reads is in the schema", () => {
    const used = new Set<string>();
    const walk = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
    for (const dir of ["src", "adapters", "scripts"]) {
      for (const f of walk(join(import.meta.dir, "..", "..", dir)))
        for (const m of readFileSync(f, "utf8").matchAll(/MCP_BRIDGE_[A-Z_]+[A-Z]/g)) used.add(m[0]);
    }
    expect(
      [...used].filter((v) => !(v in ENV_VARS) && !Object.keys(ENV_FAMILIES).some((f) => v.startsWith(f) || `${v}_` === f)).sort(),
    ).toEqual([]);
  });

  test("a bad policy variable is refused at start like any other, named with its value", () => {
    expect(() => load({ MCP_BRIDGE_MAX_TOOL_CALLS: "lots" })).toThrow('MCP_BRIDGE_MAX_TOOL_CALLS="lots"');
  });
});
