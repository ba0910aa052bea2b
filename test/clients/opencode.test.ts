/**
 * What is special to opencode (npm `opencode-ai`), beside the scenario every real client runs
 * (real-clients.test.ts): it runs many conversations through one bridge (`opencode serve`), its MCP
 * client gives up on a call after 60 s without progress, and `opencode run --continue` starts a new
 * bridge under a conversation that remembers variables. The model is a scripted stand-in on loopback.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OWN_SESSION_HINT } from "../../src/server/instructions.ts";
import { startAnthropicStub } from "./anthropic-stub.ts";
import { startConversationsStub, type ModelView, type ScriptedStep } from "./conversations-stub.ts";
import { opencodeServe, opencodeWorld, runOpencode } from "./opencode.ts";
import type { Seen, Step } from "./scenario.ts";
import { BINARY } from "../support/binary.ts";
import { ENGINES } from "../support/env.ts";

const engine = ENGINES[0]!;
const SLOW = 300_000;

function labelled(seen: Seen[], stderr = ""): (label: string) => Seen {
  return (label) => {
    const s = seen.find((x) => x.label === label);
    if (!s) throw new Error(`the model never got "${label}"; it got: ${seen.map((x) => x.label).join(", ")}\n${stderr.slice(-3000)}`);
    return s;
  };
}

test(
  "opencode: `opencode mcp list` shows the bridge connected; the model's system prompt carries our instructions",
  async () => {
    const w = opencodeWorld({ binary: BINARY, steps: [], engine });
    const stub = startAnthropicStub([{ label: "text", args: { code: "41 + 1" } }]);
    try {
      w.useModel(stub.url);
      const list = await w.opencode(["mcp", "list"]);
      // biome-ignore lint/suspicious/noControlCharactersInRegex: its colours, printed whatever NO_COLOR says
      expect(`${list.stdout}${list.stderr}`.replace(/\x1b\[[\d;]*m/g, "")).toMatch(/✓ code-exec\s+connected/);
      const r = await w.opencode(["run", "Use run_python."]);
      expect(labelled(stub.seen, r.stderr)("text").text).toBe("[value] 42");
      const { system } = (stub.requests.at(-1) as { body: { system: Array<{ text: string }> } }).body;
      const prompt = system.map((b) => b.text).join("\n");
      expect(prompt).toContain("mcp-code-exec runs Python");
      // opencode runs many conversations through one bridge: its model is told to keep a session of its own.
      expect(prompt).toContain(OWN_SESSION_HINT);
    } finally {
      stub.close();
    }
  },
  SLOW,
);

test(
  "opencode: a silent 75 s run outlives opencode's 60 s request timeout (the bridge sends progress while the code says nothing)",
  async () => {
    // An entry written by hand, without `timeout`: opencode's client gives up after 60 s unless progress comes.
    const steps: Step[] = [{ label: "silent", args: { code: "import time\ntime.sleep(75)\nprint('awake after 75 s')", timeout: 90 } }];
    const run = await runOpencode({ binary: BINARY, steps, engine, entryTimeout: false });
    const silent = labelled(run.seen, run.stderr)("silent");
    expect(silent.text).not.toContain("timed out");
    expect(silent.text).toBe("awake after 75 s");
  },
  SLOW,
);

test(
  "opencode: after its own timeout cancels a run, the next result says the code was interrupted and the variables kept",
  async () => {
    const steps: Step[] = [
      { label: "cancelled", args: { code: "import time\nx = 42\ntime.sleep(30)\nx = 43", timeout: 60 } },
      { label: "after", args: { code: "x" } },
    ];
    const run = await runOpencode({ binary: BINARY, steps, engine, toolTimeoutMs: 4_000 });
    const seen = labelled(run.seen, run.stderr);
    // What opencode tells its model about its own timeout.
    expect(seen("cancelled").text).toContain("timed out");
    const after = seen("after").text;
    expect(after).toContain("[value] 42");
    expect(after).toMatch(/the client cancelled the previous call after [\d.]+s; its code was interrupted at line 3/);
    expect(after).toContain("the session kept its variables");
  },
  SLOW,
);

test(
  "opencode run --continue starts a new bridge: the NameError says the interpreter is new since the conversation's last call",
  async () => {
    const w = opencodeWorld({ binary: BINARY, steps: [], engine });
    // A model that ignores our instructions and names no session: the new bridge's default session is empty.
    const stub = startConversationsStub({
      "Use run_python": [[{ label: "set", args: () => ({ code: "x = 41" }) }], [{ label: "read", args: () => ({ code: "x + 1" }) }]],
    });
    try {
      w.useModel(stub.url);
      const first = await w.opencode(["run", "Use run_python."]);
      expect(first.code).toBe(0);
      const second = await w.opencode(["run", "--continue", "Go on."]);
      const seen = labelled(stub.byConversation.get("Use run_python") ?? [], second.stderr);
      expect(seen("set").text).toBe("(no output)");
      const read = seen("read").text;
      expect(read).toContain("NameError: name 'x' is not defined");
      expect(read).toContain("this call was the first in a new interpreter");
    } finally {
      stub.close();
    }
  },
  SLOW,
);

describe("opencode serve: two conversations through one bridge", () => {
  // The model does what our instructions tell opencode's models: its own session per conversation, by handle.
  const own =
    (code: string) =>
    ({ system, seen }: ModelView) => {
      if (!system.includes(OWN_SESSION_HINT)) return { code };
      const handle = seen
        .map((s) => /\[session\] (s_[\w-]{22})/.exec(s.text)?.[1])
        .filter(Boolean)
        .at(-1);
      return { code, session: handle ?? "new" };
    };
  const turn = (label: string, code: string): ScriptedStep[] => [{ label, args: own(code) }];
  const stub = startConversationsStub({
    alpha: [turn("set", "x = 'alpha'"), turn("read", "x")],
    beta: [turn("set", "x = 'beta'"), turn("read", "x")],
  });
  afterAll(() => stub.close());

  test(
    "each keeps its own variables when their calls interleave; nothing opencode sends tells them apart",
    async () => {
      // What opencode sends the bridge, recorded on its way in.
      const dir = mkdtempSync(join(tmpdir(), "mcx-opencode-wire-"));
      const wire = join(dir, "to-bridge.jsonl");
      const wrapper = join(dir, "bridge");
      writeFileSync(wrapper, `#!/bin/sh\ntee -a ${wire} | ${BINARY}\n`);
      chmodSync(wrapper, 0o755);
      const w = opencodeWorld({ binary: wrapper, steps: [], engine });
      w.useModel(stub.url);
      const server = await opencodeServe(w);
      try {
        const a = await server.newSession();
        const b = await server.newSession();
        await server.say(a, "alpha: use run_python");
        await server.say(b, "beta: use run_python");
        await server.say(a, "alpha again");
        await server.say(b, "beta again");
      } finally {
        await server.close();
      }
      const alpha = labelled(stub.byConversation.get("alpha") ?? [], server.logs());
      const beta = labelled(stub.byConversation.get("beta") ?? [], server.logs());
      expect(alpha("read").text).toContain("[value] 'alpha'");
      expect(beta("read").text).toContain("[value] 'beta'");
      // Two sessions, each named in its conversation's results.
      const handle = (s: Seen) => /\[session\] (s_[\w-]{22})/.exec(s.text)?.[1];
      expect(handle(alpha("set"))).toBeDefined();
      expect(handle(alpha("read"))).toBe(handle(alpha("set"))!);
      expect(handle(beta("read"))).toBe(handle(beta("set"))!);
      expect(handle(alpha("set"))).not.toBe(handle(beta("set"))!);
      // One bridge for both conversations, and no value in a call that says which conversation made it:
      // the arguments the model wrote and a progress token (the request id). Should opencode ever send
      // one, the bridge can use it instead of asking the model (instructions.ts).
      const sent = readFileSync(wire, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { id?: number; method?: string; params?: Record<string, unknown> });
      expect(sent.filter((m) => m.method === "initialize")).toHaveLength(1);
      const calls = sent.filter((m) => m.method === "tools/call");
      expect(calls).toHaveLength(4);
      for (const c of calls) {
        expect(Object.keys(c.params!).sort()).toEqual(["_meta", "arguments", "name"]);
        expect(c.params!._meta).toEqual({ progressToken: c.id });
      }
    },
    SLOW,
  );
});
