/**
 * Failing parts around the bridge: the engine binary disappears, the docker daemon dies, the container is
 * killed from outside, upstream servers hang, lie or never start, clients hammer or vanish. Each ends in a
 * clear error for the affected call only, a fresh session where state was lost, no orphaned container,
 * and the next call working. Also: JSON logs with request ids, and the counters.
 */
import { describe, expect, test } from "bun:test";
import { processAlive } from "../support/processes.ts";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { codeStarted, exitsLogged, SAY_STARTED, startBridge } from "../support/bridge.ts";
import { fileSays } from "../support/events.ts";
import { listOurContainers, waitFor } from "../support/engines.ts";
import { BINARY } from "../support/binary.ts";
import { bridgeEnv, ENGINES, ROOT } from "../support/env.ts";

const mine = async (engine: string, pid: number) => (await listOurContainers(engine)).filter((c) => c.owner.endsWith(`:${pid}`));

function homeWithServers(servers: Record<string, unknown>): string {
  const home = mkdtempSync(join(tmpdir(), "mcx-faults-"));
  mkdirSync(join(home, ".config", "mcp", "servers"), { recursive: true });
  writeFileSync(join(home, ".config", "mcp", "servers", "s.json"), JSON.stringify({ mcpServers: servers }));
  return home;
}

describe.each(ENGINES)("engine faults on %s", (engine) => {
  test("the engine binary disappears mid-session: a clear error, then it works again once restored", async () => {
    const bin = mkdtempSync(join(tmpdir(), "mcx-bin-"));
    const real = Bun.which(engine)!;
    symlinkSync(real, join(bin, engine));
    // Only the symlink: /bin and /usr/bin hold the real engine too.
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine, PATH: bin, MCP_BRIDGE_LOG_LEVEL: "DEBUG" });
    try {
      await bridge.run("x = 1");
      rmSync(join(bin, engine));
      // Still served by the running container: the engine CLI is not needed for a warm call.
      expect((await bridge.run("x")).structured.value).toBe("1");
      const exits = exitsLogged(bridge.stderr());
      for (const c of await mine(engine, bridge.pid)) Bun.spawnSync([real, "rm", "--force", c.name]);
      // The bridge has seen the sandbox end (a call racing that is told its run was lost).
      await bridge.stderrSays((text) => exitsLogged(text) > exits);
      const r = await bridge.run("x");
      expect(r.isError).toBe(true);
      expect(r.text).toMatch(new RegExp(`\\[${engine}\\] (could not run|${engine} not found)`));
      symlinkSync(real, join(bin, engine));
      const back = await bridge.run("'x' in globals()");
      expect(back.structured.value).toBe("False");
    } finally {
      await bridge.close();
    }
  });

  test("the container is killed from outside during a run: that run says the session was reset", async () => {
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine });
    try {
      await bridge.run("state = 'will be lost'");
      const [c] = await mine(engine, bridge.pid);
      const run = codeStarted();
      void run.started.then(() => Bun.spawnSync([engine, "kill", c!.name]));
      const r = await bridge.run(`${SAY_STARTED}\nimport time\ntime.sleep(20)`, { timeout: 60, onprogress: run.onprogress });
      expect(r.isError).toBe(true);
      expect(String(r.structured.session_reset)).toContain("the sandbox stopped during this run");
      expect((await bridge.run("'state' in globals()")).structured.value).toBe("False");
      expect((await mine(engine, bridge.pid)).length).toBe(1);
    } finally {
      await bridge.close();
    }
  });

  test(`\`${engine} stop\` from outside ends the sandbox at once (no grace its init would ignore); the next call gets a fresh one`, async () => {
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_LOG_LEVEL: "DEBUG" });
    try {
      await bridge.run("state = 1");
      const [c] = await mine(engine, bridge.pid);
      expect(Bun.spawnSync([engine, "inspect", "--format", "{{.Config.StopSignal}}", c!.name]).stdout.toString().trim()).toMatch(
        /^(SIG)?KILL$|^9$/,
      );
      const exits = exitsLogged(bridge.stderr());
      const started = performance.now();
      const stop = Bun.spawnSync([engine, "stop", c!.name], { stderr: "pipe" });
      const took = performance.now() - started;
      expect(stop.exitCode, stop.stderr.toString()).toBe(0);
      // The engines' default grace is 10 s; a SIGTERM the init ignores would spend all of it.
      expect(took).toBeLessThan(8_000);
      // The bridge has seen the engine's exit (a call racing it is told its run was lost).
      await bridge.stderrSays((text) => exitsLogged(text) > exits);
      const r = await bridge.run("'state' in globals()");
      expect(r.structured.value).toBe("False");
    } finally {
      await bridge.close();
    }
  });

  test("the client disconnects mid-run: the bridge exits and removes its container", async () => {
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine });
    await bridge.run("1");
    const run = codeStarted();
    void bridge.run(`${SAY_STARTED}\nimport time\ntime.sleep(60)`, { timeout: 120, onprogress: run.onprogress }).catch(() => {});
    await run.started;
    await bridge.close();
    expect(await waitFor(async () => (await mine(engine, bridge.pid)).length === 0, 20_000)).toBe(true);
    expect(await waitFor(async () => Bun.spawnSync(["kill", "-0", String(bridge.pid)]).exitCode !== 0, 20_000)).toBe(true);
  });
});

describe.if(ENGINES.includes("docker"))("the docker daemon dies mid-session", () => {
  test("a clear error while it is down, a fresh session once it is back", async () => {
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: "docker" });
    try {
      await bridge.run("before = 1");
      // A crash, not a clean stop: a clean stop waits for every container of every user.
      Bun.spawnSync(["pkill", "-KILL", "-x", "dockerd"]);
      expect(
        await waitFor(async () => Bun.spawnSync(["docker", "info"], { stdout: "ignore", stderr: "ignore" }).exitCode !== 0, 30_000),
      ).toBe(true);
      const down = await bridge.run("before");
      expect(down.isError).toBe(true);
      expect(down.text).toMatch(/sandbox stopped|not answering|docker/i);
      // The old daemon must be fully gone before a new one can take its socket and pid file.
      expect(await waitFor(async () => Bun.spawnSync(["pgrep", "-x", "dockerd"]).exitCode !== 0, 60_000)).toBe(true);
      const restart = Bun.spawnSync(["bash", join(ROOT, "scripts", "start-dockerd.sh")], { stderr: "pipe" });
      expect(restart.exitCode, restart.stderr.toString()).toBe(0);
      const back = await bridge.run("'before' in globals()");
      expect(back.structured.value).toBe("False");
    } finally {
      await bridge.close();
      Bun.spawnSync(["bash", join(ROOT, "scripts", "start-dockerd.sh")]);
    }
  });
});

describe.each(ENGINES)("an image with no python3 on %s", (engine) => {
  test("the error says the image has no python3 and which images do (not that an OCI runtime is unknown)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcx-nopy-"));
    const tar = join(dir, "empty.tar");
    expect(Bun.spawnSync(["tar", "cf", tar, "--files-from", "/dev/null"]).exitCode).toBe(0);
    const image = `localhost/mcx-no-python:${process.pid}`;
    expect(Bun.spawnSync([engine, "import", tar, image], { stdout: "ignore", stderr: "pipe" }).exitCode).toBe(0);
    try {
      const r = Bun.spawnSync([BINARY, "exec", "-c", "1"], {
        env: bridgeEnv({ HOME: dir, MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_IMAGE: image, MCP_BRIDGE_STATE_DIR: join(dir, "state") }),
        cwd: dir,
        stdout: "pipe",
        stderr: "pipe",
      });
      const said = r.stderr.toString();
      expect(r.exitCode).not.toBe(0);
      expect(said).toContain(`the image ${image} has no python3 to run`);
      expect(said).toContain("MCP_BRIDGE_IMAGE must name an image with Python 3.9 or later");
      expect(said).not.toContain("OCI runtime  is not known");
    } finally {
      Bun.spawnSync([engine, "rmi", "-f", image], { stdout: "ignore", stderr: "ignore" });
    }
  });
});

describe.each(ENGINES)("limits too small for Python to start, on %s", (engine) => {
  test("the error says which setting and does not blame the image, also where the default image is missing and the offline one is used", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcx-tight-"));
    // The default image (MCP_BRIDGE_IMAGE unset).
    const env = bridgeEnv({
      HOME: dir,
      MCP_BRIDGE_RUNTIME: engine,
      MCP_BRIDGE_IMAGE: "",
      MCP_BRIDGE_PIDS: "3",
      MCP_BRIDGE_STATE_DIR: join(dir, "state"),
    });
    // Twice: the second start uses the engine probe the first one cached, and is retried after a fresh probe.
    for (const _ of [1, 2]) {
      const r = Bun.spawnSync([BINARY, "exec", "-c", "1"], { env, cwd: dir, stdout: "pipe", stderr: "pipe" });
      const said = r.stderr.toString();
      expect(r.exitCode).not.toBe(0);
      expect(said).toContain("MCP_BRIDGE_PIDS=3 may be too small for Python to start");
      expect(said).not.toContain("not found");
    }
  });
});

describe("upstream faults", () => {
  const engine = ENGINES[0]!;
  const home = homeWithServers({
    garbage: { command: "bun", args: [join(ROOT, "test", "fixtures", "garbage-server.ts")] },
    mute: { command: "sleep", args: ["600"] },
    flaky: { command: "bun", args: [join(ROOT, "test", "fixtures", "flaky-server.ts")] },
  });
  const env = {
    HOME: home,
    MCP_BRIDGE_RUNTIME: engine,
    MCP_BRIDGE_STATE_DIR: join(home, "state"),
    MCP_BRIDGE_TOOL_TIMEOUT: "2",
    MCP_BRIDGE_UPSTREAM_START_TIMEOUT: "2",
  };

  test("a server that answers garbage, and one that never initializes, fail their calls only", async () => {
    const bridge = await startBridge(env, { cwd: home });
    try {
      const lie = await bridge.run(
        "from mcp import McpToolError\ntry:\n    await mcp_garbage.lie()\n    out = 'no error'\nexcept McpToolError as e:\n    out = str(e)\nout",
        { servers: ["garbage"] },
      );
      expect(String(lie.structured.value)).toContain("garbage.lie did not answer within 2s");
      // JSON-RPC answers whose result is not a CallToolResult: each call fails saying what is wrong.
      const bad = await bridge.run(
        "from mcp import McpToolError\nout = {}\nfor t in ['content_not_a_list', 'text_without_text', 'unknown_block', 'structured_list']:\n    try:\n        await getattr(mcp_garbage, t)()\n        out[t] = 'no error'\n    except McpToolError as e:\n        out[t] = str(e)\nout",
        { servers: ["garbage"] },
      );
      const said = String(bad.structured.value);
      expect(said).not.toContain("no error");
      for (const what of [
        "`content` is not a list",
        "content[0] is a text block without a string `text`",
        'content[1] has an unknown type "hologram"',
        "`structuredContent` is not an object",
      ])
        expect(said).toContain(what);
      const mute = await bridge.run(
        "from mcp import runtime\ntry:\n    runtime.list_tools_sync('mute')\n    out = 'listed'\nexcept Exception as e:\n    out = f'{type(e).__name__}: {e}'\nout",
        { servers: ["mute"] },
      );
      expect(String(mute.structured.value)).toContain("server mute did not start");
      expect(String((await bridge.run("(await mcp_flaky.ping())['pong']", { servers: ["flaky"] })).structured.value)).toBe("True");
    } finally {
      await bridge.close();
    }
  });
});

describe("an upstream that hangs up on a message larger than it reads", () => {
  test("the error says the arguments were too large for it, and the next call restarts it", async () => {
    const everything = join(ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
    const home = homeWithServers({ everything: { command: "node", args: [everything] } });
    const bridge = await startBridge(
      { HOME: home, MCP_BRIDGE_RUNTIME: ENGINES[0]!, MCP_BRIDGE_STATE_DIR: join(home, "state") },
      { cwd: home },
    );
    try {
      const r = await bridge.run(
        "from mcp import McpToolError\ntry:\n    await mcp_everything.echo(message='x' * (11 << 20))\n    out = 'no error'\nexcept McpToolError as e:\n    out = str(e)\nout",
        { servers: ["everything"], timeout: 60 },
      );
      const said = String(r.structured.value);
      expect(said).toContain("server everything stopped during the call to echo");
      expect(said).toMatch(
        /the call's arguments were 11\.\d MiB, and MCP servers built on the official SDKs hang up on a message over 10 MiB/,
      );
      const next = await bridge.run("(await mcp_everything.echo(message='small'))", { servers: ["everything"] });
      expect(String(next.structured.value)).toContain("Echo: small");
    } finally {
      await bridge.close();
    }
  });
});

describe("a state dir that cannot be written (under a regular file, ENOTDIR: as root, a read-only or full disk cannot be made without a mount)", () => {
  const engine = ENGINES[0]!;

  test("sandboxes start and proxied calls work; saving a skill says why it cannot; a killed bridge still leaves no upstream or container", async () => {
    const home = homeWithServers({ flaky: { command: "bun", args: [join(ROOT, "test", "fixtures", "flaky-server.ts")] } });
    writeFileSync(join(home, "blocker"), "");
    const state = join(home, "blocker", "state");
    const env = { HOME: home, MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_STATE_DIR: state };
    const bridge = await startBridge(env, { cwd: home });
    try {
      expect((await bridge.run("print(6 * 7)")).text).toContain("42");
      const pinged = await bridge.run("(await mcp_flaky.ping())['pid']", { servers: ["flaky"] });
      const upstream = Number(pinged.structured.value);
      expect(processAlive(upstream)).toBe(true);
      const skill = await bridge.run(
        "from mcp import runtime\ndef twice(x):\n    return 2 * x\ntry:\n    runtime.save_skill(twice)\n    out = 'saved'\nexcept Exception as e:\n    out = str(e)\nout",
      );
      expect(String(skill.structured.value)).toContain(`cannot save the skill to ${join(state, "skills")} (ENOTDIR)`);
      expect(String(skill.structured.value)).toContain("MCP_BRIDGE_STATE_DIR");
      // Said once, with the place the profile went instead.
      expect(bridge.stderr().match(/the state dir cannot be written/g)?.length).toBe(1);
      expect(bridge.stderr()).toMatch(/error=ENOTDIR profile=\S*mcp-code-exec-own-\d+-\w+\/seccomp-[0-9a-f]{12}\.json/);
      expect((await mine(engine, bridge.pid)).length).toBe(1);
      process.kill(bridge.pid, "SIGKILL");
      expect(await waitFor(async () => !processAlive(upstream), 10_000)).toBe(true);
      expect(await waitFor(async () => (await mine(engine, bridge.pid)).length === 0, 20_000)).toBe(true);
    } finally {
      await bridge.close();
    }
    // A bridge that ends normally has nothing to complain about either.
    const again = await startBridge(env, { cwd: home });
    expect((await again.run("print('again')")).text).toContain("again");
    await again.close();
    expect(await waitFor(async () => !processAlive(again.pid), 5_000)).toBe(true);
    expect(again.stderr()).not.toMatch(/unhandled|EFAULT/);
    // doctor says what is wrong and what to do.
    const doctor = Bun.spawnSync([BINARY, "doctor"], { env: bridgeEnv(env), cwd: home, stdout: "pipe", stderr: "pipe" });
    const out = doctor.stdout.toString();
    expect(out).toContain(`FAIL  state dir: ${state} cannot be written (ENOTDIR)`);
    expect(out).toContain("set MCP_BRIDGE_STATE_DIR to a folder this user can write");
  });
});

describe("a TMPDIR that does not exist (a stale per-session folder, a drive not mounted)", () => {
  test("the bridge says so once and uses the system's temporary folder: runs work (podman alone fails on it)", async () => {
    const bridge = await startBridge({ HOME: homeWithServers({}), MCP_BRIDGE_RUNTIME: ENGINES[0]!, TMPDIR: "/nonexistent/mcx-tmp" });
    try {
      expect((await bridge.run("print(6 * 7)")).text).toContain("42");
      expect((await bridge.run("print('again')")).text).toContain("again");
      expect(bridge.stderr().match(/TMPDIR is not a folder this user can write/g)?.length).toBe(1);
      expect(bridge.stderr()).toContain("TMPDIR=/nonexistent/mcx-tmp error=ENOENT");
    } finally {
      await bridge.close();
    }
  });
});

describe("upstream servers never outlive the bridge", () => {
  const engine = ENGINES[0]!;
  /** A bridge configured with a server that never finishes starting and ignores every polite signal. */
  async function withStuckServer() {
    const dir = mkdtempSync(join(tmpdir(), "mcx-stuck-"));
    const pidFile = join(dir, "stuck.pid");
    const home = homeWithServers({
      stuck: { command: "bun", args: [join(ROOT, "test", "fixtures", "stuck-server.ts")], env: { STUCK_PID_FILE: pidFile } },
    });
    const bridge = await startBridge(
      {
        HOME: home,
        MCP_BRIDGE_RUNTIME: engine,
        MCP_BRIDGE_STATE_DIR: join(home, "state"),
        MCP_BRIDGE_UPSTREAM_START_TIMEOUT: "1",
        MCP_BRIDGE_PREWARM: "0",
      },
      { cwd: home },
    );
    const started = () => (existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8")) : 0);
    return { bridge, started };
  }

  test("one that never finishes starting is gone when the bridge exits right after the failure", async () => {
    const { bridge, started } = await withStuckServer();
    const r = await bridge.run(
      "from mcp import runtime\ntry:\n    runtime.list_tools_sync('stuck')\nexcept Exception as e:\n    out = str(e)\nout",
    );
    expect(String(r.structured.value)).toContain("server stuck did not start");
    const pid = started();
    expect(pid).toBeGreaterThan(0);
    await bridge.close();
    expect(await waitFor(async () => !processAlive(pid), 15_000)).toBe(true);
  });

  test("and when the bridge is killed with SIGKILL while it starts (the watchdog)", async () => {
    const { bridge, started } = await withStuckServer();
    void bridge.run("from mcp import runtime\nruntime.list_tools_sync('stuck')").catch(() => {});
    expect(await waitFor(async () => started() > 0, 15_000)).toBe(true);
    const pid = started();
    process.kill(bridge.pid, "SIGKILL");
    // A guard, not a target: the watchdog ends it within a second or two; 10 s ran out once at load 19.
    expect(await waitFor(async () => !processAlive(pid), 30_000)).toBe(true);
    await bridge.close();
  });
});

describe("many clients", () => {
  test("two clients hammer two bridges at once; every call is answered", async () => {
    const engine = ENGINES[0]!;
    const [a, b] = await Promise.all([startBridge({ MCP_BRIDGE_RUNTIME: engine }), startBridge({ MCP_BRIDGE_RUNTIME: engine })]);
    try {
      const hammer = async (bridge: typeof a, tag: string) => {
        const out: string[] = [];
        for (let i = 0; i < 40; i++) out.push(String((await bridge.run(`'${tag}' + str(${i})`)).structured.value));
        return out;
      };
      const [ra, rb] = await Promise.all([hammer(a, "a"), hammer(b, "b")]);
      expect(ra).toEqual(Array.from({ length: 40 }, (_, i) => `'a${i}'`));
      expect(rb).toEqual(Array.from({ length: 40 }, (_, i) => `'b${i}'`));
      // Concurrent calls on one connection are queued, not lost.
      const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => a.run(`${i} * 2`)));
      expect(burst.map((r) => r.structured.value)).toEqual(Array.from({ length: 10 }, (_, i) => String(i * 2)));
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});

describe("observability", () => {
  test("JSON log lines carry a request id per run and per proxied call; counters are exposed", async () => {
    const engine = ENGINES[0]!;
    const home = homeWithServers({ flaky: { command: "bun", args: [join(ROOT, "test", "fixtures", "flaky-server.ts")] } });
    const state = join(home, "state");
    const bridge = await startBridge(
      { HOME: home, MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_STATE_DIR: state, MCP_BRIDGE_LOG_FORMAT: "json", MCP_BRIDGE_LOG_LEVEL: "DEBUG" },
      { cwd: home },
    );
    try {
      await bridge.run("for _ in range(3):\n    await mcp_flaky.ping()", { servers: ["flaky"] });
      await bridge.run("1/0");
      // The second run's line is written after its result is sent.
      await bridge.stderrSays((text) => text.split('"msg":"run finished"').length - 1 >= 2);
      const lines = bridge
        .stderr()
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const runs = lines.filter((l) => l.msg === "run finished");
      expect(runs.length).toBe(2);
      expect(runs[0]!.request).toMatch(/^run-\d+-\d+-1$/);
      expect(runs[1]!.error).toBe("ZeroDivisionError");
      const calls = lines.filter((l) => l.msg === "proxied call");
      expect(calls.length).toBe(3);
      expect(new Set(calls.map((c) => c.call)).size).toBe(3);
      expect(calls.every((c) => c.request === runs[0]!.request && c.server === "flaky" && c.tool === "ping")).toBe(true);

      const res = await bridge.client.readResource({ uri: "resource://mcp-code-exec/stats" });
      const stats = JSON.parse((res.contents[0] as { text: string }).text) as Record<string, unknown>;
      expect(stats).toMatchObject({ runs: 2, run_errors: 1, container_starts: 1, proxied_calls: 3, proxied_errors: 0 });
      expect((stats.proxied_latency_ms as { p50: number }).p50).toBeGreaterThan(0);

      // The bridge writes its counters to the state folder every 2 s; `stats` reads them from there.
      await fileSays(join(state, "stats", `${bridge.pid}.json`), (text) => /"proxied_calls":3\b/.test(text) && /"runs":2\b/.test(text));
      const proc = Bun.spawn([BINARY, "stats", "--json"], { env: bridgeEnv({ HOME: home, MCP_BRIDGE_STATE_DIR: state }), stdout: "pipe" });
      const listed = JSON.parse(await new Response(proc.stdout).text()) as { bridges: Array<Record<string, unknown>> };
      expect(listed.bridges.find((s) => s.pid === bridge.pid)).toMatchObject({ runs: 2, proxied_calls: 3 });
    } finally {
      await bridge.close();
    }
  });
});
