/**
 * Approvals and the upstream protocol through the compiled bridge on a real engine: the SDK's client
 * (with an elicitation handler that allows, denies or never answers, and without the capability) over
 * stdio, sandbox code in a real container, and a real upstream MCP server written with the SDK
 * (test/fixtures/interactive-server.ts) that asks questions, reports progress, logs, and records the
 * cancellations it receives with their request ids. `mcp-code-exec audit` reads what was recorded.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ElicitRequestSchema, type ElicitRequest, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { startBridge, type BridgeHandle } from "../support/bridge.ts";
import { pollFor } from "../support/engines.ts";
import { BINARY } from "../support/binary.ts";
import { bridgeEnv, ENGINES, ROOT } from "../support/env.ts";

const FIXTURE = join(ROOT, "test", "fixtures", "interactive-server.ts");
const engine = ENGINES[0]!;

const home = mkdtempSync(join(tmpdir(), "mcx-e2e-approvals-"));
const state = join(home, "state");
const eventsFile = join(home, "events.jsonl");
mkdirSync(join(home, ".config", "mcp", "servers"), { recursive: true });
writeFileSync(
  join(home, ".config", "mcp", "servers", "interactive.json"),
  JSON.stringify({ mcpServers: { interactive: { command: process.execPath, args: [FIXTURE], env: { FIXTURE_EVENTS: eventsFile } } } }),
);
const env = (extra: Record<string, string> = {}) => ({
  HOME: home,
  MCP_BRIDGE_STATE_DIR: state,
  MCP_BRIDGE_RUNTIME: engine,
  MCP_BRIDGE_DENY_TOOLS: "purge_all",
  MCP_BRIDGE_ASK_TIMEOUT: "3",
  ...extra,
});

const events = (): Array<Record<string, unknown>> =>
  existsSync(eventsFile)
    ? readFileSync(eventsFile, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];

const until = <T>(what: string, probe: () => T | undefined): Promise<T> => pollFor(what, probe, 30_000);

/** Run proxied calls in the sandbox; each becomes its value or the McpError raised (class, decided_by, message). */
async function attempt(
  b: BridgeHandle,
  calls: string[],
  extra: { reset?: boolean; timeout?: number } = {},
): Promise<Array<Record<string, unknown>>> {
  const code = `
import json
from mcp import McpError
out = []
for call in ${JSON.stringify(calls)}:
    try:
        out.append({"ok": await eval(call)})
    except McpError as e:
        out.append({"error": type(e).__name__, "decided_by": e.decided_by, "message": str(e)})
print("RESULT:" + json.dumps(out))
`;
  const r = await b.run(code, { servers: ["interactive"], ...extra });
  const line = /RESULT:(.*)/.exec(r.text)?.[1];
  if (!line) throw new Error(`no result: ${r.text}`);
  return JSON.parse(line);
}

let answer: (p: ElicitRequest["params"]) => Promise<ElicitResult> | ElicitResult = () => ({
  action: "accept",
  content: { decision: "once" },
});
const asked: Array<{ params: ElicitRequest["params"]; at: number }> = [];
let asking: BridgeHandle;
let plain: BridgeHandle;

beforeAll(async () => {
  asking = await startBridge(env({ MCP_BRIDGE_LOG_FORMAT: "json", MCP_BRIDGE_LOG_LEVEL: "INFO" }), {
    cwd: home,
    capabilities: { elicitation: { form: {} } },
    setup: (client) =>
      client.setRequestHandler(ElicitRequestSchema, async (req) => {
        asked.push({ params: req.params, at: performance.now() });
        return answer(req.params);
      }),
  });
  plain = await startBridge(env(), { cwd: home });
}, 120_000);

afterAll(async () => {
  await asking?.close();
  await plain?.close();
});

describe(`approvals through the compiled bridge (${engine})`, () => {
  test("once allows this call; deny raises McpPolicyError naming the user and the server never sees the call", async () => {
    answer = (p) => ({ action: "accept", content: { decision: p.message.includes('"keep"') ? "deny" : "once" } });
    const before = asked.length;
    const [once, denied] = await attempt(asking, ['mcp_interactive.delete_note(id="gone")', 'mcp_interactive.delete_note(id="keep")']);
    expect(once).toEqual({ ok: { deleted: "gone" } });
    expect(denied).toEqual({
      error: "McpPolicyError",
      decided_by: "user",
      message: "refused by policy: interactive/delete_note was denied by the user",
    });
    expect(asked.length).toBe(before + 2);
    expect(asked[before]!.params.message).toContain("Tool: delete_note (Delete a note)");
    expect(
      events()
        .filter((e) => e.tool === "delete_note")
        .map((e) => e.id),
    ).toEqual(["gone"]);
  });

  test("session: remembered for the session, forgotten on reset", async () => {
    answer = () => ({ action: "accept", content: { decision: "session" } });
    const before = asked.length;
    expect(await attempt(asking, ['mcp_interactive.delete_note(id="a")', 'mcp_interactive.delete_note(id="b")'])).toEqual([
      { ok: { deleted: "a" } },
      { ok: { deleted: "b" } },
    ]);
    expect(await attempt(asking, ['mcp_interactive.delete_note(id="c")'])).toEqual([{ ok: { deleted: "c" } }]);
    expect(asked.length).toBe(before + 1);
    answer = () => ({ action: "accept", content: { decision: "deny" } });
    const [afterReset] = await attempt(asking, ['mcp_interactive.delete_note(id="d")'], { reset: true });
    expect(afterReset).toMatchObject({ error: "McpPolicyError", decided_by: "user" });
    expect(asked.length).toBe(before + 2);
  });

  test("no answer in time is a refusal naming the setting; a deny-listed tool never asks", async () => {
    answer = () => new Promise(() => {});
    const before = asked.length;
    const [late, denied] = await attempt(asking, ['mcp_interactive.delete_note(id="late")', "mcp_interactive.purge_all()"], {
      reset: true,
    });
    expect(late).toEqual({
      error: "McpPolicyError",
      decided_by: "policy",
      message:
        "refused by policy: interactive/delete_note got no answer within 3s (MCP_BRIDGE_ASK_TIMEOUT), so it was refused; further questions in this run are refused without asking",
    });
    expect(denied).toMatchObject({ error: "McpPolicyError", decided_by: "policy" });
    expect(String(denied!.message)).toContain('matches "purge_all" in denyTools (MCP_BRIDGE_DENY_TOOLS)');
    expect(asked.length).toBe(before + 1);
  });

  test("a client without the elicitation capability gets a refusal naming the setting (fail closed)", async () => {
    const [r] = await attempt(plain, ['mcp_interactive.delete_note(id="x")']);
    expect(r).toMatchObject({ error: "McpPolicyError", decided_by: "annotation" });
    expect(String(r!.message)).toContain(
      "mcp-code-exec-tests, the MCP client running mcp-code-exec, did not declare the elicitation capability, so nobody can be asked",
    );
    expect(String(r!.message)).toContain('add "interactive/delete_note" to allowTools');
    expect(events().some((e) => e.id === "x")).toBe(false);
  });
});

describe(`the upstream protocol through the compiled bridge (${engine})`, () => {
  test("the client sees the upstream's question and answers it; the upstream gets the answer", async () => {
    answer = () => ({ action: "accept", content: { confirm: true } });
    const [r] = await attempt(asking, ['mcp_interactive.confirm_order(item="pizza")']);
    expect(r).toEqual({ ok: { action: "accept", content: { confirm: true } } });
    expect(asked[asked.length - 1]!.params.message).toBe("interactive asks: Order pizza?");
  });

  test("the client sees the upstream's progress; cancelling the run sends notifications/cancelled with the upstream's own request id", async () => {
    const progress: string[] = [];
    const abort = new AbortController();
    const seen = events().length;
    const pending = asking.run("await mcp_interactive.read_notes()\nawait mcp_interactive.long_task(steps=3, seconds=120)", {
      servers: ["interactive"],
      signal: abort.signal,
      onprogress: (p) => progress.push(String(p.message)),
    });
    const call = await until("the long call", () =>
      events()
        .slice(seen)
        .find((e) => e.tool === "long_task" && e.event === "call"),
    );
    await until("its progress", () => (progress.join("\n").includes("interactive.long_task: step 3 of 3 (3/3)") ? true : undefined));
    abort.abort();
    await expect(pending).rejects.toThrow();
    const cancelled = await until("the cancellation", () =>
      events()
        .slice(seen)
        .find((e) => e.event === "cancelled"),
    );
    expect(cancelled.requestId).toBe(call.requestId as number);
    await until("the upstream handler noticing", () =>
      events()
        .slice(seen)
        .find((e) => e.event === "aborted"),
    );
    expect(
      events()
        .slice(seen)
        .filter((e) => e.event === "cancelled"),
    ).toHaveLength(1);
  });

  test("upstream log messages reach our log with the run and call ids", async () => {
    const r = await asking.run("await mcp_interactive.chatty(message='disk almost full')", { servers: ["interactive"] });
    expect(r.isError).toBe(false);
    const line = await until("the log line", () =>
      asking
        .stderr()
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.msg === "upstream log" && l.data === "disk almost full"),
    );
    expect(line).toMatchObject({ level: "WARNING", upstream_level: "warning", server: "interactive", tool: "chatty" });
    expect(String(line.request)).toMatch(/^run-\d+-\d+-\d+$/);
    expect(String(line.call)).toMatch(/^call-\d+$/);
  });

  test("`mcp-code-exec audit` shows every proxied call with the decision and who made it", async () => {
    const proc = Bun.spawn([BINARY, "audit", "--json"], { env: bridgeEnv(env()), stdout: "pipe", stderr: "pipe" });
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    expect(code).toBe(0);
    const records = out
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.find((r) => r.answer === "session")).toMatchObject({
      server: "interactive",
      tool: "delete_note",
      decision: "allow",
      by: "user",
      outcome: "ok",
    });
    expect(records.find((r) => r.answer === "timeout")).toMatchObject({ decision: "deny", by: "policy", outcome: "refused" });
    expect(records.find((r) => r.tool === "purge_all")).toMatchObject({ decision: "deny", by: "policy", outcome: "refused" });
    expect(records.find((r) => r.tool === "long_task")).toMatchObject({ decision: "allow", by: "annotation", outcome: "cancelled" });
    for (const r of records)
      expect(Object.keys(r)).toEqual(expect.arrayContaining(["ts", "run", "call", "server", "tool", "outcome", "ms", "args_sha256"]));
    // Ask to answer as the bridge measured it; the test's handler answers at once, so this is the round trip.
    const waits = records.filter((r) => ["once", "session", "deny"].includes(String(r.answer))).map((r) => Number(r.wait_ms));
    expect(waits.length).toBeGreaterThan(0);
    console.log(`[approvals e2e, ${engine}] ask -> answer (client answering at once), ms: ${waits.join(", ")}`);
    const human = Bun.spawn([BINARY, "audit", "--lines", "3"], { env: bridgeEnv(env()), stdout: "pipe" });
    const text = await new Response(human.stdout).text();
    expect(text.trim().split("\n")).toHaveLength(3);
    expect(text).toMatch(/run-\d+-\d+-\d+ call-\d+ {2}interactive\//);
  });
});
