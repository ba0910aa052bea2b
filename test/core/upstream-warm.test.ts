/**
 * An upstream server started ahead of its first use (UpstreamServer.warm: a run that names it is waiting
 * for its sandbox). Its failure is not made twice: the use it was made for hears it, and the use after
 * starts the server afresh; a use that joined the start heard it already. Real processes: a server that
 * exits at once, one that never answers, and server-everything from npm.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { ServerEntry } from "../../src/config/servers.ts";
import { silentLogger } from "../../src/log.ts";
import { UpstreamProcesses } from "../../src/upstream/processes.ts";
import { UpstreamServer } from "../../src/upstream/upstream-server.ts";
import { ROOT } from "../support/env.ts";

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
function server(e: ServerEntry, connectTimeoutMs = 30_000) {
  const processes = new CountingProcesses();
  const s = new UpstreamServer(e, { log: silentLogger, version: "0", connectTimeoutMs, onTools: () => {}, processes });
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
