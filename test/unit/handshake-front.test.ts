/**
 * The handshake front (src/server/handshake-front.ts): the opening answered before the SDK server is
 * attached, then every message handed to a real SDK Server in order, its duplicate answers dropped.
 * A recording transport stands in for stdio; the client side is plain JSON-RPC lines as a client sends them.
 */
import { describe, expect, test } from "bun:test";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  ListToolsRequestSchema,
  PingRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";
import { loadConfig } from "../../src/config/env.ts";
import { HandshakeFront } from "../../src/server/handshake-front.ts";
import { handshake, initializeResult, PROTOCOL_VERSIONS } from "../../src/server/handshake.ts";
import { instructionsFor, OWN_SESSION_HINT } from "../../src/server/instructions.ts";
import { guardParams } from "../../src/server/wire.ts";
import { Arrivals } from "../support/events.ts";

class Wire implements Transport {
  onmessage?: (m: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (e: Error) => void;
  sent: JSONRPCMessage[] = [];
  /** The same messages, to wait for them (test/support/events.ts). */
  arrived = new Arrivals<JSONRPCMessage>();
  async start() {}
  async send(m: JSONRPCMessage) {
    this.sent.push(m);
    this.arrived.push(m);
  }
  /** Settles once the answer to request `id` has been sent. */
  answered(id: number | string): Promise<JSONRPCMessage> {
    return this.arrived.find((m) => "id" in m && m.id === id && !("method" in m));
  }
  async close() {
    this.onclose?.();
  }
  /** A message from the client. */
  deliver(m: Record<string, unknown>) {
    this.onmessage?.({ jsonrpc: "2.0", ...m } as JSONRPCMessage);
  }
}

const config = loadConfig({ MCP_BRIDGE_STATE_DIR: "/nonexistent/state" }, "/nonexistent");
const said = handshake(config, "9.9.9", ["memory", "github"]);
const initialize = (id: number | string, protocolVersion = "2025-06-18", extra: Record<string, unknown> = {}) => ({
  id,
  method: "initialize",
  params: { protocolVersion, capabilities: { elicitation: { form: {} } }, clientInfo: { name: "t", version: "1" }, ...extra },
});

/** A real SDK server given what the front answers with, as bridge-server.ts builds it. */
function sdkServer() {
  const server = new Server(said.serverInfo, { capabilities: said.capabilities, instructions: said.instructions });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [said.tool] }));
  server.setRequestHandler(PingRequestSchema, () => ({}));
  return server;
}

/** One turn of the event loop: for checking that nothing was sent (what is sent is waited for: Wire.answered). */
const flush = () => new Promise((r) => setImmediate(r));
const byId = (sent: JSONRPCMessage[], id: number | string) => sent.filter((m) => "id" in m && m.id === id);

describe("the handshake front", () => {
  test("speaks the protocol versions the SDK server negotiates", () => {
    expect([...PROTOCOL_VERSIONS] as string[]).toEqual([...SUPPORTED_PROTOCOL_VERSIONS]);
  });

  test("answers initialize and tools/list at once; the attached server answers the rest, each request once", async () => {
    const wire = new Wire();
    const front = new HandshakeFront(wire);
    front.answerWith(said);
    await wire.start();
    wire.deliver(initialize(1));
    wire.deliver({ method: "notifications/initialized" });
    wire.deliver({ id: 2, method: "tools/list" });
    await wire.answered(2);
    expect(wire.sent).toEqual([
      { jsonrpc: "2.0", id: 1, result: initializeResult(said, "2025-06-18") },
      { jsonrpc: "2.0", id: 2, result: { tools: [said.tool] } },
    ]);
    wire.deliver({ id: 3, method: "ping" });
    expect(front.answered).toBe(2);

    const server = sdkServer();
    let initialized = false;
    server.oninitialized = () => {
      initialized = true;
    };
    await server.connect(front.attach());
    wire.deliver({ id: 4, method: "tools/list" });
    await Promise.all([wire.answered(3), wire.answered(4)]);
    // The server saw the opening (it knows the client and its capabilities) but its answers to it went nowhere.
    expect(server.getClientVersion()).toEqual({ name: "t", version: "1" });
    expect(server.getClientCapabilities()).toEqual({ elicitation: { form: {} } });
    expect(initialized).toBe(true);
    for (const id of [1, 2, 3, 4]) expect(byId(wire.sent, id)).toHaveLength(1);
    expect(byId(wire.sent, 3)[0]).toMatchObject({ result: {} });
    expect(byId(wire.sent, 4)[0]).toMatchObject({ result: { tools: [{ name: "run_python" }] } });
  });

  test("its initialize answer is the SDK server's own, for known and unknown versions", async () => {
    for (const version of ["2025-11-25", "2024-11-05", "1999-01-01"]) {
      const wire = new Wire();
      const server = sdkServer();
      await server.connect(wire);
      wire.deliver(initialize(7, version));
      await wire.answered(7);
      expect(wire.sent).toEqual([{ jsonrpc: "2.0", id: 7, result: initializeResult(said, version) }]);
    }
  });

  test("a request before initialize ends early answers: nothing overtakes it", async () => {
    const wire = new Wire();
    const front = new HandshakeFront(wire);
    front.answerWith(said);
    wire.deliver({ id: "p", method: "ping" });
    wire.deliver(initialize("i"));
    await flush();
    expect(wire.sent).toEqual([]);
    await sdkServer().connect(front.attach());
    await Promise.all([wire.answered("p"), wire.answered("i")]);
    expect(wire.sent.map((m) => ("id" in m ? m.id : undefined))).toEqual(["p", "i"]);
  });

  test("an initialize with unusual params is left to the server, which judges it", async () => {
    const wire = new Wire();
    const front = new HandshakeFront(wire);
    front.answerWith(said);
    wire.deliver({ id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {} } });
    wire.deliver({ id: 2, method: "tools/list" });
    await flush();
    expect(wire.sent).toEqual([]);
    await sdkServer().connect(guardParams(front.attach())); // as serve-bridge.ts connects it
    await Promise.all([wire.answered(1), wire.answered(2)]);
    expect(byId(wire.sent, 1)[0]).toMatchObject({ error: { code: -32602 } });
    expect(byId(wire.sent, 2)[0]).toMatchObject({ result: { tools: [{ name: "run_python" }] } });
  });

  test("tools/list with a cursor waits for the server; without a handshake nothing is answered early", async () => {
    const wire = new Wire();
    const front = new HandshakeFront(wire);
    front.answerWith(said);
    wire.deliver(initialize(1));
    wire.deliver({ id: 2, method: "tools/list", params: { cursor: "x" } });
    await wire.answered(1);
    await flush();
    expect(wire.sent.map((m) => ("id" in m ? m.id : undefined))).toEqual([1]);

    const quiet = new Wire();
    const silent = new HandshakeFront(quiet);
    quiet.deliver(initialize(1));
    await flush();
    expect(quiet.sent).toEqual([]);
    await silent.opening({ initializeMs: 1000, nextMs: 1000 }); // no handshake: returns at once
  });

  test("opening() returns when tools/list is answered, or when the client keeps quiet", async () => {
    const wire = new Wire();
    const front = new HandshakeFront(wire);
    front.answerWith(said);
    const t0 = performance.now();
    setTimeout(() => wire.deliver(initialize(1)), 10);
    setTimeout(() => wire.deliver({ id: 2, method: "tools/list" }), 20);
    await front.opening({ initializeMs: 5_000, nextMs: 5_000 });
    expect(performance.now() - t0).toBeLessThan(2_000);
    expect(front.answered).toBe(2);

    const idle = new HandshakeFront(new Wire());
    idle.answerWith(said);
    const t1 = performance.now();
    await idle.opening({ initializeMs: 30, nextMs: 5_000 });
    expect(performance.now() - t1).toBeGreaterThanOrEqual(25);
  });

  test("a close before the server is attached reaches the front's handler; after, the server's", async () => {
    const wire = new Wire();
    const front = new HandshakeFront(wire);
    let closed = 0;
    front.onclose = () => closed++;
    await wire.close();
    expect(closed).toBe(1);
    const server = sdkServer();
    let serverClosed = 0;
    server.onclose = () => serverClosed++;
    await server.connect(front.attach());
    await wire.close();
    expect(closed).toBe(2); // the front's handler carried over to the attached transport
    expect(serverClosed).toBe(1);
  });

  test("a client that runs many conversations through one server gets the instructions that say so, whoever answers initialize", async () => {
    const opencode = (id: number) => initialize(id, "2025-11-25", { clientInfo: { name: "opencode", version: "1.18.33" } });
    const early = new Wire();
    const front = new HandshakeFront(early);
    front.answerWith(said);
    early.deliver(opencode(1));
    // Not answered here: the server answers, and the front gives its answer the same instructions.
    const late = new Wire();
    const unanswered = new HandshakeFront(late);
    late.deliver(opencode(1));
    await sdkServer().connect(unanswered.attach());
    await flush();
    for (const wire of [early, late]) {
      const { instructions } = (byId(wire.sent, 1)[0] as unknown as { result: { instructions: string } }).result;
      expect(instructions).toBe(instructionsFor(said.instructions, "opencode"));
      expect(instructions).toContain(OWN_SESSION_HINT);
    }
    expect(instructionsFor(said.instructions, "t")).toBe(said.instructions);
  });
});
