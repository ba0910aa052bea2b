/**
 * The first call a user waits for: everything it needs starts at once. A first run_python that names
 * servers starts them while its sandbox starts (not once the sandbox is ready and its code reaches
 * them); a server that fails to start then fails the same way it did when started by the code, once,
 * and the bridge goes on serving. Real engines, a real upstream from npm (server-everything), the
 * compiled bridge under the SDK's client. Which came first is read from the bridge's own log.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startBridge } from "../support/bridge.ts";
import { ENGINES, ROOT } from "../support/env.ts";

const EVERYTHING = join(ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");

function homeWithServers(servers: Record<string, unknown>): string {
  const home = mkdtempSync(join(tmpdir(), "mcx-first-"));
  mkdirSync(join(home, ".config", "mcp", "servers"), { recursive: true });
  writeFileSync(join(home, ".config", "mcp", "servers", "s.json"), JSON.stringify({ mcpServers: servers }));
  return home;
}

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
