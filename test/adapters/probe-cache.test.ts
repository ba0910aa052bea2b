/**
 * What a probe learned is reused by the next bridge while the engine is the same one, and a changed
 * engine is still noticed: a replaced binary is probed again, and a sandbox that fails to start on a
 * cached answer (a daemon that moved) is started again after a fresh probe. Real engines: podman
 * through a recording wrapper (every command goes to the real podman), and the real docker.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import podman from "../../adapters/podman.ts";
import { createApp } from "../../src/app.ts";
import { which } from "../../src/host/process.ts";
import { fileProbeCache, PROBE_CACHE_FILE, probeKey } from "../../src/engines/probe-cache.ts";
import { engineEnv } from "../../src/engines/registry.ts";
import { ENGINES, IMAGE } from "../support/env.ts";
import { fakeCli } from "./fakes.ts";

describe.skipIf(!ENGINES.includes("podman"))("podman probe cache (recording wrapper around the real podman)", () => {
  test("the next adapter reuses the probe; a replaced binary is probed again", async () => {
    const fake = fakeCli("podman", 'exec "$REAL" "$@"');
    const env = { ...engineEnv(process.env), PATH: fake.PATH };
    const cache = fileProbeCache(mkdtempSync(join(tmpdir(), "probe-state-")), "test");
    const infoCalls = () => fake.calls().filter((c) => c[0] === "info").length;

    const first = await podman({ env, probeCache: cache }).probe();
    expect(first.cached).toBeUndefined();
    expect(infoCalls()).toBe(1);

    const second = await podman({ env, probeCache: cache }).probe();
    expect(second).toEqual({ ...first, cached: true });
    expect(infoCalls()).toBe(1);

    // An upgrade: the binary at the same path is now another file.
    writeFileSync(fake.binary, `${readFileSync(fake.binary, "utf8")}# upgraded\n`);
    const third = await podman({ env, probeCache: cache }).probe();
    expect(third.cached).toBeUndefined();
    expect(infoCalls()).toBe(2);
  });

  test("forgetProbe drops the cached answer: the next probe asks podman", async () => {
    const fake = fakeCli("podman", 'exec "$REAL" "$@"');
    const env = { ...engineEnv(process.env), PATH: fake.PATH };
    const cache = fileProbeCache(mkdtempSync(join(tmpdir(), "probe-state-")), "test");
    await podman({ env, probeCache: cache }).probe();
    const adapter = podman({ env, probeCache: cache });
    expect((await adapter.probe()).cached).toBe(true);
    adapter.forgetProbe!();
    expect((await adapter.probe()).cached).toBeUndefined();
    expect(fake.calls().filter((c) => c[0] === "info").length).toBe(2);
  });
});

describe.skipIf(!ENGINES.includes("docker"))("docker: a cached endpoint that no longer answers", () => {
  test("the start fails on it, the engine is probed again, and the call runs", async () => {
    const home = mkdtempSync(join(tmpdir(), "probe-home-"));
    const stateDir = join(home, "state");
    const processEnv = {
      PATH: process.env.PATH,
      HOME: home,
      MCP_BRIDGE_STATE_DIR: stateDir,
      MCP_BRIDGE_RUNTIME: "docker",
      MCP_BRIDGE_IMAGE: IMAGE,
      MCP_BRIDGE_LOG_LEVEL: "ERROR",
    };
    const env = engineEnv(processEnv);
    const docker = which("docker", env.PATH)!;
    const key = probeKey("docker", docker, env)!;
    // What an earlier bridge would have cached had the daemon then listened on a socket that is gone now.
    const { version } = await import("../../package.json", { with: { type: "json" } }).then((m) => m.default);
    fileProbeCache(stateDir, version).set(key, {
      info: { engine: "docker", binary: docker, version: "0-stale", details: { endpoint: "unix:///nonexistent/docker.sock" } },
      connectFlags: ["--host", "unix:///nonexistent/docker.sock"],
    });
    const app = createApp(processEnv, home);
    const session = app.newSession();
    try {
      const r = await session.run({ code: "6 * 7" });
      expect(r.error).toBeUndefined();
      expect(r.value).toBe("42");
      const saved = JSON.parse(readFileSync(join(stateDir, PROBE_CACHE_FILE), "utf8")).entries[key];
      expect(saved.connectFlags).toBeUndefined();
      expect(saved.info.version).not.toBe("0-stale");
    } finally {
      await session.close();
      await app.close();
    }
  });
});
