/**
 * Every FAIL that doctor can print ends with a fix a user of the binary can run: our own commands, a
 * package name or a setting — never a path in our source tree, and never "run doctor".
 */
import { describe, expect, test } from "bun:test";
import docker from "../../adapters/docker.ts";
import nerdctl from "../../adapters/nerdctl.ts";
import podman from "../../adapters/podman.ts";
import podmanMachine from "../../adapters/podman-machine.ts";
import { verifyFlags } from "../../src/cli/doctor.ts";
import { loadConfig } from "../../src/config/env.ts";

const NOT_FOR_BINARY_USERS = /scripts\/|\bdoctor\b/;

/** What the probe would report from a sandbox whose engine ignored every hardening flag. */
const EVERYTHING_IGNORED = {
  uid: 0,
  gid: 0,
  cap_eff: "000001ffffffffff",
  no_new_privs: "0",
  seccomp: "0",
  root_writable: true,
  tmp_writable: false,
  interfaces: ["eth0", "lo"],
  network: "connected",
  memory_limit: "max",
  pids_limit: "max",
  cpu_max: "max 100000",
  tmp_bytes: 2 ** 40,
  shm_bytes: 2 ** 40,
  nofile: [1048576, 1048576] as [number, number],
  nproc: [999999, 999999] as [number, number],
  env: ["HOME", "AWS_SECRET_ACCESS_KEY"],
  unshare_errno: 0,
  ppid: 0,
  init_comm: "catatonit",
};

describe("doctor's fixes", () => {
  const config = loadConfig({}, "/home/u");

  test("a sandbox that ignored every flag fails every check, each with a fix a binary user can run", () => {
    const checks = verifyFlags(EVERYTHING_IGNORED, { config });
    const failed = checks.filter((c) => !c.ok);
    // One FAIL per flag; the ones that must not pass by accident are named.
    expect(failed.map((c) => c.name)).toEqual(
      expect.arrayContaining([
        "init (PID 1)",
        "unprivileged user",
        "no capabilities",
        "no-new-privileges",
        "seccomp",
        "seccomp profile",
        "read-only root",
        "writable /tmp tmpfs",
        "no network",
        "memory limit",
        "pids limit",
        "ulimits",
        "environment allow-list",
      ]),
    );
    for (const c of failed) {
      expect(c.fix, c.name).toBeString();
      expect(c.fix!, c.name).not.toMatch(NOT_FOR_BINARY_USERS);
    }
    expect(failed.find((c) => c.name === "environment allow-list")?.fix).toContain("AWS_SECRET_ACCESS_KEY");
  });

  test("a sandbox with its own init as PID 1 passes the init check and says no init helper is needed", () => {
    const init = verifyFlags({ ...EVERYTHING_IGNORED, ppid: 1, init_comm: "python3" }, { config }).find((c) => c.name === "init (PID 1)")!;
    expect(init.ok).toBe(true);
    expect(init.detail).toContain("no engine init helper (catatonit, tini) is needed");
  });

  test.each([
    ["podman", podman],
    ["docker", docker],
    ["nerdctl", nerdctl],
    ["podman-machine", podmanMachine],
  ] as const)("%s: a missing image is fixed with mcp-code-exec's own image commands", (_name, factory) => {
    const adapter = factory({ env: { PATH: "/nonexistent" } });
    for (const image of ["ghcr.io/mcp-code-exec/mcp-code-exec-sandbox:0.1.0", "python:3.13-slim"]) {
      const hint = adapter.imageHint(image);
      expect(hint).not.toMatch(NOT_FOR_BINARY_USERS);
      expect(hint).toContain(
        "`mcp-code-exec image build` (Linux: from Debian and PyPI, or with --offline from a local Debian mirror and wheelhouse)",
      );
      expect(hint).toContain("mcp-code-exec image load FILE");
      expect(hint).toContain("mcp-code-exec image pull");
    }
    expect(adapter.imageHint("python:3.13-slim")).toContain("mcp-code-exec image pull");
  });
});
