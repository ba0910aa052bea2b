/**
 * Clients started from the Dock or a desktop launcher give MCP servers a minimal PATH. The compiled
 * binary, on this machine's real engines, must find them anyway: with PATH pointing at an empty folder,
 * with the macOS launcher PATH, and with docker's socket moved where a desktop engine keeps it.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startBridge } from "../support/bridge.ts";
import { BINARY } from "../support/binary.ts";
import { bridgeEnv, ENGINES } from "../support/env.ts";
import { run } from "../support/run.ts";

const EMPTY_DIR = mkdtempSync(join(tmpdir(), "mcx-empty-path-"));
const MACOS_LAUNCHER_PATH = "/usr/bin:/bin:/usr/sbin:/sbin";
const LAUNCHERS = [
  { name: "an empty folder", PATH: EMPTY_DIR },
  { name: "the macOS launcher PATH", PATH: MACOS_LAUNCHER_PATH },
];

const exec = (env: Record<string, string>, code = "6 * 7") =>
  run([BINARY, "exec", "-c", code], { cwd: EMPTY_DIR, env: bridgeEnv({ MCP_BRIDGE_STATE_DIR: join(EMPTY_DIR, "state"), ...env }) });

describe.each(ENGINES)("%s found without PATH's help", (engine) => {
  for (const launcher of LAUNCHERS) {
    test(`PATH is ${launcher.name}: exec runs on ${engine}`, async () => {
      const r = await exec({ PATH: launcher.PATH, MCP_BRIDGE_RUNTIME: engine });
      expect(r.stderr).toBe("");
      expect(r.stdout).toBe("[value] 42\n");
    });
  }

  test("PATH is an empty folder: run_python over MCP works, and doctor lists where it looked", async () => {
    const bridge = await startBridge({ PATH: EMPTY_DIR, MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_STATE_DIR: join(EMPTY_DIR, "state") });
    try {
      expect((await bridge.run("'found'")).structured.value).toBe("'found'");
    } finally {
      await bridge.close();
    }
    const d = await run([BINARY, "doctor", "--json"], {
      cwd: EMPTY_DIR,
      env: bridgeEnv({ PATH: EMPTY_DIR, MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_STATE_DIR: join(EMPTY_DIR, "state") }),
    });
    const report = JSON.parse(d.stdout) as { checks: Array<{ name: string; ok: boolean; detail: string }> };
    const where = report.checks.find((c) => c.name === "engine search path")!;
    for (const dir of [EMPTY_DIR, "/usr/local/bin", "/usr/bin", "/opt/podman/bin"]) expect(where.detail).toContain(dir);
    expect(report.checks.find((c) => c.name === `engine ${engine}`)).toMatchObject({ ok: true });
  });
});

test("auto-selection with PATH an empty folder picks the first engine of the auto order that is here", async () => {
  const r = await run([BINARY, "doctor", "--json"], {
    cwd: EMPTY_DIR,
    env: bridgeEnv({ PATH: EMPTY_DIR, MCP_BRIDGE_STATE_DIR: join(EMPTY_DIR, "state") }),
  });
  const report = JSON.parse(r.stdout) as { checks: Array<{ name: string; ok: boolean; detail: string }> };
  expect(report.checks.find((c) => c.name === "selection")?.detail).toContain(
    `would use ${ENGINES.includes("podman") ? "podman" : "docker"}`,
  );
});

describe.skipIf(!ENGINES.includes("docker") || process.getuid?.() !== 0)("docker's socket where a desktop engine keeps it", () => {
  test("the default socket is gone and no context is set: the OrbStack socket in HOME is found and used", async () => {
    const home = mkdtempSync(join(tmpdir(), "mcx-orb-"));
    const sock = join(home, ".orbstack", "run", "docker.sock");
    mkdirSync(join(home, ".orbstack", "run"), { recursive: true });
    writeFileSync(sock, "");
    // In a private mount namespace: the real socket appears at OrbStack's path, /run (and so
    // /var/run/docker.sock) is an empty tmpfs. The daemon itself is untouched.
    const script = `mount --bind /run/docker.sock '${sock}' && mount -t tmpfs none /run && exec "$@"`;
    const env = bridgeEnv({
      HOME: home,
      PATH: MACOS_LAUNCHER_PATH,
      MCP_BRIDGE_RUNTIME: "docker",
      MCP_BRIDGE_STATE_DIR: join(home, "state"),
    });
    const r = await run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", BINARY, "exec", "-c", "'via orbstack'"], {
      cwd: home,
      env,
    });
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("[value] 'via orbstack'\n");
    const d = await run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", BINARY, "doctor", "--json"], {
      cwd: home,
      env,
    });
    const engineCheck = (JSON.parse(d.stdout) as { checks: Array<{ name: string; detail: string }> }).checks.find(
      (c) => c.name === "engine docker",
    );
    expect(engineCheck?.detail).toContain(`endpoint=unix://${sock}`);
  });

  test("a context the user chose is respected: no socket of ours is tried behind their back", async () => {
    const home = mkdtempSync(join(tmpdir(), "mcx-ctx-"));
    mkdirSync(join(home, ".docker"), { recursive: true });
    writeFileSync(join(home, ".docker", "config.json"), JSON.stringify({ currentContext: "nowhere" }));
    const r = await exec({ HOME: home, MCP_BRIDGE_RUNTIME: "docker" });
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("nowhere");
  });
});

describe.skipIf(!ENGINES.includes("docker") || process.getuid?.() !== 0)("a user who may not use docker's socket", () => {
  test("the error says to join the docker group (or go rootless, or use podman), not to start a daemon that runs", async () => {
    // Run as `nobody` (not in the docker group), from a copy of the binary it may execute.
    const dir = mkdtempSync(join("/tmp", "mcx-nobody-"));
    try {
      chmodSync(dir, 0o755);
      copyFileSync(BINARY, join(dir, "mcp-code-exec"));
      chmodSync(join(dir, "mcp-code-exec"), 0o755);
      const r = await run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", join(dir, "mcp-code-exec"), "exec", "-c", "1"], {
        cwd: dir,
        env: bridgeEnv({ HOME: dir, MCP_BRIDGE_RUNTIME: "docker", MCP_BRIDGE_STATE_DIR: join(dir, "state") }),
      });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain("permission denied");
      expect(r.stderr).toContain("add it to the docker group");
      expect(r.stderr).not.toContain("start the Docker daemon");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
