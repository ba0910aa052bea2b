import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BridgeError, EngineUnavailableError } from "../../src/errors.ts";
import { engineEnv, lazyEngine, selectEngine, type SelectionAttempt } from "../../src/engines/registry.ts";
import { dockerSocketCandidates, sessionRuntimeDir } from "../../src/engines/locations.ts";

/** A PATH holding only fake engine CLIs (tiny shell scripts), so selection can be tested in isolation. */
function fakePath(scripts: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "fake-engines-"));
  for (const [name, body] of Object.entries(scripts)) {
    const p = join(dir, name);
    writeFileSync(p, `#!/bin/sh\n${body}\n`);
    chmodSync(p, 0o755);
  }
  // Only the fakes: the real engines in /usr/bin must not be found.
  return dir;
}

describe("engine selection (fake engine CLIs on PATH)", () => {
  test("podman first, docker when podman is absent, with reasons recorded", async () => {
    const PATH = fakePath({ docker: `echo '{"Server":{"Version":"99.0","ApiVersion":"1.0"},"Client":{"Version":"1"}}'` });
    const attempts: SelectionAttempt[] = [];
    const { adapter, info } = await selectEngine(undefined, { env: { PATH } }, attempts);
    expect(adapter.name).toBe("docker");
    expect(info.version).toBe("99.0");
    expect(attempts[0]).toMatchObject({ engine: "podman", ok: false });
    expect(attempts[0]!.reason).toContain("podman not found on PATH");
  });

  test("a docker CLI whose daemon is down is skipped as unavailable", async () => {
    const PATH = fakePath({
      docker: "echo 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?' >&2; exit 1",
    });
    const err = await selectEngine(undefined, { env: { PATH } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BridgeError);
    expect((err as BridgeError).render()).toContain("no container engine found");
    expect((err as BridgeError).render()).toContain("not answering");
  });

  test("an engine that fails in an unexpected way is an error, not a silent skip", async () => {
    const PATH = fakePath({ podman: "echo 'panic: storage corrupted' >&2; exit 3", docker: "echo '{}'" });
    const err = await selectEngine(undefined, { env: { PATH } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BridgeError);
    expect(err).not.toBeInstanceOf(EngineUnavailableError);
    expect((err as BridgeError).render()).toContain("storage corrupted");
  });

  test("MCP_BRIDGE_RUNTIME pins the engine; an unknown name lists the known ones", async () => {
    const PATH = fakePath({ podman: `echo '{"version":{"Version":"5.0"},"host":{}}'` });
    const err = await selectEngine("docker", { env: { PATH } }).catch((e: unknown) => e);
    expect((err as BridgeError).render()).toContain("docker not found on PATH");
    const unknown = await selectEngine("lxc", { env: { PATH } }).catch((e: unknown) => e);
    expect((unknown as BridgeError).render()).toContain("podman, docker");
  });

  test("lazy selection probes once and remembers the winner", async () => {
    const dir = mkdtempSync(join(tmpdir(), "probe-count-"));
    const counter = join(dir, "count");
    const PATH = fakePath({ podman: `echo x >> ${counter}; echo '{"version":{"Version":"5.0"},"host":{}}'` });
    const get = lazyEngine(undefined, { env: { PATH } });
    const [a, b] = await Promise.all([get(), get()]);
    await get();
    expect(a.adapter).toBe(b.adapter);
    expect((await Bun.file(counter).text()).trim().split("\n").length).toBe(1);
  });

  test("the engine CLI gets only what it needs from the bridge's environment", () => {
    const env = engineEnv({ PATH: "/bin", HOME: "/h", DOCKER_HOST: "unix:///x", GITHUB_TOKEN: "secret", AWS_SECRET_ACCESS_KEY: "s" });
    const { PATH, ...rest } = env;
    expect(rest).toEqual({ HOME: "/h", DOCKER_HOST: "unix:///x" });
    // The user's PATH first, then where engine installers put their CLIs (desktop launchers' PATH is minimal).
    expect(PATH!.split(":")[0]).toBe("/bin");
    expect(PATH!.split(":")).toEqual(expect.arrayContaining(["/usr/local/bin", "/usr/bin", "/h/.local/bin", "/opt/podman/bin"]));
  });
});

describe("docker sockets tried when the CLI's default is gone", () => {
  test("a rootless dockerd's socket is found from XDG_RUNTIME_DIR, or from /run/user/<uid> where a client left the variable out", () => {
    expect(dockerSocketCandidates({ HOME: "/home/u", XDG_RUNTIME_DIR: "/run/user/1000" }, 1000)).toContain("/run/user/1000/docker.sock");
    const without = dockerSocketCandidates({ HOME: "/home/u" }, 1000);
    if (process.platform === "linux") expect(without).toContain("/run/user/1000/docker.sock");
    // root has no rootless dockerd of its own.
    expect(dockerSocketCandidates({ HOME: "/root" }, 0).some((p) => p.startsWith("/run/user/"))).toBe(false);
    expect(without).toContain("/home/u/.orbstack/run/docker.sock");
  });
});

describe("the engines' XDG_RUNTIME_DIR where a client left it out", () => {
  const dir = (uid: number) => ({ uid, isDirectory: () => true });
  test("the login session's /run/user/<uid> when it is the user's own folder; nothing otherwise", () => {
    if (process.platform !== "linux") return;
    expect(sessionRuntimeDir(1000, () => dir(1000))).toBe("/run/user/1000");
    expect(sessionRuntimeDir(1000, () => dir(0))).toBeUndefined(); // someone else's
    expect(sessionRuntimeDir(0, () => dir(0))).toBeUndefined(); // root
    expect(
      sessionRuntimeDir(1000, () => {
        throw Object.assign(new Error("gone"), { code: "ENOENT" });
      }),
    ).toBeUndefined();
  });
  test("a variable the client did pass is kept", () => {
    expect(engineEnv({ PATH: "/usr/bin", XDG_RUNTIME_DIR: "/custom/run" }).XDG_RUNTIME_DIR).toBe("/custom/run");
  });
});
