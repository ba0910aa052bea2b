/**
 * The real clients our users run, over HTTP: each reaches the compiled binary's `serve --http` with a
 * static token (MCP_BRIDGE_HTTP_TOKENS), registered the way its docs say (http-clients.ts). The models
 * are scripted stand-ins on loopback (fake: no model service can run here); what they record is exactly
 * what a model was shown. The bridge logs each request's revision at DEBUG, which says what each client
 * speaks over HTTP.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { world, type ClientRun } from "./clients.ts";
import { HTTP_CLIENTS, runClaudeHttp, runInspectorHttp, type HttpClientName } from "./http-clients.ts";
import { STEPS, type Seen } from "./scenario.ts";
import { BINARY } from "../support/binary.ts";
import { ENGINES, ROOT } from "../support/env.ts";
import { legacyClient, startHttpBridge, type HttpBridge } from "../support/http-bridge.ts";

const engine = ENGINES[0]!;
const SLOW = 300_000;
const TOKEN = `team-${crypto.randomUUID()}`;
/** The scenario's key results: state across calls, text, an error, a plot, a table, a file, a proxied call. */
const HTTP_STEPS = ["state-set", "text", "error", "image", "table", "file", "proxied"].map((l) => STEPS.find((s) => s.label === l)!);

/**
 * What each client speaks to an HTTP server, as the bridge saw it: 2026-07-28's stateless requests, or a
 * protocol session: the revision its initialize asks for, the MCP-Protocol-Version header its later
 * requests carry (null: none, which the spec reads as 2025-03-26), and whether it ends the session
 * (DELETE) when it is done.
 */
type Speaks = { era: "stateless"; protocol: string } | { era: "session"; initialize: string; header: string | null; deletes: boolean };
const SPEAKS: Record<HttpClientName, Speaks> = {
  claude: { era: "stateless", protocol: "2026-07-28" },
  codex: { era: "session", initialize: "2025-06-18", header: "2025-06-18", deletes: true },
  gemini: { era: "session", initialize: "2025-06-18", header: null, deletes: false },
  mcporter: { era: "session", initialize: "2025-11-25", header: "2025-11-25", deletes: false },
  inspector: { era: "session", initialize: "2025-11-25", header: "2025-11-25", deletes: false },
};
const said = (s: Speaks) => (s.era === "stateless" ? s.protocol : `protocol sessions at ${s.initialize}`);

interface Logged {
  msg: string;
  principal?: string;
  era?: string;
  http?: string;
  method?: string;
  protocol?: string;
  client?: string;
}

/** A bridge of its own for one client: the scenario's upstream `memory` server, one signed-in user. */
async function bridgeFor(name: string, extra: Record<string, string> = {}): Promise<{ bridge: HttpBridge; requests: () => Logged[] }> {
  const { home, env } = world(`${name}-bridge`, { binary: BINARY, steps: [], engine });
  const bridge = await startHttpBridge({
    ...env,
    ...extra,
    HOME: home,
    MCP_BRIDGE_HTTP_TOKENS: `${name}=${TOKEN}`,
    MCP_BRIDGE_STRUCTURED_CONTENT: "0",
    MCP_BRIDGE_PREWARM: "0",
    MCP_BRIDGE_LOG_LEVEL: "DEBUG",
    MCP_BRIDGE_LOG_FORMAT: "json",
  });
  const requests = () =>
    bridge
      .stderr()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Logged)
      .filter((l) => l.msg === "mcp request");
  return { bridge, requests };
}

function byLabel(run: ClientRun, bridge: HttpBridge): (label: string) => Seen {
  return (label) => {
    const s = run.seen.find((x) => x.label === label);
    if (!s)
      throw new Error(
        `the model never got the result of "${label}"; it got: ${run.seen.map((x) => x.label).join(", ")}\n${run.stderr.slice(-2000)}\n${bridge.stderr().slice(-2000)}`,
      );
    return s;
  };
}

for (const name of Object.keys(HTTP_CLIENTS) as HttpClientName[]) {
  describe(`${name} over HTTP with a bearer token: what the model gets from run_python`, () => {
    let bridge: HttpBridge;
    let requests: () => Logged[];
    let seen: (label: string) => Seen;
    beforeAll(async () => {
      ({ bridge, requests } = await bridgeFor(name));
      const run = await HTTP_CLIENTS[name]({ url: bridge.url, token: TOKEN, steps: HTTP_STEPS });
      seen = byLabel(run, bridge);
    }, SLOW);
    afterAll(async () => {
      expect(await bridge?.close()).toBe(0);
    });

    test(`it signs in with the token on every request and speaks ${said(SPEAKS[name])}`, () => {
      const sent = requests();
      expect(sent.length).toBeGreaterThan(0);
      for (const r of sent) expect(r.principal).toBe(`token:${name}`);
      const calls = sent.filter((r) => r.method === "tools/call");
      expect(calls.length).toBe(HTTP_STEPS.length);
      const s = SPEAKS[name];
      if (s.era === "stateless") {
        for (const r of sent) expect({ era: r.era, protocol: r.protocol }).toEqual({ era: "stateless", protocol: s.protocol });
        return;
      }
      const inits = sent.filter((r) => r.method === "initialize");
      expect(inits.length).toBeGreaterThan(0);
      for (const r of inits) expect(r.protocol).toBe(s.initialize);
      for (const r of calls) expect({ era: r.era, header: r.protocol ?? null }).toEqual({ era: "session", header: s.header });
      expect(sent.some((r) => r.http === "DELETE")).toBe(s.deletes);
    });

    test("our rendered text, and state kept from one call to the next", () => {
      expect(seen("state-set").text).toContain("x is set");
      expect(seen("text").text).toContain("[value] 42");
      for (const s of ["text", "table", "proxied"]) expect(seen(s).text).not.toContain('"duration_ms"');
    });

    test("an error arrives once, with its traceback", () => {
      const { text } = seen("error");
      expect(text.split("ZeroDivisionError: division by zero")).toHaveLength(2);
      expect(text).toContain("line 2, in f");
    });

    test("a plot arrives as a PNG image", () => {
      expect(seen("image").images).toContain("image/png");
    });

    test("a DataFrame arrives as the compact table, and a file in /tmp/outputs with its content", () => {
      expect(seen("table").text).toContain("[1000 rows x 4 columns; showing 20 rows");
      expect(seen("file").text).toContain("Oslo,4.5");
    });

    test("a proxied call to the upstream server-memory works", () => {
      expect(seen("proxied").text).toContain("['Ada']");
    });
  });
}

test(
  "the Inspector CLI with --protocol-era modern speaks 2026-07-28: each call a new process, and the user's state kept without a handle",
  async () => {
    const { bridge, requests } = await bridgeFor("inspector");
    try {
      const steps = HTTP_STEPS.filter((s) => s.label === "state-set" || s.label === "text");
      const run = await runInspectorHttp({ url: bridge.url, token: TOKEN, steps, era: "modern", carrySession: false });
      const seen = byLabel(run, bridge);
      expect(seen("state-set").text).toContain("x is set");
      expect(seen("text").text).toContain("[value] 42");
      const sent = requests();
      expect(sent.filter((r) => r.method === "tools/call")).toHaveLength(2);
      for (const r of sent) expect({ era: r.era, protocol: r.protocol }).toEqual({ era: "stateless", protocol: "2026-07-28" });
    } finally {
      await bridge.close();
    }
  },
  SLOW,
);

test(
  "one-shot clients that leave without ending their protocol session (the Inspector CLI) are served past the user's limits: the least recently used unused session makes room, a handle in use outlives its session, and a client holding its stream is never taken",
  async () => {
    const { bridge } = await bridgeFor("inspector", { MCP_BRIDGE_HTTP_MAX_CONNECTIONS: "3", MCP_BRIDGE_MAX_SESSIONS_PER_USER: "2" });
    const held = await legacyClient(bridge.url, TOKEN); // holds its standalone SSE stream open while it lives
    try {
      expect((await held.run("kept = 'held'")).isError).toBe(false);
      const once = Array.from({ length: 4 }, (_, i) => ({ label: `once-${i}`, args: { code: "1 + 1" } }));
      const anonymous = await runInspectorHttp({ url: bridge.url, token: TOKEN, steps: once, carrySession: false });
      for (const s of anonymous.seen) expect(s.text).toContain("[value] 2");
      const state = [HTTP_STEPS[0]!, ...Array.from({ length: 4 }, (_, i) => ({ label: `again-${i}`, args: { code: "x + 1" } }))];
      const carried = await runInspectorHttp({ url: bridge.url, token: TOKEN, steps: state });
      for (const s of carried.seen.slice(1)) expect(s.text).toContain("[value] 42");
      expect((await held.run("kept")).text).toContain("'held'");
      expect(bridge.stderr()).toContain("unused, with no stream open; ended to make room");
    } finally {
      await held.close();
      await bridge.close();
    }
  },
  SLOW,
);

test(
  "claude over HTTP: an approval comes back input_required on its stateless POST, and Claude Code's retry (it cannot ask in -p) finishes the call",
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcx-claude-http-ask-"));
    const servers = join(dir, "servers.json");
    const fixture = join(ROOT, "test", "fixtures", "interactive-server.ts");
    writeFileSync(servers, JSON.stringify({ mcpServers: { interactive: { command: process.execPath, args: [fixture] } } }));
    const { bridge, requests } = await bridgeFor("claude", { MCP_BRIDGE_CONFIG: servers, MCP_BRIDGE_ASK_TIMEOUT: "20" });
    try {
      const steps = [
        {
          label: "ask",
          args: {
            code: 'try:\n    await mcp_interactive.delete_note(id="z")\nexcept Exception as e:\n    print(type(e).__name__, e)',
            servers: ["interactive"],
          },
        },
        { label: "after", args: { code: "print(2 + 3)" } },
      ];
      const run = await runClaudeHttp({ url: bridge.url, token: TOKEN, steps });
      const seen = byLabel(run, bridge);
      expect(seen("ask").text).toContain(
        "McpPolicyError refused by policy: interactive/delete_note was denied by the user (the question was dismissed)",
      );
      expect(seen("after").text).toContain("5");
      // The asking call was sent twice (the question's answer came with the retry), the next once.
      const calls = requests().filter((r) => r.method === "tools/call");
      expect(calls).toHaveLength(3);
      for (const r of calls) expect(r.era).toBe("stateless");
    } finally {
      await bridge.close();
    }
  },
  SLOW,
);
