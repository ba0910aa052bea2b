/**
 * The gate between an upstream's transport and the SDK's Client (src/upstream/notification-gate.ts),
 * with the real Client: messages are handed over as the stdio transport hands them, several from one
 * read in one go.
 */
import { expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { createLogger } from "../../src/log.ts";
import { gateTransport, NotificationGate } from "../../src/upstream/notification-gate.ts";
import { Arrivals } from "../support/events.ts";

/** The server's end played by the test: what the client sends arrives here; `read` hands messages to the client. */
class ScriptedWire implements Transport {
  onmessage?: Transport["onmessage"];
  onclose?: () => void;
  onerror?: (e: Error) => void;
  sent = new Arrivals<JSONRPCMessage>();
  async start() {}
  async send(m: JSONRPCMessage) {
    this.sent.push(m);
  }
  async close() {
    this.onclose?.();
  }
  /** Messages from one read of the pipe: handed over one after another, with nothing in between. */
  read(...messages: Array<Record<string, unknown>>) {
    for (const m of messages) this.onmessage?.({ jsonrpc: "2.0", ...m } as JSONRPCMessage);
  }
}

test("a server's last progress, read together with its answer, still reaches the caller", async () => {
  const wire = gateTransport(new ScriptedWire(), new NotificationGate("s", createLogger("ERROR", "text")));
  const client = new Client({ name: "t", version: "1" });
  const connecting = client.connect(wire);
  const init = (await wire.sent.count(1))[0] as { id: number };
  wire.read({
    id: init.id,
    result: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "s", version: "1" } },
  });
  await connecting;
  const progress: number[] = [];
  const calling = client.callTool({ name: "long", arguments: {} }, undefined, { onprogress: (p) => progress.push(p.progress) });
  const call = (await wire.sent.find((m) => "method" in m && m.method === "tools/call")) as {
    id: number;
    params: { _meta: { progressToken: number } };
  };
  const token = call.params._meta.progressToken;
  const note = (n: number) => ({ method: "notifications/progress", params: { progressToken: token, progress: n, total: 3 } });
  wire.read(note(1), note(2), note(3), { id: call.id, result: { content: [{ type: "text", text: "done" }] } });
  expect((await calling).content).toEqual([{ type: "text", text: "done" }]);
  expect(progress).toEqual([1, 2, 3]);
  await client.close();
});
