/**
 * An upstream server started ahead of its first use (UpstreamServer.warm: a run that names it is waiting
 * for its sandbox), and one started as the call that names it arrived, before the pool existed
 * (EarlyUpstreams: the pool's first start takes its process). Its failure is not made twice: the use it was made for hears it, and the use after
 * starts the server afresh; a use that joined the start heard it already. Real processes: a server that
 * exits at once, one that never answers, and server-everything from npm.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ServerEntry } from "../../src/config/servers.ts";
import { silentLogger } from "../../src/log.ts";
import { UpstreamsFile } from "../../src/host/watchdog.ts";
import { EarlyUpstreams } from "../../src/upstream/early-upstreams.ts";
import { UpstreamProcesses } from "../../src/upstream/processes.ts";
import { UpstreamServer } from "../../src/upstream/upstream-server.ts";
import { ROOT } from "../support/env.ts";
import { fileSays } from "../support/events.ts";

const EVERYTHING = join(ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");

/** Counts the server processes started. */
class CountingProcesses extends UpstreamProcesses {
  starts = 0;
  override started(pid: number): void {
    this.starts++;
    super.started(pid);
  }
}

function entry(name: string, command: string, args: string[]): ServerEntry {
  return {
    name,
    alias: name,
    transport: { type: "stdio", command, args, env: {} },
    source: "/test/servers.json",
    shadowed: [],
    configHash: name,
    client: "bridge",
    scope: "user",
    at: `mcpServers.${name}`,
    digest: name,
    trust: { state: "trusted", reason: "test" },
    needs: [],
    notes: [],
  } as ServerEntry;
}

const open: UpstreamServer[] = [];
function server(e: ServerEntry, connectTimeoutMs = 30_000, early?: EarlyUpstreams) {
  const processes = new CountingProcesses();
  const s = new UpstreamServer(e, { log: silentLogger, version: "0", connectTimeoutMs, onTools: () => {}, processes, early });
  open.push(s);
  return { s, processes };
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

describe("an upstream server started ahead of its first use", () => {
  test("a failure no use heard is heard by the next use, without a second start; the use after starts it afresh", async () => {
    const { s, processes } = server(entry("broken", "node", ["-e", "console.error('broken on purpose: no token'); process.exit(3)"]));
    await s.warm();
    expect(s.status).toBe("crashed");
    const first = await s.listTools().catch((e: Error) => e);
    expect(String(first)).toContain("server broken did not start");
    expect(String(first)).toContain("broken on purpose: no token");
    expect(processes.starts).toBe(1);
    const again = await s.listTools().catch((e: Error) => e);
    expect(String(again)).toContain("server broken did not start");
    expect(processes.starts).toBe(2);
  });

  test("a use that joined the start hears its failure then, and the next use starts the server again", async () => {
    // `sleep` never answers `initialize`: the start fails at the connect timeout.
    const { s, processes } = server(entry("mute", "sleep", ["600"]), 500);
    void s.warm();
    const joined = await s.listTools().catch((e: Error) => e);
    expect(String(joined)).toContain("server mute did not start");
    expect(processes.starts).toBe(1);
    const next = await s.listTools().catch((e: Error) => e);
    expect(String(next)).toContain("server mute did not start");
    expect(processes.starts).toBe(2);
  });

  test("a start that succeeds is the one the first use gets", async () => {
    const { s, processes } = server(entry("everything", "node", [EVERYTHING]));
    void s.warm({ listTools: true });
    const tools = await s.listTools();
    expect(tools.map((t) => t.name)).toContain("echo");
    const r = await s.callTool("echo", { message: "warm" }, 30_000);
    expect(JSON.stringify(r.content)).toContain("Echo: warm");
    expect(processes.starts).toBe(1);
  });
});

/** Whether a process is still there (signal 0 only asks). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("an upstream server started as the call that names it arrived", () => {
  test("the pool's first start takes that process: one process, and it answers", async () => {
    const early = new EarlyUpstreams(silentLogger, new UpstreamProcesses());
    const e = entry("everything", "node", [EVERYTHING]);
    early.start(e);
    const { s, processes } = server(e, 30_000, early);
    const r = await s.callTool("echo", { message: "taken" }, 30_000);
    expect(JSON.stringify(r.content)).toContain("Echo: taken");
    // Counted once, when the start took it; a second start would have counted a second process.
    expect(processes.starts).toBe(1);
    expect(early.claim("everything")).toBeUndefined();
  });

  test("one that failed before it was taken gives the start's error, with what it wrote to stderr", async () => {
    const early = new EarlyUpstreams(silentLogger, new UpstreamProcesses());
    const e = entry("broken", "node", ["-e", "console.error('broken on purpose: no token'); process.exit(3)"]);
    early.start(e);
    const { s } = server(e, 30_000, early);
    const err = await s.listTools().catch((x: Error) => x);
    expect(String(err)).toContain("server broken did not start");
    expect(String(err)).toContain("broken on purpose: no token");
    // The next use starts it afresh, as after any failed start.
    expect(String(await s.listTools().catch((x: Error) => x))).toContain("broken on purpose: no token");
  });

  test("a command that does not exist: the start says so, and nothing is left unhandled", async () => {
    const early = new EarlyUpstreams(silentLogger, new UpstreamProcesses());
    const e = entry("missing", "mcx-no-such-command-anywhere", []);
    early.start(e);
    const { s } = server(e, 30_000, early);
    const err = await s.listTools().catch((x: Error) => x);
    expect(String(err)).toContain("server missing did not start");
    expect(String(err)).toMatch(/not found.*mcx-no-such-command-anywhere|mcx-no-such-command-anywhere.*ENOENT/);
  });

  test("one nobody takes is stopped by discard(), and the exit's kill of the bridge's upstream processes ends what is left", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcx-early-"));
    // A server that writes its pid and then ignores its stdin ending: stop() must go on to SIGTERM.
    const stubborn = (name: string) =>
      entry(name, "node", [
        "-e",
        `require("fs").writeFileSync(${JSON.stringify(join(dir, name))}, String(process.pid)); setInterval(() => {}, 1000)`,
      ]);
    const processes = new UpstreamProcesses();
    const early = new EarlyUpstreams(silentLogger, processes);
    early.start(stubborn("unused"));
    const unused = Number(await fileSays(join(dir, "unused"), (t) => t.length > 0));
    early.discard();
    await until(() => !alive(unused));
    expect(early.claim("unused")).toBeUndefined();

    early.start(stubborn("left"));
    const left = Number(await fileSays(join(dir, "left"), (t) => t.length > 0));
    processes.killAllSync();
    await until(() => !alive(left));
  });

  test("each process is in the guard's list from its spawn, before any start takes it, and leaves it when it ends", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcx-early-guard-"));
    const list = new UpstreamsFile(join(dir, "bridge.upstreams"));
    const early = new EarlyUpstreams(silentLogger, new UpstreamProcesses(() => list));
    early.start(
      entry("guarded", "node", [
        "-e",
        `require("fs").writeFileSync(${JSON.stringify(join(dir, "pid"))}, String(process.pid)); setInterval(() => {}, 1000)`,
      ]),
    );
    const pid = Number(await fileSays(join(dir, "pid"), (t) => t.length > 0));
    // What the guard (host/watchdog.ts) reads to kill them if the bridge is killed.
    expect(readFileSync(list.path, "utf8")).toMatch(new RegExp(`^${pid} `, "m"));
    // Ended from outside: its end, not a kill of ours, takes it off the list.
    process.kill(pid, "SIGKILL");
    await until(() => !readFileSync(list.path, "utf8").includes(`${pid} `));
  });
});

/** Resolves once `done()` holds, checking every 20 ms (a process's end, seen from outside it). */
async function until(done: () => boolean, timeoutMs = 10_000): Promise<void> {
  const t0 = Date.now();
  while (!done()) {
    if (Date.now() - t0 > timeoutMs) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}
