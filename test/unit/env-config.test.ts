import { describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/config/env.ts";
import { BridgeError } from "../../src/errors.ts";

const load = (env: Record<string, string>) => loadConfig(env, "/home/u");

describe("environment configuration", () => {
  test("defaults match the seed bridge's", () => {
    const c = load({});
    expect(c).toMatchObject({
      image: "python:3.13-slim", timeoutSec: 30, maxTimeoutSec: 120, memory: "512m", pids: 128,
      user: "65534:65534", idleTimeoutSec: 300, outputMode: "compact", logLevel: "INFO", outputCap: 65536,
      stateDir: "/home/u/.local/state/mcp-code-exec", runtime: undefined, prewarm: true,
    });
  });

  test("units and spellings users write are accepted", () => {
    const c = load({ MCP_BRIDGE_TIMEOUT: "90s", MCP_BRIDGE_MAX_TIMEOUT: "5m", MCP_BRIDGE_OUTPUT_CAP: "1k", MCP_BRIDGE_LOG_LEVEL: "warn", MCP_BRIDGE_OUTPUT_MODE: "JSON", MCP_BRIDGE_RUNTIME: "Docker", MCP_BRIDGE_PREWARM: "off", XDG_STATE_HOME: "/x" });
    expect(c).toMatchObject({ timeoutSec: 90, maxTimeoutSec: 300, outputCap: 1024, logLevel: "WARNING", outputMode: "json", runtime: "docker", prewarm: false, stateDir: "/x/mcp-code-exec" });
    expect(load({ MCP_BRIDGE_RUNTIME: "auto" }).runtime).toBeUndefined();
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
