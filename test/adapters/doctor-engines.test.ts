/** doctor's engine section: the selection order, and why each engine was skipped or failed. */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { engineChecks } from "../../src/cli/doctor-engines.ts";
import { engineEnv } from "../../src/engines/registry.ts";
import { fakeCli } from "./fakes.ts";
import { bridgeEnv, ENGINES, ROOT } from "../support/env.ts";

const DOCKER_OK = `echo '{"Server":{"Version":"99.0","ApiVersion":"1.0"},"Client":{"Version":"1"}}'`;

/** A PATH with nothing but these fake CLIs (shell builtins only). */
function onlyFakes(scripts: Record<string, string>): string {
  const dirs = Object.entries(scripts).map(([name, body]) => fakeCli(name, body).dir);
  return dirs.join(":");
}

describe("doctor: engines", () => {
  test("on this machine: the auto order, the engine used, and a reason for each skipped one", async () => {
    const { checks, chosen } = await engineChecks({}, { env: engineEnv(process.env) });
    expect(checks[0]).toEqual({
      name: "selection order",
      ok: true,
      detail: "podman, docker, nerdctl, podman-machine (auto: the first that answers is used)",
    });
    expect(checks.every((c) => c.ok)).toBe(true);
    expect(chosen?.adapter.name).toBe(ENGINES.includes("podman") ? "podman" : "docker");
    expect(checks.find((c) => c.name === "engine nerdctl")).toMatchObject({ skipped: true });
    expect(checks.find((c) => c.name === "engine nerdctl")?.detail).toStartWith("not here: nerdctl not found on PATH (looked in ");
    const machine = checks.find((c) => c.name === "engine podman-machine");
    expect(machine?.skipped).toBe(true);
    expect(machine?.detail).toMatch(/^not here: (podman machine is not available|no podman machine exists)/);
  });

  test("nothing answering: every engine skipped with its reason, and selection fails", async () => {
    const PATH = onlyFakes({
      docker: "echo 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?' >&2; exit 1",
    });
    const { checks, chosen } = await engineChecks({}, { env: { PATH } });
    expect(chosen).toBeUndefined();
    expect(checks.filter((c) => c.skipped).map((c) => c.name)).toEqual([
      "engine podman",
      "engine docker",
      "engine nerdctl",
      "engine podman-machine",
    ]);
    expect(checks.find((c) => c.name === "engine docker")?.detail).toContain("not answering");
    expect(checks.at(-1)).toMatchObject({ name: "selection", ok: false, detail: "no engine available" });
  });

  test("an installed engine that fails stops auto-selection, so it fails even when a later one works", async () => {
    const PATH = onlyFakes({ podman: "echo 'panic: storage corrupted' >&2; exit 3", docker: DOCKER_OK });
    const { checks, chosen } = await engineChecks({}, { env: { PATH } });
    expect(chosen).toBeUndefined();
    expect(checks.find((c) => c.name === "engine podman")).toMatchObject({ ok: false });
    expect(checks.find((c) => c.name === "engine podman")?.fix).toContain("MCP_BRIDGE_RUNTIME");
    expect(checks.find((c) => c.name === "engine docker")?.detail).toContain("available, not used: podman comes first");
    expect(checks.at(-1)?.detail).toContain("auto-selection stops at podman");
  });

  test("a pinned engine that is not here is a failure, not a skip", async () => {
    const PATH = onlyFakes({ docker: DOCKER_OK });
    const { checks } = await engineChecks({ engine: "nerdctl" }, { env: { PATH } });
    expect(checks[0]?.detail).toBe("nerdctl (MCP_BRIDGE_RUNTIME)");
    expect(checks.find((c) => c.name === "engine nerdctl")).toMatchObject({ ok: false });
    expect(checks.some((c) => c.name === "engine docker")).toBe(false);
  });

  test("`mcp-code-exec doctor` prints skip lines and still passes when an earlier engine works", async () => {
    const proc = Bun.spawn(["bun", join(ROOT, "src", "main.ts"), "doctor"], { env: bridgeEnv(), stdout: "pipe", stderr: "pipe" });
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    expect(out).toContain("ok    selection order: podman, docker, nerdctl, podman-machine (auto");
    expect(out).toContain("skip  engine nerdctl: not here: nerdctl not found on PATH");
    expect(out).toMatch(/skip {2}engine podman-machine: not here: /);
    expect(out).toContain("All checks passed.");
    expect(code).toBe(0);
  });
});
