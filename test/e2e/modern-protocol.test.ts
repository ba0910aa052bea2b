/**
 * Protocol revision 2026-07-28 through the compiled bridge, with a bare JSON-RPC client over stdio (no
 * SDK speaks it here): no handshake, `_meta` on every request, `server/discover`, `resultType` and cache
 * hints on results, an unsupported version refused with the versions we speak, and questions to the user
 * (an approval; an upstream server's own question) as multi round-trip results answered by a retry. The
 * upstream is the real interactive fixture server (test/fixtures/interactive-server.ts) on a real engine.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY } from "../support/binary.ts";
import { bridgeEnv, ENGINES, ROOT } from "../support/env.ts";

const FIXTURE = join(ROOT, "test", "fixtures", "interactive-server.ts");
const home = mkdtempSync(join(tmpdir(), "mcx-e2e-modern-"));
mkdirSync(join(home, ".config", "mcp", "servers"), { recursive: true });
writeFileSync(
  join(home, ".config", "mcp", "servers", "interactive.json"),
  JSON.stringify({
    mcpServers: { interactive: { command: process.execPath, args: [FIXTURE], env: { FIXTURE_EVENTS: join(home, "events.jsonl") } } },
  }),
);

const VERSION = "2026-07-28";
const meta = (extra: Record<string, unknown> = {}) => ({
  "io.modelcontextprotocol/protocolVersion": VERSION,
  "io.modelcontextprotocol/clientInfo": { name: "modern-test", version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
  ...extra,
});

type Message = {
  id?: number | string;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
};

/** The bridge's stdio as lines: requests by id, and every message that came, in order. */
class Wire {
  readonly seen: Message[] = [];
  readonly #waiting = new Map<number | string, (m: Message) => void>();
  readonly #proc = Bun.spawn([BINARY], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "ignore",
    env: bridgeEnv({
      HOME: home,
      MCP_BRIDGE_STATE_DIR: join(home, "state"),
      MCP_BRIDGE_RUNTIME: ENGINES[0]!,
      MCP_BRIDGE_PREWARM: "0",
      MCP_BRIDGE_ASK_TIMEOUT: "20",
      MCP_BRIDGE_STRUCTURED_CONTENT: "0",
    }),
  });
  #next = 100;

  constructor() {
    void this.#read();
  }

  async #read(): Promise<void> {
    const dec = new TextDecoder();
    let buf = "";
    for await (const chunk of this.#proc.stdout) {
      buf += dec.decode(chunk);
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const m = JSON.parse(buf.slice(0, nl)) as Message;
        buf = buf.slice(nl + 1);
        this.seen.push(m);
        if (m.id !== undefined && !m.method) this.#waiting.get(m.id)?.(m);
      }
    }
  }

  request(method: string, params: Record<string, unknown>, id: number | string = this.#next++): Promise<Message> {
    const answer = new Promise<Message>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${method} ${id}`)), 60_000);
      this.#waiting.set(id, (m) => {
        clearTimeout(timer);
        this.#waiting.delete(id);
        resolve(m);
      });
    });
    this.#proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    this.#proc.stdin.flush();
    return answer;
  }

  /** A message the client sends without waiting for anything. */
  send(message: Record<string, unknown>): void {
    this.#proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
    this.#proc.stdin.flush();
  }

  async close(): Promise<void> {
    this.#proc.stdin.end();
    await this.#proc.exited;
  }
}

const callPython = (w: Wire, code: string, extra: Record<string, unknown> = {}) =>
  w.request("tools/call", { name: "run_python", arguments: { code, servers: ["interactive"] }, _meta: meta(), ...extra });

describe("protocol revision 2026-07-28", () => {
  let w: Wire;
  beforeAll(() => {
    w = new Wire();
  });
  afterAll(() => w.close());

  test("server/discover names the versions, capabilities and instructions; the server's identity is in _meta", async () => {
    const r = await w.request("server/discover", { _meta: meta() });
    expect(r.result).toMatchObject({
      resultType: "complete",
      supportedVersions: [VERSION, "2025-11-25"],
      capabilities: { tools: {}, resources: {} },
      instructions: expect.stringContaining("run_python"),
      ttlMs: expect.any(Number),
      cacheScope: "private",
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "mcp-code-exec" } },
    });
    expect(r.result!.serverInfo).toBeUndefined();
  });

  test("without initialize: tools/list with its cache hint, then a call; nothing the client did not ask for is sent", async () => {
    const list = await w.request("tools/list", { _meta: meta() });
    expect(list.result).toMatchObject({ resultType: "complete", ttlMs: 3_600_000, cacheScope: "private" });
    expect((list.result!.tools as Array<{ name: string }>).map((t) => t.name)).toEqual(["run_python"]);
    const r = await w.request("tools/call", { name: "run_python", arguments: { code: "x = 20\nprint(x + 1)" }, _meta: meta() });
    expect(r.result).toMatchObject({ resultType: "complete", isError: false, content: [{ type: "text", text: "21" }] });
    // Requests carry everything: a later one finds the variable (the sandbox is the bridge's, not the request's).
    const again = await w.request("tools/call", { name: "run_python", arguments: { code: "print(x * 2)" }, _meta: meta() });
    expect(again.result!.content).toEqual([{ type: "text", text: "40" }]);
    expect(w.seen.filter((m) => m.method !== undefined)).toEqual([]);
  }, 120_000);

  test("an unsupported version is refused with the versions the bridge speaks", async () => {
    const r = await w.request("tools/list", { _meta: meta({ "io.modelcontextprotocol/protocolVersion": "2099-01-01" }) });
    expect(r.error).toEqual({
      code: -32022,
      message: "Unsupported protocol version",
      data: { supported: [VERSION, "2025-11-25"], requested: "2099-01-01" },
    });
  });

  test("an approval comes back as input_required; the retry with the answer runs the call", async () => {
    const first = await callPython(w, 'await mcp_interactive.delete_note(id="n1")');
    // Read before any matcher looks at the result (bun's toMatchObject writes its asymmetric matchers into it).
    const state = first.result!.requestState;
    expect(typeof state).toBe("string");
    expect(first.result!.resultType).toBe("input_required");
    const requests = first.result!.inputRequests as Record<string, { method: string; params: { message: string } }>;
    const [key, question] = Object.entries(requests)[0]!;
    expect(Object.keys(requests)).toHaveLength(1);
    expect(question.method).toBe("elicitation/create");
    expect(question.params.message).toContain("Tool: delete_note");
    const done = await callPython(w, 'await mcp_interactive.delete_note(id="n1")', {
      requestState: state,
      inputResponses: { [key]: { action: "accept", content: { decision: "once" } } },
    });
    expect(done.result).toMatchObject({ resultType: "complete", isError: false });
    expect(JSON.stringify(done.result!.content)).toContain("n1");
    // A handle is used once.
    const replay = await callPython(w, 'await mcp_interactive.delete_note(id="n1")', {
      requestState: state,
      inputResponses: { [key]: { action: "accept", content: { decision: "once" } } },
    });
    expect(replay.error).toMatchObject({
      code: -32602,
      message: expect.stringContaining("requestState is unknown, already used or expired"),
    });
  }, 120_000);

  test("a declined approval refuses the tool call in code; an upstream server's own question goes the same way", async () => {
    const first = await callPython(
      w,
      'try:\n    await mcp_interactive.delete_note(id="n2")\nexcept Exception as e:\n    print(type(e).__name__, e)',
    );
    const [key] = Object.keys(first.result!.inputRequests as object);
    const done = await callPython(w, "", { requestState: first.result!.requestState, inputResponses: { [key!]: { action: "decline" } } });
    expect(JSON.stringify(done.result!.content)).toContain("McpPolicyError");
    expect(JSON.stringify(done.result!.content)).toContain("denied by the user");

    const order = await callPython(w, 'await mcp_interactive.confirm_order(item="pizza")');
    const asked = order.result!.inputRequests as Record<string, { params: { message: string } }>;
    const [k, q] = Object.entries(asked)[0]!;
    expect(q.params.message).toBe("interactive asks: Order pizza?");
    const confirmed = await callPython(w, "", {
      requestState: order.result!.requestState,
      inputResponses: { [k]: { action: "accept", content: { confirm: true } } },
    });
    expect(JSON.stringify(confirmed.result!.content)).toContain("accept");
  }, 120_000);

  test("a bare response with the id shown in inputRequests answers nothing: the call waits for its retry, and a 'session' in it is not remembered", async () => {
    const code = 'try:\n    await mcp_interactive.delete_note(id="n9")\nexcept Exception as e:\n    print(type(e).__name__, e)';
    const first = await callPython(w, code);
    const [key] = Object.keys(first.result!.inputRequests as object);
    const id = Number(/_(\d+)$/.exec(key!)![1]);
    const seen = w.seen.length;
    w.send({ id, result: { action: "accept", content: { decision: "session" } } });
    // Whatever the bridge did with it shows by the time it answers a request sent after it.
    await w.request("tools/list", { _meta: meta() });
    expect(w.seen.slice(seen).filter((m) => m.id !== undefined && m.result?.tools === undefined)).toEqual([]);
    const declined = await callPython(w, "", {
      requestState: first.result!.requestState,
      inputResponses: { [key!]: { action: "decline" } },
    });
    expect(JSON.stringify(declined.result!.content)).toContain("denied by the user");
    // Not allowed for the session: the next call asks again.
    const next = await callPython(w, code);
    expect(next.result!.resultType).toBe("input_required");
    const [k2] = Object.keys(next.result!.inputRequests as object);
    await callPython(w, "", { requestState: next.result!.requestState, inputResponses: { [k2!]: { action: "decline" } } });
  }, 120_000);

  test("two approvals in one run: each retry brings the next question; one left unanswered is asked again", async () => {
    const code =
      'import asyncio\nr = await asyncio.gather(mcp_interactive.delete_note(id="a"), mcp_interactive.delete_note(id="b"))\nprint(len(r))';
    const once = { action: "accept", content: { decision: "once" } };
    const first = await callPython(w, code);
    const [a] = Object.keys(first.result!.inputRequests as object);
    expect(Object.keys(first.result!.inputRequests as object)).toHaveLength(1); // the bridge asks one at a time
    const again = await callPython(w, "", { requestState: first.result!.requestState, inputResponses: {} });
    expect(again.result!.resultType).toBe("input_required");
    expect(Object.keys(again.result!.inputRequests as object)).toEqual([a!]);
    const second = await callPython(w, "", { requestState: again.result!.requestState, inputResponses: { [a!]: once } });
    const [b] = Object.keys(second.result!.inputRequests as object);
    expect(b).not.toBe(a);
    const asked = [first, second].map((r) => JSON.stringify(r.result!.inputRequests)).join();
    for (const note of ["a", "b"]) expect(asked).toContain(`id: \\"${note}\\"`);
    const done = await callPython(w, "", { requestState: second.result!.requestState, inputResponses: { [b!]: once } });
    expect(done.result!.content).toEqual([{ type: "text", text: "2" }]);
  }, 120_000);
});
