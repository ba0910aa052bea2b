/**
 * The channel: with a local podman the protocol runs over a socket the bridge hands the container at fd
 * 3 (--preserve-fds), not through the CLI's and conmon's stdio relay. Real podman and docker: which
 * engines use it and what the container sees. That the sandbox ends by itself when the bridge's end goes
 * (a bridge killed with SIGKILL) is in test/e2e/lifecycle.test.ts, which runs podman over the channel.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import docker from "../../adapters/docker.ts";
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
  test("podman does, unless it is a remote service; docker does not", () => {
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
    const { s, lines } = session("podman");
    const r = await s.run({ code: `print('hi')\n${SOCKETS}` });
    expect(r.error).toBeUndefined();
    expect(r.stdout).toBe("hi\n");
    const sockets = JSON.parse(r.value!) as number[];
    expect(sockets.length).toBeGreaterThan(0);
    expect(sockets.every((fd) => fd >= 200)).toBe(true);
    expect(lines.find((l) => l.msg === "sandbox start trace")).toMatchObject({ channel: "fd" });
  });

  test("gVisor's runsc does not pass fds: that sandbox uses stdio", async () => {
    const { s, lines } = session("podman", { MCP_BRIDGE_OCI_RUNTIME: "runsc", MCP_BRIDGE_PIDS: "512" });
    const r = await s.run({ code: SOCKETS });
    expect(r.error).toBeUndefined();
    expect(lines.find((l) => l.msg === "sandbox start trace")).toMatchObject({ channel: "stdio" });
  });
});

describe.skipIf(!ENGINES.includes("docker"))("a docker sandbox", () => {
  test("keeps the protocol on the engine's stdio", async () => {
    const { s, lines } = session("docker");
    expect((await s.run({ code: "1" })).error).toBeUndefined();
    expect(lines.find((l) => l.msg === "sandbox start trace")).toMatchObject({ channel: "stdio" });
  });
});
