/**
 * nerdctl and podman machine cannot run here: the adapter contract runs against recorded-argument
 * fakes that hand `run` to the real podman (so the sandbox really starts), plus the exact command
 * lines each adapter builds.
 */
import { describe, expect, test } from "bun:test";
import nerdctl, { nerdctlRunFlags } from "../../adapters/nerdctl.ts";
import podmanMachine, { pickConnection, pickMachine } from "../../adapters/podman-machine.ts";
import { hardeningFlags } from "../../adapters/oci-flags.ts";
import type { AdapterLog } from "../../adapters/types.ts";
import { EngineUnavailableError } from "../../src/errors.ts";
import { engineEnv, selectEngine } from "../../src/engines/registry.ts";
import { ENGINES, IMAGE } from "../support/env.ts";
import { adapterContract, specFor } from "./contract.ts";
import { fakeCli, fakeNerdctl, fakePodmanMachine } from "./fakes.ts";

const HAS_PODMAN = ENGINES.includes("podman");
const envWith = (PATH: string) => ({ ...engineEnv(process.env), PATH });

/** The run argv docker-compatible engines share, for a spec without env or mounts (with or without --log-driver none). */
function expectedRun(spec: ReturnType<typeof specFor>, logDriver: boolean): string[] {
  return [
    // No --init: the entrypoint is its own PID 1 (entrypoint/init.py).
    "--name",
    spec.name,
    "--rm",
    "-i",
    "--pull",
    "never",
    "--network",
    "none",
    "--read-only",
    "--cap-drop",
    "ALL",
    "--security-opt",
    "no-new-privileges",
    "--user",
    "65534:65534",
    "--memory",
    "256m",
    "--memory-swap",
    "256m",
    "--pids-limit",
    "64",
    "--cpus",
    "1",
    "--tmpfs",
    "/tmp:rw,nosuid,nodev,size=16m,mode=1777",
    "--shm-size",
    "8m",
    "--ulimit",
    "nofile=512:512",
    "--ulimit",
    "nproc=512:512",
    "--ipc",
    "private",
    "--hostname",
    "sandbox",
    "--workdir",
    "/tmp",
    ...(logDriver ? ["--log-driver", "none"] : []),
    "--stop-signal",
    "SIGKILL",
    "--label",
    "io.mcp-code-exec=1",
    "--label",
    `io.mcp-code-exec.contract=${process.pid}`,
    spec.image,
    ...spec.command,
  ];
}

describe.skipIf(!HAS_PODMAN)("nerdctl (fake: records arguments, no real nerdctl here)", () => {
  const fake = fakeNerdctl();
  const env = envWith(fake.PATH);
  adapterContract("nerdctl (fake: records arguments, no real nerdctl here)", {
    make: () => nerdctl({ env }),
    makeMissing: () => nerdctl({ env, binary: "nerdctl-does-not-exist" }),
    image: IMAGE,
    engineEnv: env,
    real: false,
  });

  test("probe asks `version` and `info` as JSON and reports containerd and the log drivers", async () => {
    const info = await nerdctl({ env }).probe();
    expect(info).toMatchObject({ engine: "nerdctl", binary: fake.binary, version: "2.0.3" });
    expect(info.details).toMatchObject({ containerd: "v1.7.24", cgroupVersion: "1", logDrivers: "fluentd,journald,json-file,none,syslog" });
    expect(fake.calls()).toContainEqual(["version", "--format", "{{json .}}"]);
    expect(fake.calls()).toContainEqual(["info", "--format", "{{json .}}"]);
  });

  test("the exact run command line, and the one a started sandbox really received", async () => {
    const spec = specFor(IMAGE, { env: {} });
    expect(await nerdctl({ env }).runArgv(spec)).toEqual([fake.binary, "run", ...expectedRun(spec, true)]);
    const runs = fake.calls().filter((c) => c[0] === "run");
    expect(runs.length).toBeGreaterThan(0);
    for (const flag of ["--pull", "--memory-swap", "--ipc", "--log-driver", "--ulimit"]) expect(runs.at(-1)).toContain(flag);
  });

  test("image check, removal and listing use nerdctl's spelling", async () => {
    const adapter = nerdctl({ env });
    await adapter.imageExists("x:1");
    await adapter.remove("gone");
    expect(fake.calls()).toContainEqual(["image", "inspect", "--format", "{{.Id}}", "x:1"]);
    expect(fake.calls()).toContainEqual(["rm", "--force", "gone"]);
  });

  test("a nerdctl without the `none` log driver (before 2.0) gets no --log-driver, and doctor is told", async () => {
    const old = fakeNerdctl({ logDrivers: ["fluentd", "journald", "json-file"] });
    const adapter = nerdctl({ env: envWith(old.PATH) });
    const spec = specFor(IMAGE, { env: {} });
    expect(await adapter.runArgv(spec)).toEqual([old.binary, "run", ...expectedRun(spec, false)]);
    expect((await adapter.probe()).details.warning).toContain("log");
  });

  test("gVisor is containerd's runsc shim; runc and explicit shim names pass through", () => {
    const flags = (ociRuntime: string) =>
      nerdctlRunFlags(hardeningFlags(specFor(IMAGE, { ociRuntime })), undefined, { details: { logDrivers: "none" } });
    const runtimeOf = (f: string[]) => f[f.indexOf("--runtime") + 1];
    expect(runtimeOf(flags("runsc"))).toBe("io.containerd.runsc.v1");
    expect(runtimeOf(flags("runc"))).toBe("runc");
    expect(runtimeOf(flags("io.containerd.kata.v2"))).toBe("io.containerd.kata.v2");
  });

  test("containerd not running is 'not here', with what to do", async () => {
    const down = fakeCli(
      "nerdctl",
      `echo 'time="2025-01-01T00:00:00Z" level=fatal msg="cannot access containerd socket \\"/run/containerd/containerd.sock\\": no such file or directory"' >&2; exit 1`,
    );
    const err = await nerdctl({ env: envWith(down.PATH) })
      .probe()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineUnavailableError);
    expect((err as EngineUnavailableError).render()).toContain("start containerd");
  });
});

describe.skipIf(!HAS_PODMAN)("podman-machine (fake: records arguments, no real podman machine here)", () => {
  const fake = fakePodmanMachine();
  const env = envWith(fake.PATH);
  const CONN = ["--connection", "podman-machine-default-root"];

  test("a stopped machine is started once, with a log line saying so", async () => {
    const lines: string[] = [];
    const log: AdapterLog = { info: (m) => lines.push(m), warn: (m) => lines.push(m) };
    const adapter = podmanMachine({ env, log });
    const info = await adapter.probe();
    expect(info.details).toMatchObject({ machine: "podman-machine-default", connection: "podman-machine-default-root", vmType: "applehv" });
    expect(info.details.state).toContain("stopped");
    await Promise.all([adapter.ensureRunning!(), adapter.ensureRunning!()]);
    await adapter.ensureRunning!();
    expect(fake.calls().filter((c) => c[0] === "machine" && c[1] === "start")).toEqual([["machine", "start", "podman-machine-default"]]);
    expect(lines.some((l) => l.startsWith("starting podman machine"))).toBe(true);
  });

  adapterContract("podman-machine (fake: records arguments, no real podman machine here)", {
    make: () => podmanMachine({ env, log: { info() {}, warn() {} } }),
    makeMissing: () => podmanMachine({ env, binary: "podman-does-not-exist" }),
    image: IMAGE,
    engineEnv: env,
    real: false,
  });

  test("every container command goes through the machine's connection: the exact command lines", async () => {
    const adapter = podmanMachine({ env });
    const spec = specFor(IMAGE, { env: {} });
    expect(await adapter.runArgv(spec)).toEqual([fake.binary, ...CONN, "run", ...expectedRun(spec, true)]);
    await adapter.remove("gone");
    await adapter.imageExists("x:1");
    expect(fake.calls()).toContainEqual([...CONN, "rm", "--force", "--time", "0", "--ignore", "gone"]);
    expect(fake.calls()).toContainEqual([...CONN, "image", "exists", "x:1"]);
    expect(fake.calls().filter((c) => c.includes("run") && c[0] !== "--connection")).toEqual([]);
  });

  test("no machine, or podman refusing machines (root on Linux), is 'not here'", async () => {
    const none = fakePodmanMachine({ machines: "[]" });
    const err = await podmanMachine({ env: envWith(none.PATH) })
      .probe()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineUnavailableError);
    expect((err as EngineUnavailableError).message).toBe("no podman machine exists");
    const root = fakeCli("podman", `echo 'Error: cannot run command "podman machine list" as root' >&2; exit 125`);
    const err2 = await podmanMachine({ env: envWith(root.PATH) })
      .probe()
      .catch((e: unknown) => e);
    expect(err2).toBeInstanceOf(EngineUnavailableError);
  });

  test("auto-selection reaches the machine when podman cannot connect and nothing else is installed", async () => {
    const mac = fakePodmanMachine();
    const attempts: Array<{ engine: string; ok: boolean; reason?: string }> = [];
    // Only the fake on PATH: the real podman and docker must not be found.
    const { adapter } = await selectEngine(undefined, { env: { PATH: mac.dir } }, attempts);
    expect(adapter.name).toBe("podman-machine");
    expect(attempts.map((a) => `${a.engine}:${a.ok}`)).toEqual(["podman:false", "docker:false", "nerdctl:false", "podman-machine:true"]);
    expect(attempts[0]!.reason).toContain("not answering");
  });

  test("machine and connection choice", () => {
    expect(pickMachine('[{"Name":"a","Running":false},{"Name":"b*","Default":true}]')?.name).toBe("b");
    expect(pickMachine('[{"Name":"a"},{"Name":"b","Running":true}]')?.name).toBe("b");
    expect(pickMachine("[]")).toBeUndefined();
    expect(pickConnection("m", '[{"Name":"other","Default":true},{"Name":"m"},{"Name":"m-root"}]')).toBe("m");
    expect(pickConnection("m", '[{"Name":"m"},{"Name":"m-root","Default":true}]')).toBe("m-root");
    expect(pickConnection("m", '[{"Name":"other"}]')).toBeUndefined();
  });
});
