/**
 * Approvals and the upstream protocol carried through a run, with real parts except the engine: the
 * SDK's Client (with and without elicitation) talking to the bridge's MCP server in-process, a
 * local-python session running the real entrypoint, and a real upstream MCP server process written
 * with the SDK (test/fixtures/interactive-server.ts) that asks questions, reports progress and records
 * the cancellations it receives. The compiled binary on a real engine: test/e2e/approvals.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  CreateMessageRequestSchema,
  type ElicitRequest,
  type ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";
import { localBridge, type LocalBridge } from "../support/local-bridge.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { pollFor } from "../support/engines.ts";
import { ROOT } from "../support/env.ts";

const FIXTURE = join(ROOT, "test", "fixtures", "interactive-server.ts");

interface World {
  home: string;
  events: string;
}

function world(): World {
  const home = mkdtempSync(join(tmpdir(), "mcx-approvals-"));
  const events = join(home, "events.jsonl");
  mkdirSync(join(home, ".config", "mcp", "servers"), { recursive: true });
  writeFileSync(
    join(home, ".config", "mcp", "servers", "interactive.json"),
    JSON.stringify({ mcpServers: { interactive: { command: process.execPath, args: [FIXTURE], env: { FIXTURE_EVENTS: events } } } }),
  );
  return { home, events };
}

function events(w: World): Array<Record<string, unknown>> {
  if (!existsSync(w.events)) return [];
  return readFileSync(w.events, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const until = <T>(what: string, probe: () => T | undefined): Promise<T> => pollFor(what, probe, 20_000, 20);

function audit(w: World): Array<Record<string, unknown>> {
  const file = join(w.home, "state", "audit.jsonl");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Run one proxied call in Python; the value, or the McpError raised as {error, decided_by, kind, message}. */
async function attempt(b: LocalBridge, call: string, extra: { timeout?: number; reset?: boolean } = {}): Promise<Record<string, unknown>> {
  const code = `
import json
from mcp import McpError
async def _attempt():
    try:
        return {"ok": await ${call}}
    except McpError as e:
        return {"error": type(e).__name__, "decided_by": e.decided_by, "kind": e.kind, "message": str(e)}
print(json.dumps(await _attempt()))
`;
  const r = await b.run(code, { servers: ["interactive"], ...extra });
  const stdout = String(r.structured.stdout ?? "");
  if (!stdout.trim()) throw new Error(`no output: ${r.text}`);
  return JSON.parse(stdout.trim().split("\n").pop()!) as Record<string, unknown>;
}

type Answer = (params: ElicitRequest["params"]) => Promise<ElicitResult> | ElicitResult;

describe("a client that can answer questions (form and URL elicitation, sampling)", () => {
  const w = world();
  let b: LocalBridge;
  const asked: Array<ElicitRequest["params"]> = [];
  const completed: string[] = [];
  let answer: Answer = () => ({ action: "accept", content: { decision: "once" } });
  const askWaits: number[] = [];

  beforeAll(async () => {
    b = await localBridge(
      { HOME: w.home, MCP_BRIDGE_ASK_TOOLS: "interactive/write_note", MCP_BRIDGE_DENY_TOOLS: "purge_all", MCP_BRIDGE_ASK_TIMEOUT: "3" },
      { elicitation: { form: {}, url: {} }, sampling: {} },
      (client) => {
        client.setRequestHandler(ElicitRequestSchema, async (req) => {
          asked.push(req.params);
          return answer(req.params);
        });
        client.setNotificationHandler(ElicitationCompleteNotificationSchema, async (n) => {
          completed.push(n.params.elicitationId);
        });
        client.setRequestHandler(CreateMessageRequestSchema, async (req) => ({
          role: "assistant",
          model: "test-model",
          content: { type: "text", text: `summary of: ${(req.params.messages[0]!.content as { text: string }).text}` },
        }));
      },
    );
  }, 60_000);
  afterAll(async () => {
    await b?.close();
    if (askWaits.length)
      console.log(
        `[approvals] ask -> answer (bridge waiting on the client's immediate answer), ms: ${askWaits.map((x) => x.toFixed(1)).join(", ")}`,
      );
  });

  const lastAsk = () => asked[asked.length - 1]!;

  test("a read-only tool runs without a question; the audit line says the annotation decided", async () => {
    const before = asked.length;
    expect(await attempt(b, "mcp_interactive.read_notes()")).toEqual({ ok: { notes: ["buy milk"] } });
    expect(asked.length).toBe(before);
    await until("audit line", () => audit(w).find((r) => r.tool === "read_notes"));
    expect(audit(w).find((r) => r.tool === "read_notes")).toMatchObject({
      server: "interactive",
      decision: "allow",
      by: "annotation",
      outcome: "ok",
    });
  });

  test("a destructive tool asks: server, tool, title and the arguments with secrets masked; once lets this call through", async () => {
    answer = () => ({ action: "accept", content: { decision: "once" } });
    const before = asked.length;
    expect(await attempt(b, 'mcp_interactive.delete_note(id="n1", api_key="sk-live-abcdefghijklmnop123456")')).toEqual({
      ok: { deleted: "n1" },
    });
    expect(asked.length).toBe(before + 1);
    const q = lastAsk();
    expect(q.mode ?? "form").toBe("form");
    expect(q.message).toContain("Server: interactive");
    expect(q.message).toContain("Tool: delete_note (Delete a note)");
    expect(q.message).toContain("Why you are asked: server interactive marks delete_note destructive (destructiveHint)");
    expect(q.message).toContain('id: "n1"');
    expect(q.message).toContain("api_key: <secret: 30 characters, masked>");
    expect(q.message).not.toContain("sk-live");
    expect(
      (q as unknown as { requestedSchema: { properties: { decision: { enum: string[] } } } }).requestedSchema.properties.decision.enum,
    ).toEqual(["once", "session", "deny"]);
    // once is once: the next call asks again
    expect(await attempt(b, 'mcp_interactive.delete_note(id="n2")')).toEqual({ ok: { deleted: "n2" } });
    expect(asked.length).toBe(before + 2);
    const lines = await until("audit lines", () => {
      const l = audit(w).filter((r) => r.tool === "delete_note" && r.answer === "once");
      return l.length >= 2 ? l : undefined;
    });
    expect(lines[0]).toMatchObject({ decision: "allow", by: "user", answer: "once", outcome: "ok" });
    askWaits.push(...lines.map((l) => Number(l.wait_ms)));
  });

  test("deny raises McpPolicyError naming the user; the server never sees the call; the run does not ask twice", async () => {
    answer = () => ({ action: "accept", content: { decision: "deny" } });
    const before = asked.length;
    const code = `
import json
from mcp import McpPolicyError
out = []
for i in range(3):
    try:
        await mcp_interactive.delete_note(id="keep-%d" % i)
        out.append("deleted")
    except McpPolicyError as e:
        out.append([e.decided_by, str(e)])
print(json.dumps(out))
`;
    const r = await b.run(code, { servers: ["interactive"] });
    const out = JSON.parse(String(r.structured.stdout)) as Array<[string, string]>;
    expect(out[0]).toEqual(["user", "refused by policy: interactive/delete_note was denied by the user"]);
    expect(out[1]).toEqual([
      "user",
      "refused by policy: interactive/delete_note was denied by the user earlier in this run; not asking again until the next run",
    ]);
    expect(asked.length).toBe(before + 1);
    expect(events(w).filter((e) => e.tool === "delete_note" && String(e.id).startsWith("keep-"))).toEqual([]);
  });

  test("declining or dismissing the question means deny", async () => {
    for (const action of ["decline", "cancel"] as const) {
      answer = () => ({ action });
      const r = await attempt(b, 'mcp_interactive.delete_note(id="x")');
      expect(r).toMatchObject({ error: "McpPolicyError", decided_by: "user", kind: "policy" });
      expect(String(r.message)).toContain(action === "decline" ? "(the question was declined)" : "(the question was dismissed)");
    }
  });

  test("session is remembered for the session and forgotten on reset", async () => {
    answer = () => ({ action: "accept", content: { decision: "session" } });
    const before = asked.length;
    expect(await attempt(b, 'mcp_interactive.delete_note(id="s1")')).toEqual({ ok: { deleted: "s1" } });
    expect(await attempt(b, 'mcp_interactive.delete_note(id="s2")')).toEqual({ ok: { deleted: "s2" } });
    expect(asked.length).toBe(before + 1);
    await until("remembered audit line", () => audit(w).find((r) => r.answer === "remembered"));
    // After a reset the servers must be loaded again, and the user is asked again.
    answer = () => ({ action: "accept", content: { decision: "once" } });
    expect(await attempt(b, 'mcp_interactive.delete_note(id="s3")', { reset: true })).toEqual({ ok: { deleted: "s3" } });
    expect(asked.length).toBe(before + 2);
  });

  test("a tool in askTools asks even though no annotation says so", async () => {
    answer = () => ({ action: "accept", content: { decision: "once" } });
    const before = asked.length;
    expect(await attempt(b, 'mcp_interactive.write_note(text="hi")')).toEqual({ ok: { written: "hi" } });
    expect(asked.length).toBe(before + 1);
    expect(lastAsk().message).toContain(
      'Why you are asked: interactive/write_note matches "interactive/write_note" in askTools (MCP_BRIDGE_ASK_TOOLS)',
    );
  });

  test("a deny-listed tool never asks", async () => {
    const before = asked.length;
    const r = await attempt(b, "mcp_interactive.purge_all()");
    expect(r).toMatchObject({ error: "McpPolicyError", decided_by: "policy" });
    expect(String(r.message)).toContain('matches "purge_all" in denyTools (MCP_BRIDGE_DENY_TOOLS)');
    expect(asked.length).toBe(before);
    expect(events(w).some((e) => e.tool === "purge_all")).toBe(false);
  });

  test("no answer within MCP_BRIDGE_ASK_TIMEOUT: refused, and the rest of the run asks nothing", async () => {
    answer = () => new Promise(() => {});
    const before = asked.length;
    const code = `
import json
from mcp import McpPolicyError
out = []
for i in range(2):
    try:
        await mcp_interactive.delete_note(id="t%d" % i)
    except McpPolicyError as e:
        out.append([e.decided_by, str(e)])
print(json.dumps(out))
`;
    const r = await b.run(code, { servers: ["interactive"], timeout: 1 });
    const out = JSON.parse(String(r.structured.stdout)) as Array<[string, string]>;
    expect(out[0]![1]).toBe(
      "refused by policy: interactive/delete_note got no answer within 3s (MCP_BRIDGE_ASK_TIMEOUT), so it was refused; further questions in this run are refused without asking",
    );
    expect(out[1]![1]).toContain("was not asked: an earlier question in this run got no answer within 3s");
    expect(asked.length).toBe(before + 1);
  });

  test("an upstream's form question reaches the client, named, and the answer goes back to the upstream", async () => {
    answer = (p): ElicitResult =>
      p.message.includes("Order") ? { action: "accept", content: { confirm: true } } : { action: "accept", content: { decision: "deny" } };
    expect(await attempt(b, 'mcp_interactive.confirm_order(item="pizza")')).toEqual({
      ok: { action: "accept", content: { confirm: true } },
    });
    expect(lastAsk().message).toBe("interactive asks: Order pizza?");
  });

  test("an upstream's URL-mode question reaches the client with its URL; its completion is relayed", async () => {
    answer = () => ({ action: "accept" });
    expect(await attempt(b, "mcp_interactive.verify_account()")).toEqual({ ok: { action: "accept" } });
    expect(lastAsk()).toMatchObject({ mode: "url", url: "https://example.test/verify?session=abc", elicitationId: "verify-1" });
    await until("completion notification", () => (completed.includes("verify-1") ? true : undefined));
  });

  test("sampling is forwarded to a client that supports it", async () => {
    expect(await attempt(b, 'mcp_interactive.summarize(topic="notes")')).toEqual({
      ok: { model: "test-model", text: "summary of: Summarize notes" },
    });
  });

  test("upstream progress joins the run's progress stream", async () => {
    const messages: string[] = [];
    const r = await b.run("await mcp_interactive.long_task(steps=3, seconds=0)", {
      servers: ["interactive"],
      onprogress: (p) => messages.push(String(p.message)),
    });
    expect(r.isError).toBe(false);
    const all = messages.join("\n");
    expect(all).toContain("interactive.long_task: step 3 of 3 (3/3)");
    const call = events(w)
      .filter((e) => e.tool === "long_task")
      .pop()!;
    expect(call.progressToken).not.toBeNull();
  });

  test("cancelling the run sends notifications/cancelled with the upstream's own request id, only for the call in flight", async () => {
    const abort = new AbortController();
    const seen = events(w).length;
    const pending = b.run(
      "for _ in range(3):\n    await mcp_interactive.read_notes()\nawait mcp_interactive.long_task(steps=1, seconds=60)",
      { servers: ["interactive"], signal: abort.signal },
    );
    const call = await until("the long call", () =>
      events(w)
        .slice(seen)
        .find((e) => e.tool === "long_task" && e.event === "call"),
    );
    abort.abort();
    await expect(pending).rejects.toThrow();
    const cancel = await until("the upstream's cancellation", () =>
      events(w)
        .slice(seen)
        .find((e) => e.event === "cancelled"),
    );
    expect(cancel.requestId).toBe(call.requestId as number);
    await until("the handler noticing it", () =>
      events(w)
        .slice(seen)
        .find((e) => e.event === "aborted" && e.requestId === call.requestId),
    );
    // The three finished calls were not cancelled after the fact: a call made after the run ended comes
    // through the same pipe to the server, after any cancellation the bridge would have sent it.
    expect(await attempt(b, "mcp_interactive.read_notes()")).toEqual({ ok: { notes: ["buy milk"] } });
    expect(
      events(w)
        .slice(seen)
        .filter((e) => e.event === "cancelled"),
    ).toHaveLength(1);
  });

  test("a run that times out cancels its upstream call the same way", async () => {
    const seen = events(w).length;
    const r = await b.run("await mcp_interactive.long_task(steps=0, seconds=60)", { servers: ["interactive"], timeout: 1 });
    expect(String(r.text)).toContain("timed out");
    const call = events(w)
      .slice(seen)
      .find((e) => e.tool === "long_task" && e.event === "call")!;
    const cancel = await until("the upstream's cancellation", () =>
      events(w)
        .slice(seen)
        .find((e) => e.event === "cancelled"),
    );
    expect(cancel.requestId).toBe(call.requestId as number);
  });
});

describe("a client without the elicitation or sampling capability", () => {
  const w = world();
  let b: LocalBridge;
  beforeAll(async () => {
    b = await localBridge({ HOME: w.home }, {});
  }, 60_000);
  afterAll(async () => {
    await b?.close();
  });

  test("a call that needs approval is refused (fail closed), naming what to change", async () => {
    const r = await attempt(b, 'mcp_interactive.delete_note(id="n1")');
    expect(r).toMatchObject({ error: "McpPolicyError", decided_by: "annotation", kind: "policy" });
    expect(r.message).toBe(
      'refused by policy: interactive/delete_note needs your approval (server interactive marks delete_note destructive (destructiveHint)), but approvals-test-client, the MCP client running mcp-code-exec, did not declare the elicitation capability, so nobody can be asked; to let it run without a question, add "interactive/delete_note" to allowTools (policy.allowTools in the settings file, or MCP_BRIDGE_ALLOW_TOOLS), keeping "*" there',
    );
    expect(events(w).some((e) => e.tool === "delete_note")).toBe(false);
    expect(await attempt(b, "mcp_interactive.read_notes()")).toEqual({ ok: { notes: ["buy milk"] } });
  });

  test("an upstream's question and sampling request are refused with the reason, which the tool passes on", async () => {
    const q = await attempt(b, 'mcp_interactive.confirm_order(item="pizza")');
    expect(q).toMatchObject({ error: "McpToolError" });
    expect(String(q.message)).toContain(
      "interactive's question for the user cannot be relayed: approvals-test-client, the MCP client running mcp-code-exec, does not support form-mode elicitation",
    );
    const s = await attempt(b, 'mcp_interactive.summarize(topic="x")');
    expect(String(s.message)).toContain(
      "interactive's sampling request cannot be relayed: approvals-test-client, the MCP client running mcp-code-exec, does not support sampling",
    );
  });
});

/**
 * `serve` answers the opening before the SDK server is attached (src/server/handshake-front.ts): the
 * server must still learn from that `initialize` who the client is and what it can do.
 */
describe("connected through the handshake front", () => {
  const w = world();
  let asking: LocalBridge;
  let silent: LocalBridge;
  const asked: string[] = [];
  beforeAll(async () => {
    asking = await localBridge(
      { HOME: w.home },
      { elicitation: { form: {} } },
      (client) =>
        client.setRequestHandler(ElicitRequestSchema, async (req) => {
          asked.push(req.params.message);
          return { action: "accept", content: { decision: "once" } };
        }),
      { front: true },
    );
    silent = await localBridge({ HOME: w.home }, {}, () => {}, { front: true });
  }, 60_000);
  afterAll(async () => {
    await asking?.close();
    await silent?.close();
  });

  test("a client that declared elicitation is asked, and its answer lets the call through", async () => {
    expect(await attempt(asking, 'mcp_interactive.delete_note(id="f1")')).toEqual({ ok: { deleted: "f1" } });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain("Tool: delete_note");
  });

  test("a client that did not is refused, naming itself as the MCP client", async () => {
    const r = await attempt(silent, 'mcp_interactive.delete_note(id="f2")');
    expect(r).toMatchObject({ error: "McpPolicyError", decided_by: "annotation", kind: "policy" });
    expect(String(r.message)).toContain(
      "approvals-test-client, the MCP client running mcp-code-exec, did not declare the elicitation capability",
    );
  });
});

describe("a person's time to answer (test clock)", () => {
  const w = world();
  const clock = new ManualClock();
  let b: LocalBridge;
  beforeAll(async () => {
    b = await localBridge(
      { HOME: w.home },
      { elicitation: { form: {} } },
      (client) =>
        client.setRequestHandler(ElicitRequestSchema, async () => {
          await clock.advance(60_000); // a minute to read the question, against a run's timeout of 1.5 s
          return { action: "accept", content: { decision: "once" } };
        }),
      { clock },
    );
  }, 60_000);
  afterAll(async () => {
    await b?.close();
  });

  test("time spent waiting for the answer does not count against the run's timeout", async () => {
    const r = await attempt(b, 'mcp_interactive.delete_note(id="slow")', { timeout: 1.5 });
    expect(r).toEqual({ ok: { deleted: "slow" } });
  });
});
