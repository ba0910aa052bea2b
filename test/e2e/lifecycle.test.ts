/**
 * Container lifecycle as a user meets it: lazy start, prewarm, idle stop, cleanup on every way the
 * bridge can end, orphan removal after SIGKILL, and clear errors for a missing engine or image.
 */
import { describe, expect, test } from "bun:test";
import { exitsLogged, startBridge } from "../support/bridge.ts";
import { CAN_HIDE_ENGINES, withoutEngines } from "../support/hide-engines.ts";
import { listOurContainers, plainRunFlags, waitFor } from "../support/engines.ts";
import { hostname } from "node:os";
import { ENGINES, IMAGE } from "../support/env.ts";

const mine = async (engine: string, pid: number) => (await listOurContainers(engine)).filter((c) => c.owner.endsWith(`:${pid}`));

describe.each(ENGINES)("lifecycle on %s", (engine) => {
  test("no engine is touched before the first call when prewarm is off", async () => {
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_PREWARM: "0" });
    try {
      await bridge.client.listTools();
      await Bun.sleep(500);
      expect(await mine(engine, bridge.pid)).toEqual([]);
      expect((await bridge.run("1")).structured.value).toBe("1");
      expect((await mine(engine, bridge.pid)).length).toBe(1);
    } finally {
      await bridge.close();
    }
  });

  test("prewarm starts the sandbox once the client has initialized", async () => {
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine });
    try {
      expect(await waitFor(async () => (await mine(engine, bridge.pid)).length === 1, 15_000)).toBe(true);
    } finally {
      await bridge.close();
    }
  });

  test("closing the client's pipe removes the container", async () => {
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine });
    await bridge.run("1");
    expect((await mine(engine, bridge.pid)).length).toBe(1);
    await bridge.close();
    expect(await waitFor(async () => (await mine(engine, bridge.pid)).length === 0, 20_000)).toBe(true);
  });

  test("SIGTERM removes the container", async () => {
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine });
    await bridge.run("1");
    process.kill(bridge.pid, "SIGTERM");
    expect(await waitFor(async () => (await mine(engine, bridge.pid)).length === 0, 20_000)).toBe(true);
    await bridge.close();
  });

  test("after SIGKILL, a sandbox whose code holds the GIL is gone within seconds, with no later bridge", async () => {
    const first = await startBridge({ MCP_BRIDGE_RUNTIME: engine });
    await first.run("1");
    const [orphan] = await mine(engine, first.pid);
    expect(orphan).toBeDefined();
    // Hold the GIL in C code, so the runtime itself cannot notice its stdin closing: the sandbox's
    // init (PID 1, outside the code's reach) must.
    void first.run("import re\nre.match(r'(a+)+$', 'a' * 64 + 'b')", { timeout: 120 }).catch(() => {});
    await Bun.sleep(1000);
    process.kill(first.pid, "SIGKILL");
    const gone = await waitFor(async () => !(await listOurContainers(engine)).some((c) => c.name === orphan!.name), 20_000);
    expect(gone).toBe(true);
    await first.close();
  });

  test("a bridge starting removes containers left by a bridge that is gone", async () => {
    // A container as a dead bridge would have left it (e.g. its init was stopped under gVisor).
    const name = `mcp-code-exec-orphan-test-${process.pid}-${engine}`;
    const dead = `${hostname()}:${2 ** 22 + 12345}`;
    const started = Bun.spawnSync([
      engine,
      "run",
      "-d",
      "--rm",
      "--name",
      name,
      ...plainRunFlags(engine),
      "--label",
      "io.mcp-code-exec=1",
      "--label",
      `io.mcp-code-exec.owner=${dead}`,
      IMAGE,
      "sleep",
      "300",
    ]);
    expect(started.exitCode).toBe(0);
    expect((await listOurContainers(engine)).some((c) => c.name === name)).toBe(true);
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_PREWARM: "0" });
    try {
      expect(await waitFor(async () => !(await listOurContainers(engine)).some((c) => c.name === name), 20_000)).toBe(true);
    } finally {
      await bridge.close();
      Bun.spawnSync([engine, "rm", "--force", name]);
    }
  });

  test("after SIGKILL of an idle bridge the sandbox sees its stdin close and exits by itself", async () => {
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine });
    await bridge.run("1");
    const [c] = await mine(engine, bridge.pid);
    process.kill(bridge.pid, "SIGKILL");
    expect(await waitFor(async () => !(await listOurContainers(engine)).some((x) => x.name === c!.name), 20_000)).toBe(true);
    await bridge.close();
  });

  test("the sweep leaves containers of live bridges alone", async () => {
    const a = await startBridge({ MCP_BRIDGE_RUNTIME: engine });
    try {
      await a.run("1");
      const b = await startBridge({ MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_PREWARM: "0" });
      await Bun.sleep(3000);
      await b.close();
      expect((await mine(engine, a.pid)).length).toBe(1);
      expect((await a.run("'still'")).structured.value).toBe("'still'");
    } finally {
      await a.close();
    }
  });

  test("an idle sandbox is stopped and the next result says state was lost", async () => {
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_RUNTIME_IDLE_TIMEOUT: "1" });
    try {
      await bridge.run("idle_var = 1");
      expect(await waitFor(async () => (await mine(engine, bridge.pid)).length === 0, 15_000)).toBe(true);
      const r = await bridge.run("'idle_var' in globals()");
      expect(r.structured.value).toBe("False");
      expect(r.text).toContain("MCP_BRIDGE_RUNTIME_IDLE_TIMEOUT");
    } finally {
      await bridge.close();
    }
  });

  test("a sandbox that dies between calls is replaced, and the result says so", async () => {
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_LOG_LEVEL: "DEBUG" });
    try {
      await bridge.run("doomed = 1");
      const [c] = await mine(engine, bridge.pid);
      const exits = exitsLogged(bridge.stderr());
      Bun.spawnSync([engine, "rm", "--force", c!.name]);
      // Between calls: the bridge has seen it die before the next call comes.
      await bridge.stderrSays((text) => exitsLogged(text) > exits);
      const r = await bridge.run("'doomed' in globals()");
      expect(r.structured.value).toBe("False");
      expect(r.text).toContain("earlier session state was lost");
    } finally {
      await bridge.close();
    }
  });

  test("the lifetime cap kills the container from inside, even with the bridge alive", async () => {
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_CONTAINER_LIFETIME: "6" });
    try {
      await bridge.run("capped = 1");
      expect(await waitFor(async () => (await mine(engine, bridge.pid)).length === 0, 15_000)).toBe(true);
      const r = await bridge.run("'capped' in globals()");
      expect(r.structured.value).toBe("False");
      expect(r.text).toContain("lifetime cap");
    } finally {
      await bridge.close();
    }
  });

  test("os._exit inside a run resets the session with a clear message", async () => {
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine });
    try {
      const r = await bridge.run("import os\nos._exit(7)");
      expect(r.isError).toBe(true);
      expect(String(r.structured.session_reset)).toContain("exited with code 7");
      expect((await bridge.run("'back'")).structured.value).toBe("'back'");
    } finally {
      await bridge.close();
    }
  });
});

describe("missing pieces give actionable errors and the bridge keeps serving", () => {
  test.each(ENGINES)("%s: a missing image that cannot be pulled names the commands that fix it", async (engine) => {
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_IMAGE: "mcp-code-exec-sandbox:does-not-exist" });
    try {
      for (let i = 0; i < 2; i++) {
        const r = await bridge.run("1");
        expect(r.isError).toBe(true);
        expect(r.text).toContain(`image mcp-code-exec-sandbox:does-not-exist is not in ${engine}, and pulling it failed`);
        expect(r.text).toContain("`mcp-code-exec image build`");
        expect(r.text).toContain("`mcp-code-exec image load FILE`");
        expect(r.text).not.toContain("scripts/");
      }
      expect((await bridge.client.listTools()).tools.length).toBe(1);
      // The image the user named is the one used: the default image present here is not taken instead.
      expect(bridge.stderr()).not.toContain("using the offline image");
    } finally {
      await bridge.close();
    }
  });

  // The default image is what scripts/setup.sh builds; the fallback to MCP_BRIDGE_OFFLINE_IMAGE when an
  // engine lacks the default is covered by test/core/image-choice.test.ts (the default cannot be taken
  // away from the engines here without disturbing other suites).
  test.each(ENGINES)("%s: with MCP_BRIDGE_IMAGE unset, the default image runs: Python 3.13 on Debian trixie", async (engine) => {
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_IMAGE: "", MCP_BRIDGE_LOG_LEVEL: "INFO" });
    try {
      const r = await bridge.run("import sys\nsys.version_info[:2]");
      expect([r.isError, r.structured.value]).toEqual([false, "(3, 13)"]);
      expect((await bridge.run("open('/etc/os-release').read().count('trixie') > 0")).structured.value).toBe("True");
      expect(bridge.client.getInstructions()).not.toContain("Not ready");
      expect(bridge.stderr()).not.toContain("pulling");
    } finally {
      await bridge.close();
    }
  });

  // No image check runs before a start (session/sandbox-start.ts): the start itself must notice.
  test.each(ENGINES)("%s: an image removed while the bridge runs is noticed at the next start, and its return too", async (e) => {
    const scratch = `mcp-code-exec-sandbox:lifecycle-${process.pid}-${e}`;
    const tag = (...args: string[]) => Bun.spawnSync([e, ...args], { stdout: "ignore", stderr: "pipe" });
    expect(tag("tag", IMAGE, scratch).exitCode).toBe(0);
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: e, MCP_BRIDGE_IMAGE: scratch, MCP_BRIDGE_PREWARM: "0" });
    try {
      expect((await bridge.run("1")).structured.value).toBe("1");
      // Untagging our scratch name leaves the real image alone (it keeps its own tag).
      expect(tag("rmi", scratch).exitCode).toBe(0);
      const gone = await bridge.run("1", { reset: true });
      expect(gone.isError).toBe(true);
      expect(gone.text).toContain(`image ${scratch} is not in ${e}, and pulling it failed`);
      expect(gone.text).toContain("mcp-code-exec image build");
      expect(tag("tag", IMAGE, scratch).exitCode).toBe(0);
      expect((await bridge.run("2")).structured.value).toBe("2");
    } finally {
      await bridge.close();
      tag("rmi", scratch);
    }
  });

  test.skipIf(!CAN_HIDE_ENGINES)("a missing engine says which one, where it was looked for, and how to install it", async () => {
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: "podman", PATH: "/nonexistent" }, { wrap: (argv) => withoutEngines(argv) });
    try {
      const r = await bridge.run("1");
      expect(r.isError).toBe(true);
      expect(r.text).toContain("[podman] podman not found on PATH (looked in /nonexistent:/usr/local/bin:/usr/bin");
      expect(r.text).toContain("apt-get install podman");
    } finally {
      await bridge.close();
    }
  });

  test.skipIf(!CAN_HIDE_ENGINES)("with no engine at all, auto-selection lists what it tried", async () => {
    const bridge = await startBridge({ PATH: "/nonexistent" }, { wrap: (argv) => withoutEngines(argv) });
    try {
      const r = await bridge.run("1");
      expect(r.isError).toBe(true);
      expect(r.text).toContain("no container engine found");
      expect(r.text).toContain("podman not found");
      expect(r.text).toContain("docker not found");
    } finally {
      await bridge.close();
    }
  });
});
