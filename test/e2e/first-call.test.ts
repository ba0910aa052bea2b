/**
 * The first call a user waits for: everything it needs starts at once. A first run_python that names
 * servers starts them while its sandbox starts (not once the sandbox is ready and its code reaches
 * them); a server that fails to start then fails the same way it did when started by the code, once,
 * and the bridge goes on serving. Real engines, a real upstream from npm (server-everything), the
 * compiled bridge under the SDK's client. Which came first is read from the bridge's own log.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startBridge } from "../support/bridge.ts";
import { fileSays } from "../support/events.ts";
import { BINARY } from "../support/binary.ts";
import { bridgeEnv, ENGINES, ROOT } from "../support/env.ts";

const EVERYTHING = join(ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");

function homeWithServers(servers: Record<string, unknown>): string {
  const home = mkdtempSync(join(tmpdir(), "mcx-first-"));
  mkdirSync(join(home, ".config", "mcp", "servers"), { recursive: true });
  writeFileSync(join(home, ".config", "mcp", "servers", "s.json"), JSON.stringify({ mcpServers: servers }));
  return home;
}

/** How many lines of the log say `what`. */
const count = (stderr: string, what: string) => stderr.split("\n").filter((l) => l.includes(what)).length;

/** How often the log says `server` was started. */
const starts = (stderr: string, server: string) =>
  stderr.split("\n").filter((l) => l.includes("starting upstream server") && l.includes(`server=${server}`)).length;

describe.each(ENGINES)("a first call with servers on %s", (engine) => {
  test("its upstream starts while the sandbox starts, and the call reaches the upstream's tools", async () => {
    const home = homeWithServers({ everything: { command: "node", args: [EVERYTHING] } });
    // A fresh state dir: no tool list cached, so the run's proxies need the live server.
    const bridge = await startBridge(
      {
        HOME: home,
        MCP_BRIDGE_RUNTIME: engine,
        MCP_BRIDGE_STATE_DIR: join(home, "state"),
        MCP_BRIDGE_PREWARM: "0",
        MCP_BRIDGE_LOG_LEVEL: "DEBUG",
      },
      { cwd: home },
    );
    try {
      const r = await bridge.run("(await mcp_everything.echo(message='at once'))", { servers: ["everything"] });
      expect(r.isError).toBe(false);
      expect(String(r.structured.value)).toContain("Echo: at once");
      const log = bridge.stderr();
      // Before: the upstream was started by the code, so only after the sandbox was ready.
      expect(log.indexOf("starting upstream server server=everything")).toBeGreaterThan(-1);
      expect(log.indexOf("starting upstream server server=everything")).toBeLessThan(log.indexOf("sandbox ready"));
      expect(starts(log, "everything")).toBe(1);
    } finally {
      await bridge.close();
    }
  });
});

describe.each(ENGINES)("the first sandbox on %s starts before the rest of the bridge has loaded", (engine) => {
  // A state dir where an earlier start left its startup check's answer, as on every start but a machine's
  // first: the opening is answered at once, and the rest of the bridge loads after it.
  const state = mkdtempSync(join(tmpdir(), "mcx-first-state-"));
  beforeAll(async () => {
    const first = await startBridge({ MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_PREWARM: "0", MCP_BRIDGE_STATE_DIR: state });
    await fileSays(join(state, "readiness.json"), (text) => text.includes(engine));
    await first.close();
  });

  test("a prewarm started at initialize is the sandbox of a call that comes at once", async () => {
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_LOG_LEVEL: "DEBUG", MCP_BRIDGE_STATE_DIR: state });
    try {
      // At once: the client's connect() returns with initialize answered and `initialized` sent.
      expect((await bridge.run("print('at once')")).text).toContain("at once");
      const log = bridge.stderr();
      expect(log).toContain("starting the first sandbox while the bridge loads why=prewarm");
      // Begun before the bridge had made its sessions (the prewarm used to begin there, at `initialized`).
      expect(log.indexOf("starting the first sandbox while the bridge loads")).toBeLessThan(log.indexOf("session opened"));
      // One sandbox, used by the call: it was the first run in it.
      expect(count(log, "starting sandbox ")).toBe(1);
      expect(count(log, "session opened")).toBe(1);
      expect(log).toMatch(/run trace .*first_in_sandbox=true/);
    } finally {
      await bridge.close();
    }
  });

  test("with prewarm off, a call that comes with the opening starts its own sandbox at once, and the next call uses it", async () => {
    const bridge = rawBridge(
      { MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_PREWARM: "0", MCP_BRIDGE_STATE_DIR: state },
      { code: "print('first')" },
    );
    try {
      expect(await bridge.answerTo(1)).toContain("first");
      bridge.send(call(2, { code: "print('second')" }));
      expect(await bridge.answerTo(2)).toContain("second");
    } finally {
      await bridge.end();
    }
    const log = bridge.log();
    expect(log).toContain("starting the first sandbox while the bridge loads why=call");
    expect(log.indexOf("starting the first sandbox while the bridge loads")).toBeLessThan(log.indexOf("session opened"));
    expect(count(log, "starting sandbox ")).toBe(1);
    expect(count(log, "session opened")).toBe(1);
  });

  test("the servers such a call names start as it arrives, before the rest of the bridge has loaded, except one the policy denies", async () => {
    const home = homeWithServers({
      everything: { command: "node", args: [EVERYTHING] },
      denied: { command: "node", args: [EVERYTHING] },
    });
    const bridge = rawBridge(
      { HOME: home, MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_PREWARM: "0", MCP_BRIDGE_STATE_DIR: state, MCP_BRIDGE_DENY_SERVERS: "denied" },
      { code: "(await mcp_everything.echo(message='early'))", servers: ["everything", "denied"] },
    );
    try {
      // The call itself is refused: it names a server the policy denies.
      expect(await bridge.answerTo(1)).toContain('server denied matches \\"denied\\"');
      bridge.send(call(2, { code: "(await mcp_everything.echo(message='early'))", servers: ["everything"] }));
      expect(await bridge.answerTo(2)).toContain("Echo: early");
    } finally {
      await bridge.end();
    }
    const log = bridge.log();
    // Started as the call arrived: before its sandbox, and before the bridge had loaded (its sessions, its pool).
    expect(log).toContain("starting upstream server server=everything early=true");
    expect(log.indexOf("starting upstream server server=everything")).toBeLessThan(log.indexOf("starting the first sandbox"));
    expect(log.indexOf("starting upstream server server=everything")).toBeLessThan(log.indexOf("session opened"));
    // One process, the one the bridge's pool took (none stopped as unused, none started twice).
    expect(starts(log, "everything")).toBe(1);
    expect(count(log, "upstream server connected server=everything")).toBe(1);
    expect(log).not.toContain("was not used");
    expect(starts(log, "denied")).toBe(0);
  });

  test("a server from the opened folder that the user has not approved is not started by such a call", async () => {
    const home = homeWithServers({});
    const project = mkdtempSync(join(tmpdir(), "mcx-first-project-"));
    const ran = join(project, "ran");
    writeFileSync(
      join(project, ".mcp.json"),
      JSON.stringify({
        mcpServers: { repo: { command: "node", args: ["-e", `require("fs").writeFileSync(${JSON.stringify(ran)}, "ran")`] } },
      }),
    );
    const bridge = rawBridge(
      { HOME: home, MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_PREWARM: "0", MCP_BRIDGE_STATE_DIR: state },
      { code: "print(1)", servers: ["repo"] },
      project,
    );
    try {
      expect(await bridge.answerTo(1)).toContain("needs your approval before it may start");
      // The bridge goes on serving.
      bridge.send(call(2, { code: "print('still here')" }));
      expect(await bridge.answerTo(2)).toContain("still here");
    } finally {
      await bridge.end();
    }
    expect(starts(bridge.log(), "repo")).toBe(0);
    expect(existsSync(ran)).toBe(false);
  });
});

describe.each(ENGINES)("with prewarm on %s, the servers the last session in a folder used start at initialize", (engine) => {
  const env = (home: string, extra: Record<string, string> = {}) => ({
    HOME: home,
    MCP_BRIDGE_RUNTIME: engine,
    MCP_BRIDGE_STATE_DIR: join(home, "state"),
    MCP_BRIDGE_PREWARM: "1",
    MCP_BRIDGE_LOG_LEVEL: "DEBUG",
    ...extra,
  });

  test("the next session's server is up before its first call, which uses that process", async () => {
    const home = homeWithServers({ everything: { command: "node", args: [EVERYTHING] } });
    const first = await startBridge(env(home), { cwd: home });
    try {
      // Nothing remembered yet: no server starts before a call names it.
      expect((await first.run("print('no servers')")).text).toContain("no servers");
      expect(starts(first.stderr(), "everything")).toBe(0);
      expect((await first.run("(await mcp_everything.echo(message='one'))", { servers: ["everything"] })).text).toContain("Echo: one");
    } finally {
      await first.close();
    }
    const next = await startBridge(env(home), { cwd: home });
    try {
      // Up with no call made: started at initialize.
      await next.stderrSays((t) => t.includes("upstream server connected server=everything"));
      expect(next.stderr()).toContain("starting the servers the last session in this folder used");
      const r = await next.run("(await mcp_everything.echo(message='two'))", { servers: ["everything"] });
      expect(r.text).toContain("Echo: two");
      expect(starts(next.stderr(), "everything")).toBe(1);
      expect(next.stderr()).not.toContain("was not used");
    } finally {
      await next.close();
    }
    // Turned off: the same memory starts nothing (the sandbox's start, begun at initialize too, comes after it).
    const off = await startBridge(env(home, { MCP_BRIDGE_PREWARM_SERVERS: "0" }), { cwd: home });
    try {
      expect((await off.run("print('off')")).text).toContain("off");
      expect(starts(off.stderr(), "everything")).toBe(0);
    } finally {
      await off.close();
    }
  });

  test("a remembered server whose definition changed since it was approved is not started", async () => {
    const home = homeWithServers({});
    const project = mkdtempSync(join(tmpdir(), "mcx-prewarm-project-"));
    const ran = join(project, "ran");
    const define = (tag: string) =>
      writeFileSync(
        join(project, ".mcp.json"),
        JSON.stringify({
          mcpServers: {
            repo: { command: "node", args: [EVERYTHING], env: { TAG: tag } },
            marker: { command: "sh", args: ["-c", `echo ${tag} >> ${ran}; exec node ${EVERYTHING}`] },
          },
        }),
      );
    define("approved");
    const trust = (name: string) => Bun.spawnSync([BINARY, "servers", "trust", name], { cwd: project, env: bridgeEnv(env(home)) });
    expect(trust("repo").exitCode).toBe(0);
    expect(trust("marker").exitCode).toBe(0);
    const first = await startBridge(env(home), { cwd: project });
    try {
      const r = await first.run("(await mcp_repo.echo(message='ok'))", { servers: ["repo", "marker"] });
      expect(r.text).toContain("Echo: ok");
    } finally {
      await first.close();
    }
    expect(existsSync(ran)).toBe(true);
    const before = Bun.file(ran).size;
    // The repository changes both definitions: each needs approving again.
    define("changed");
    const next = await startBridge(env(home), { cwd: project });
    try {
      expect((await next.run("print('prewarmed')")).text).toContain("prewarmed");
      expect(starts(next.stderr(), "repo")).toBe(0);
      expect(starts(next.stderr(), "marker")).toBe(0);
    } finally {
      await next.close();
    }
    // The changed command never ran.
    expect(Bun.file(ran).size).toBe(before);
  });
});

const call = (id: number, args: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "run_python", arguments: args },
});

/**
 * The compiled bridge over raw JSON-RPC, its opening and a first call (id 1) written at once: the call
 * is there before the rest of the bridge has loaded. DEBUG log kept for reading once it ends.
 */
function rawBridge(env: Record<string, string>, first: Record<string, unknown>, cwd?: string) {
  const proc = Bun.spawn([BINARY], {
    cwd,
    env: bridgeEnv({ ...env, MCP_BRIDGE_LOG_LEVEL: "DEBUG" }),
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const send = (...messages: unknown[]) => {
    proc.stdin.write(`${messages.map((m) => JSON.stringify(m)).join("\n")}\n`);
    void proc.stdin.flush();
  };
  send(
    {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } },
    },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    call(1, first),
  );
  const replies = answers(proc.stdout);
  let stderr = "";
  const stderrRead = new Response(proc.stderr).text().then((t) => (stderr = t));
  return {
    send,
    answerTo: replies.answerTo,
    async end() {
      proc.stdin.end();
      await proc.exited;
      await stderrRead;
    },
    log: () => stderr,
  };
}

/** The answers on a bridge's stdout, by request id (the JSON-RPC response's text). */
function answers(stdout: ReadableStream<Uint8Array>) {
  const reader = stdout.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  const seen = new Map<number, string>();
  return {
    async answerTo(id: number): Promise<string> {
      while (!seen.has(id)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the bridge closed its stdout before answering request ${id}`);
        buffered += decoder.decode(value, { stream: true });
        let nl: number;
        while ((nl = buffered.indexOf("\n")) >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          const m = JSON.parse(line) as { id?: number };
          if (typeof m.id === "number") seen.set(m.id, line);
        }
      }
      return seen.get(id)!;
    },
  };
}

describe("an upstream that fails to start while the first call's sandbox starts", () => {
  test("the call hears the same clear error it heard when the code started it, the server is started once, and the bridge keeps serving", async () => {
    const home = homeWithServers({
      broken: { command: "node", args: ["-e", "console.error('broken on purpose: no token'); process.exit(3)"] },
      everything: { command: "node", args: [EVERYTHING] },
    });
    const bridge = await startBridge(
      {
        HOME: home,
        MCP_BRIDGE_RUNTIME: ENGINES[0]!,
        MCP_BRIDGE_STATE_DIR: join(home, "state"),
        MCP_BRIDGE_PREWARM: "0",
        MCP_BRIDGE_LOG_LEVEL: "DEBUG",
      },
      { cwd: home },
    );
    const code =
      "from mcp import McpToolError\ntry:\n    await mcp_broken.echo(message='x')\n    out = 'no error'\nexcept McpToolError as e:\n    out = f'{type(e).__name__}: {e}'\nout";
    try {
      const first = await bridge.run(code, { servers: ["broken"] });
      const said = String(first.structured.value);
      expect(said).toContain("server broken did not start");
      expect(said).toContain("broken on purpose: no token");
      expect(said).toContain(join(home, ".config", "mcp", "servers", "s.json"));
      // Started ahead of the code, and not started again when the code reached it: the failure was kept for it.
      expect(starts(bridge.stderr(), "broken")).toBe(1);
      // The bridge goes on: other calls work, and the next call that needs the server tries it afresh.
      expect((await bridge.run("print(6 * 7)")).text).toContain("42");
      const ok = await bridge.run("(await mcp_everything.echo(message='still here'))", { servers: ["everything"] });
      expect(String(ok.structured.value)).toContain("Echo: still here");
      const again = await bridge.run(code, { servers: ["broken"] });
      expect(String(again.structured.value)).toContain("server broken did not start");
      expect(starts(bridge.stderr(), "broken")).toBe(2);
    } finally {
      await bridge.close();
    }
  });
});
