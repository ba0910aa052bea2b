/**
 * A hostile upstream server against the compiled bridge, on every engine: what sandbox code sees of the
 * credentials the bridge sends (nothing), and what the host keeps (the bridge answers; its log holds no
 * secret). The upstream is test/fixtures/hostile-upstream.ts, over stdio and over Streamable HTTP.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startBridge, type BridgeHandle } from "../support/bridge.ts";
import { ENGINES, ROOT } from "../support/env.ts";

const FIXTURE = join(ROOT, "test", "fixtures", "hostile-upstream.ts");
/** Sent as a Bearer token to the HTTP upstream, and as a stdio upstream's env value. */
const TOKEN = `tok${crypto.randomUUID().replace(/-/g, "")}`;
/** A key some services put in the URL's path. */
const PATH_KEY = `k${crypto.randomUUID().replace(/-/g, "").slice(0, 24)}`;

let http: ReturnType<typeof Bun.spawn>;
let port = 0;

beforeAll(async () => {
  http = Bun.spawn([process.execPath, FIXTURE, "--http"], { stdout: "ignore", stderr: "pipe" });
  const reader = http.stderr.getReader();
  let seen = "";
  while (!/port=\d+/.test(seen)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the fixture did not start: ${seen}`);
    seen += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  port = Number(/port=(\d+)/.exec(seen)![1]);
});
afterAll(() => http?.kill());

function world(): { home: string; env: Record<string, string> } {
  const home = mkdtempSync(join(tmpdir(), "mcx-hostile-"));
  mkdirSync(join(home, ".config", "mcp", "servers"), { recursive: true });
  writeFileSync(
    join(home, ".config", "mcp", "servers", "hostile.json"),
    JSON.stringify({
      mcpServers: {
        hostile: { command: process.execPath, args: [FIXTURE], env: { HOSTILE_TOKEN: "${HOSTILE_TOKEN}" } },
        remote: {
          type: "http",
          url: `http://127.0.0.1:${port}/mcp/${PATH_KEY}`,
          headers: { Authorization: "Bearer ${HOSTILE_TOKEN}" },
        },
      },
    }),
  );
  return { home, env: { HOME: home, MCP_BRIDGE_STATE_DIR: join(home, "state"), HOSTILE_TOKEN: TOKEN, MCP_BRIDGE_LOG_LEVEL: "DEBUG" } };
}

describe.each(ENGINES)("a hostile upstream on %s", (engine) => {
  let bridge: BridgeHandle;
  let home: string;
  beforeAll(async () => {
    const w = world();
    home = w.home;
    bridge = await startBridge({ ...w.env, MCP_BRIDGE_RUNTIME: engine });
  }, 60_000);
  afterAll(async () => {
    await bridge?.close();
    rmSync(home, { recursive: true, force: true });
  });

  /** Everything the run gave sandbox code and the model, as one string. */
  const everything = (r: { text: string; structured: Record<string, unknown> }) => `${r.text}\n${JSON.stringify(r.structured)}`;

  test("no credential the bridge sends reaches sandbox code: errors quoting headers, an HTTP 500 body, results, env echoes, the URL's path", async () => {
    const code = `
from mcp import runtime
seen = {}
for server, tool, args in [
    ("remote", "echo_headers", {}),
    ("remote", "http_500", {}),
    ("remote", "result_headers", {}),
    ("hostile", "env_echo", {}),
    ("hostile", "env_echo", {"fail": True}),
]:
    try:
        seen[f"{server}.{tool}{'!' if args else ''}"] = await runtime.call_tool(server, tool, args)
    except Exception as e:
        seen[f"{server}.{tool}{'!' if args else ''}"] = f"{type(e).__name__}: {e}"
seen["describe"] = runtime.describe_server("remote")
seen["listed"] = runtime.discovered_servers()
repr(seen)
`;
    const r = await bridge.run(code, { servers: ["hostile", "remote"] });
    expect(r.isError).toBe(false);
    const all = everything(r);
    // What code saw: the calls came back (the errors with their messages), with the credentials removed.
    expect(all).toContain("[credential removed]");
    expect(all).toContain("remote.http_500");
    expect(all).toContain("500");
    expect(all).toContain("you sent");
    expect(all).toMatch(/HOSTILE_TOKEN\W+\[credential removed\]/);
    expect(all).toContain("token [credential removed] is not valid");
    expect(all).toContain("/mcp/***");
    expect(all).not.toContain(TOKEN);
    expect(all).not.toContain(PATH_KEY);
    // What the host kept: the bridge's own log (at debug) holds neither.
    expect(bridge.stderr()).not.toContain(TOKEN);
    // The bridge still serves.
    expect((await bridge.run("1 + 1")).structured.value).toBe("2");
  }, 120_000);
});
