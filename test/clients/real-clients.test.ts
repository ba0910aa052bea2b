/**
 * The real clients our users run (Claude Code, Gemini CLI, Codex, mcporter, opencode) drive the compiled bridge
 * through their own config files in an isolated HOME. The model is a scripted stand-in on loopback (fake:
 * no model service can run here); what it records is exactly what a model would be shown.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLIENTS, runClaude, runCodex, type ClientName, type ClientRun } from "./clients.ts";
import { startAppServer, type AppServer } from "./codex-app-server.ts";
import { STEPS, type Seen, type Step } from "./scenario.ts";
import { startBridge } from "../support/bridge.ts";
import { waitFor } from "../support/engines.ts";
import { BINARY } from "../support/binary.ts";
import { ENGINES, ROOT } from "../support/env.ts";

const engine = ENGINES[0]!;
const INTERACTIVE = join(ROOT, "test", "fixtures", "interactive-server.ts");
const SLOW = 300_000;
const count = (text: string, needle: string) => text.split(needle).length - 1;

function byLabel(run: ClientRun): (label: string) => Seen {
  return (label) => {
    const s = run.seen.find((x) => x.label === label);
    if (!s)
      throw new Error(
        `the model never got the result of "${label}"; it got: ${run.seen.map((x) => x.label).join(", ")}\n${run.stderr.slice(-2000)}`,
      );
    return s;
  };
}

for (const name of ["claude", "gemini", "codex", "mcporter", "opencode"] as ClientName[]) {
  describe(`${name}: what the model gets from run_python`, () => {
    let seen: (label: string) => Seen;
    beforeAll(async () => {
      seen = byLabel(await CLIENTS[name]({ binary: BINARY, steps: STEPS, engine }));
    }, SLOW);

    test("our rendered text, not a JSON dump of structuredContent", () => {
      expect(seen("text").text).toContain("[value] 42");
      expect(seen("state-set").text).toContain("x is set");
      for (const s of ["text", "table", "proxied"]) expect(seen(s).text).not.toContain('"duration_ms"');
    });

    test("an error arrives once, with its traceback", () => {
      const { text } = seen("error");
      expect(text).toContain("ZeroDivisionError: division by zero");
      expect(count(text, "ZeroDivisionError: division by zero")).toBe(1);
      expect(text).toContain("line 2, in f");
    });

    test("a plot arrives as a PNG image", () => {
      expect(seen("image").images).toContain("image/png");
    });

    test("a DataFrame arrives as the compact table", () => {
      const { text } = seen("table");
      expect(text).toContain("rain_mm");
      expect(text).toContain("[1000 rows x 4 columns; showing 20 rows");
    });

    test("a file written to /tmp/outputs arrives with its content", () => {
      const { text } = seen("file");
      expect(text).toContain("report.csv");
      expect(text).toContain("Oslo,4.5");
    });

    test("a proxied call to an upstream MCP server (server-memory) works", () => {
      expect(seen("proxied").text).toContain("['Ada']");
    });

    test("a timeout interrupts the code and keeps the session", () => {
      expect(seen("timeout").text).toContain("timed out after 1s and was interrupted; the session and its variables were kept");
      expect(seen("after-timeout").text).toContain("41");
    });

    test("a sandbox killed for not stopping says the state is gone", () => {
      expect(seen("kill").text).toContain("all variables, imports and files in /tmp are gone");
      expect(seen("lost-state").text).toContain("NameError");
    });
  });
}

const CANCEL: Step[] = [
  { label: "state-set", args: { code: "x = 41" } },
  { label: "cancel", args: { code: "import time\ntime.sleep(30)\nprint('woke' + 'up')", timeout: 60 } },
  { label: "after-cancel", args: { code: "x" } },
];

for (const name of ["claude", "gemini", "codex", "opencode"] as ClientName[]) {
  test(
    `${name}: its own tool timeout cancels the call, the code stops and the session survives`,
    async () => {
      const t0 = performance.now();
      const run = await CLIENTS[name]({ binary: BINARY, steps: CANCEL, engine, toolTimeoutMs: 4_000 });
      const seen = byLabel(run);
      expect(seen("cancel").text).not.toContain("wokeup");
      expect(seen("after-cancel").text).toContain("41");
      // Had the cancel not reached the sandbox, `x` would have queued behind the 30 s sleep.
      expect(performance.now() - t0).toBeLessThan(28_000);
    },
    SLOW,
  );
}

test(
  "gemini: output that is a bare JSON number, list or boolean reaches its model as text, not as its own error",
  async () => {
    // Gemini CLI parses such text into structuredContent and refused anything but an object.
    const steps: Step[] = [
      { label: "number", args: { code: "print(1 + 1)" } },
      { label: "list", args: { code: "print([1, 2])" } },
      { label: "bool", args: { code: "print('true')" } },
    ];
    const run = await CLIENTS.gemini({ binary: BINARY, steps, engine });
    const seen = byLabel(run);
    expect(seen("number").text).toBe('{"output":"<untrusted_context>\\n2\\n</untrusted_context>"}');
    expect(seen("list").text).toContain("[1, 2]");
    expect(seen("bool").text).toContain("true");
    for (const label of ["number", "list", "bool"]) expect(seen(label).text).not.toContain("error");
  },
  SLOW,
);

test(
  "claude: speaks revision 2026-07-28 with the bridge; an approval comes back input_required and Claude Code's retry (it cannot ask in -p) finishes the call",
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcx-claude-modern-"));
    const wire = join(dir, "to-bridge.jsonl");
    const wrapper = join(dir, "bridge");
    writeFileSync(wrapper, `#!/bin/sh\ntee ${wire} | ${BINARY}\n`);
    chmodSync(wrapper, 0o755);
    const servers = join(dir, "servers.json");
    writeFileSync(servers, JSON.stringify({ mcpServers: { interactive: { command: process.execPath, args: [INTERACTIVE] } } }));
    const steps: Step[] = [
      {
        label: "ask",
        args: {
          code: 'try:\n    await mcp_interactive.delete_note(id="z")\nexcept Exception as e:\n    print(type(e).__name__, e)',
          servers: ["interactive"],
        },
      },
      { label: "after", args: { code: "print(2 + 3)" } },
    ];
    const run = await runClaude({
      binary: wrapper,
      steps,
      engine,
      bridgeEnv: { MCP_BRIDGE_CONFIG: servers, MCP_BRIDGE_ASK_TIMEOUT: "20" },
    });
    const seen = byLabel(run);
    expect(seen("ask").text).toContain(
      "McpPolicyError refused by policy: interactive/delete_note was denied by the user (the question was dismissed)",
    );
    expect(seen("after").text).toContain("5");
    const sent = readFileSync(wire, "utf8")
      .split("\n")
      .filter(Boolean)
      .map(
        (l) =>
          JSON.parse(l) as {
            method?: string;
            params?: { requestState?: string; inputResponses?: unknown; _meta?: Record<string, unknown> };
          },
      );
    expect(sent[0]!.method).toBe("server/discover");
    expect(sent.map((m) => m.method)).not.toContain("initialize");
    const retry = sent.find((m) => m.method === "tools/call" && m.params?.requestState);
    expect(retry?.params?.inputResponses).toBeDefined();
  },
  SLOW,
);

describe("codex app-server (how IDE extensions drive Codex)", () => {
  let app: AppServer;
  beforeAll(async () => {
    app = await startAppServer({ binary: BINARY, steps: CANCEL, engine });
  }, SLOW);
  afterAll(async () => {
    await app?.close();
  });

  test(
    "a direct tool call returns our text and the PNG, without structuredContent",
    async () => {
      const r = (await app.request("mcpServer/tool/call", {
        threadId: app.threadId,
        server: "code-exec",
        tool: "run_python",
        arguments: { code: "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nplt.plot([1, 2])\nNone" },
      })) as { content: Array<{ type: string; text?: string; mimeType?: string }>; structuredContent?: unknown };
      expect(r.content[0]).toEqual({ type: "text", text: "[1 image attached]" });
      expect(r.content[1]).toMatchObject({ type: "image", mimeType: "image/png" });
      expect(r.structuredContent ?? null).toBeNull();
    },
    SLOW,
  );

  test(
    "interrupting the turn cancels our call; the next turn finds the variables",
    async () => {
      const turn = (await app.request("turn/start", { threadId: app.threadId, input: [{ type: "text", text: "go" }] })).turn as {
        id: string;
      };
      await app.notification((m) => m.method === "item/started" && JSON.stringify(m.params).includes("time.sleep(30)"));
      await app.request("turn/interrupt", { threadId: app.threadId, turnId: turn.id });
      await app.notification((m) => m.method === "turn/completed" && (m.params as { turn?: { id: string } }).turn?.id === turn.id);
      const next = (await app.request("turn/start", { threadId: app.threadId, input: [{ type: "text", text: "again" }] })).turn as {
        id: string;
      };
      await app.notification((m) => m.method === "turn/completed" && (m.params as { turn?: { id: string } }).turn?.id === next.id);
      const seen = (label: string) => app.stub.seen.find((s) => s.label === label)?.text ?? "";
      expect(seen("cancel")).toContain("aborted");
      expect(seen("after-cancel")).toContain("[value] 41");
    },
    SLOW,
  );
});

describe("a missing image is visible before the first call", () => {
  // One state dir for both clients: a slow engine's answer comes too late for the first handshake (which
  // waits at most 250 ms) and is used from the next start on.
  // Not pulled: a missing image the bridge may pull is not a problem yet (test/e2e/image-pull.test.ts).
  const missing = () => ({ MCP_BRIDGE_IMAGE: "mcp-code-exec-sandbox:missing", MCP_BRIDGE_PULL: "never", MCP_BRIDGE_STATE_DIR: stateDir });
  const stateDir = mkdtempSync(join(tmpdir(), "mcx-missing-"));

  beforeAll(async () => {
    // A start that lives until its check has answered leaves that answer for the clients' starts.
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_PREWARM: "0", ...missing() });
    await waitFor(async () => bridge.stderr().includes("run_python cannot work until this is fixed"), 60_000);
    await bridge.close();
  }, SLOW);

  test(
    "codex: the instructions describe our tool namespace to the model",
    async () => {
      const run = await runCodex({ binary: BINARY, steps: [], engine, bridgeEnv: missing() });
      const tools = JSON.stringify((run.requests[0] as { body: { tools: unknown } }).body.tools);
      expect(tools).toContain("mcp-code-exec runs Python");
      expect(tools).toContain("`mcp-code-exec image build`");
    },
    SLOW,
  );

  test(
    "claude: the model's prompt carries our instructions with the fix, and the call names binary commands",
    async () => {
      const run = await runClaude({ binary: BINARY, steps: [{ label: "first", args: { code: "1" } }], engine, bridgeEnv: missing() });
      const prompt = JSON.stringify(run.requests);
      expect(prompt).toContain("MCP Server Instructions");
      expect(prompt).toContain("Not ready: the sandbox image mcp-code-exec-sandbox:missing is not in");
      expect(prompt).toContain("`mcp-code-exec image build`");
      const first = byLabel(run)("first");
      expect(first.isError).toBe(true);
      expect(first.text).toContain("`mcp-code-exec image build`");
      expect(first.text).toContain("`mcp-code-exec image load FILE`");
      expect(first.text).not.toContain("scripts/");
    },
    SLOW,
  );
});

test(
  "codex with MCP_BRIDGE_STRUCTURED_CONTENT=1: the model gets the structured JSON, as documented",
  async () => {
    const run = await runCodex({
      binary: BINARY,
      steps: [{ label: "text", args: { code: "x = 1\n41 + x" } }],
      engine,
      bridgeEnv: { MCP_BRIDGE_STRUCTURED_CONTENT: "1" },
    });
    const text = byLabel(run)("text").text;
    expect(text).toContain('"value":"42"');
    expect(text).not.toContain("[value] 42");
  },
  SLOW,
);
