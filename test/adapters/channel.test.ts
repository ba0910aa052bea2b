/**
 * The channel: with a local podman the protocol runs over a socket the bridge hands the container at fd
 * 3 (--preserve-fds), not through the CLI's and conmon's stdio relay; with a docker daemon on this host,
 * over a unix socket in a folder it mounts read-only (src/host/socket-channel.ts), not through the CLI,
 * dockerd and the shim. Real podman and docker: which engines use it and what the container sees. That the sandbox ends by itself when the bridge's end goes
 * (a bridge killed with SIGKILL) is in test/e2e/lifecycle.test.ts, which runs podman over the channel.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { release, tmpdir } from "node:os";
import { join } from "node:path";
import docker, { dockerOnThisHost } from "../../adapters/docker.ts";
import type { EngineInfo } from "../../adapters/types.ts";
import { spawnChild } from "../../src/host/process.ts";
import { CHANNEL_MOUNT, openSocketChannel } from "../../src/host/socket-channel.ts";
import { Sandbox } from "../../src/sandbox/sandbox.ts";
import podman from "../../adapters/podman.ts";
import { createApp } from "../../src/app.ts";
import { createLogger } from "../../src/log.ts";
import { engineEnv } from "../../src/engines/registry.ts";
import type { Session } from "../../src/session/session.ts";
import { ENGINES, IMAGE } from "../support/env.ts";
import { specFor } from "./contract.ts";

const env = engineEnv(process.env);
let sessions: Session[] = [];
afterEach(async () => {
  await Promise.all(sessions.map((s) => s.close()));
  sessions = [];
});

function session(engine: string, extra: Record<string, string> = {}) {
  const home = mkdtempSync(join(tmpdir(), "mcx-channel-"));
  const app = createApp(
    {
      PATH: process.env.PATH,
      HOME: home,
      MCP_BRIDGE_STATE_DIR: join(home, "state"),
      MCP_BRIDGE_RUNTIME: engine,
      MCP_BRIDGE_IMAGE: IMAGE,
      ...extra,
    },
    home,
  );
  const lines: Array<Record<string, unknown>> = [];
  const s = app.newSession({ log: createLogger("DEBUG", "json", (l) => lines.push(JSON.parse(l) as Record<string, unknown>)) });
  sessions.push(s);
  return { s, lines };
}

/**
 * A run on `engine` prints as on stdio, the runtime's sockets are all at its private fds (200 and up),
 * and the start trace names the channel. Returns the session for more runs.
 */
async function expectPrivateSocketChannel(engine: string, channel: "fd" | "socket"): Promise<Session> {
  const { s, lines } = session(engine);
  const r = await s.run({ code: `print('hi')\n${SOCKETS}` });
  expect(r.error).toBeUndefined();
  expect(r.stdout).toBe("hi\n");
  const sockets = JSON.parse(r.value!) as number[];
  expect(sockets.length).toBeGreaterThan(0);
  expect(sockets.every((fd) => fd >= 200)).toBe(true);
  expect(lines.find((l) => l.msg === "sandbox start trace")).toMatchObject({ channel });
  return s;
}

/** Which fds of the runtime are sockets, from inside. */
const SOCKETS = [
  "import os, stat",
  "def sock(fd):",
  "    try:",
  "        return stat.S_ISSOCK(os.fstat(fd).st_mode)",
  "    except OSError:",
  "        return False",
  "sorted(fd for fd in map(int, os.listdir('/proc/self/fd')) if sock(fd))",
].join("\n");

describe("which engines pass the channel", () => {
  test("podman does, unless it is a remote service; docker does not (it shares a socket instead)", () => {
    expect(podman({ env }).passesFds).toBe(true);
    expect(podman({ env: { ...env, CONTAINER_HOST: "ssh://core@host/run/podman/podman.sock" } }).passesFds).toBe(false);
    expect(docker({ env }).passesFds).toBe(false);
  });

  test.skipIf(!ENGINES.includes("podman"))(
    "podman's run line hands fd 3 over and tells the entrypoint; without a channel it does not",
    async () => {
      const spec = specFor(IMAGE, { env: {} });
      const withChannel = await podman({ env }).runArgv({ ...spec, channelFd: 3, command: [...spec.command, "3"] });
      expect(withChannel.slice(withChannel.indexOf("--preserve-fds"), withChannel.indexOf("--preserve-fds") + 2)).toEqual([
        "--preserve-fds",
        "1",
      ]);
      expect(withChannel.at(-1)).toBe("3");
      expect(await podman({ env }).runArgv(spec)).not.toContain("--preserve-fds");
    },
  );
});

describe.skipIf(!ENGINES.includes("podman"))("a podman sandbox over the channel", () => {
  test("the protocol socket is only at the runtime's private fds; fd 3 itself is closed; runs work as on stdio", async () => {
    await expectPrivateSocketChannel("podman", "fd");
  });

  test("gVisor's runsc does not pass fds: that sandbox uses stdio", async () => {
    const { s, lines } = session("podman", { MCP_BRIDGE_OCI_RUNTIME: "runsc", MCP_BRIDGE_PIDS: "512" });
    const r = await s.run({ code: SOCKETS });
    expect(r.error).toBeUndefined();
    expect(lines.find((l) => l.msg === "sandbox start trace")).toMatchObject({ channel: "stdio" });
  });
});

describe("which engines share this host's sockets (docker's probe facts; no daemon needed)", () => {
  const local: EngineInfo = {
    engine: "docker",
    binary: "/usr/bin/docker",
    version: "27.0.0",
    details: {
      endpoint: "the CLI's default",
      context: "default",
      platform: "Docker Engine - Community",
      serverOs: "linux",
      kernel: release(),
    },
  };
  const on = (patch: Record<string, string>, extra: Partial<EngineInfo> = {}, e: Record<string, string> = {}) =>
    dockerOnThisHost({ ...local, ...extra, details: { ...local.details, ...patch } }, e);

  test.skipIf(process.platform !== "linux")(
    "a daemon on this kernel at a local socket does; a VM, a remote host, another context, the snap do not",
    () => {
      expect(on({})).toBe(true);
      expect(on({ endpoint: "unix:///home/u/.orbstack/run/docker.sock" })).toBe(true);
      expect(on({ endpoint: "DOCKER_HOST=unix:///run/user/1000/docker.sock" })).toBe(true);
      expect(on({ kernel: "6.10.14-linuxkit" })).toBe(false);
      expect(on({ platform: "Docker Desktop 4.38.0 (181591)" })).toBe(false);
      expect(on({ endpoint: "DOCKER_HOST=tcp://10.0.0.5:2376" })).toBe(false);
      expect(on({ endpoint: "DOCKER_HOST=ssh://me@build-box" })).toBe(false);
      expect(on({ endpoint: "context colima (/home/u/.docker/config.json)" })).toBe(false);
      expect(on({ context: "remote" })).toBe(false);
      expect(on({}, {}, { DOCKER_HOST: "tcp://10.0.0.5:2376" })).toBe(false);
      expect(on({}, { binary: "/snap/bin/docker" })).toBe(false);
      // A probe cached by an older bridge, without these facts: stdio, as before.
      expect(dockerOnThisHost({ ...local, details: { endpoint: "the CLI's default" } }, {})).toBe(false);
    },
  );
});

describe.skipIf(!ENGINES.includes("docker"))("a docker sandbox over a socket", () => {
  test("the protocol runs on a socket at the runtime's private fds; runs work as on stdio; nothing is left in the temp folder", async () => {
    const before = channelFolders();
    const s = await expectPrivateSocketChannel("docker", "socket");
    expect(channelFolders().filter((d) => !before.includes(d))).toEqual([]);
    // The token that proved the container is not left for the code to read.
    const t = await s.run({ code: "'_CHANNEL_TOKEN' in globals() or '_CHANNEL_TOKEN' in dir(__builtins__)" });
    expect(t.value).toBe("False");
  });

  test("a container that cannot reach the socket says why and keeps to stdin/stdout", async () => {
    const ch = openSocketChannel();
    await ch.listening;
    rmSync(join(ch.hostDir, "s")); // the folder mounts, the socket is not there: connect() fails inside
    const spec = specFor(IMAGE, { env: {} });
    const box = await Sandbox.start({
      adapter: docker({ env }),
      spec: {
        ...spec,
        mounts: [{ source: ch.hostDir, target: CHANNEL_MOUNT, readonly: true }],
        channelSocket: ch.containerPath,
        command: [...spec.command, ch.containerPath],
      },
      spawn: spawnChild,
      engineEnv: env as Record<string, string>,
      log: createLogger("ERROR", "json", () => {}),
      startTimeoutMs: 60_000,
      socketChannel: ch,
    });
    try {
      const r = await box.run("6 * 7", 10_000).result;
      expect(r.value).toBe("42");
      expect(ch.chosen).toBe("stdio");
    } finally {
      const exit = await box.kill("test over");
      expect(exit.stderrTail).toContain("the bridge's socket is unreachable");
    }
  });

  test("an engine that will not mount the channel's folder (a temp folder with a comma) still starts the sandbox, over stdio", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "mcx-comma,"));
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    try {
      const { s, lines } = session("docker");
      const r = await s.run({ code: "1 + 1" });
      expect(r.error).toBeUndefined();
      expect(r.value).toBe("2");
      expect(lines.find((l) => l.msg === "sandbox start trace")).toMatchObject({ channel: "stdio" });
      expect(lines.some((l) => String(l.msg).includes("socket channel failed"))).toBe(true);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
  });
});

function channelFolders(): string[] {
  return readdirSync(tmpdir()).filter((d) => d.startsWith("mcp-code-exec-ch-"));
}

describe("MCP_BRIDGE_CHANNEL=stdio: the user's way back to the engine's relay", () => {
  test.each(ENGINES)("on %s the protocol stays on stdin/stdout", async (engine) => {
    const { s, lines } = session(engine, { MCP_BRIDGE_CHANNEL: "stdio" });
    const r = await s.run({ code: `print('hi')\n${SOCKETS}` });
    expect(r.error).toBeUndefined();
    expect(r.stdout).toBe("hi\n");
    expect(JSON.parse(r.value!)).toEqual([]);
    expect(lines.find((l) => l.msg === "sandbox start trace")).toMatchObject({ channel: "stdio" });
  });
});
