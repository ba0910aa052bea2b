/**
 * The bridge's MCP server on a local-python session (test/support/local-session.ts), talked to by the
 * SDK's real Client over the SDK's in-memory transport pair: the whole request path (client → server
 * → session → Python → upstream servers and back) in one process, with no engine and no binary.
 * End-to-end suites use the compiled binary instead (test/support/bridge.ts).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { ClientCapabilities, CallToolResult, Progress } from "@modelcontextprotocol/sdk/types.js";
import { VERSION } from "../../src/app.ts";
import { getRenderer } from "../../src/render/render.ts";
import { createBridgeServer } from "../../src/server/bridge-server.ts";
import { handshake } from "../../src/server/handshake.ts";
import { HandshakeFront } from "../../src/server/handshake-front.ts";
import type { Clock } from "../../src/clock.ts";
import { LOCAL_PRINCIPAL, Sessions } from "../../src/session/sessions.ts";
import { localSession, type LocalSession } from "./local-session.ts";

export interface LocalBridge extends LocalSession {
  client: Client;
  run(
    code: string,
    extra?: {
      timeout?: number;
      reset?: boolean;
      servers?: string[];
      session?: string;
      signal?: AbortSignal;
      onprogress?: (p: Progress) => void;
    },
  ): Promise<{ text: string; isError: boolean; structured: Record<string, unknown> }>;
}

/** `setup` registers the client's handlers (elicitation, sampling) before it connects. */
export async function localBridge(
  env: Record<string, string>,
  capabilities: ClientCapabilities,
  setup: (client: Client) => void = () => {},
  opts: { cwd?: string; front?: boolean; clock?: Clock } = {},
): Promise<LocalBridge> {
  const local = localSession({ MCP_BRIDGE_OUTPUT_MODE: "json", MCP_BRIDGE_STRUCTURED_CONTENT: "1", ...env }, opts);
  const { app, session } = local;
  const said = handshake(
    app.config,
    VERSION,
    app
      .pool()
      .entries()
      .map((e) => e.name),
  );
  // The default session is the local one the suites look at; "new" ones run on the same engine.
  let first = true;
  const sessions = new Sessions({
    make: () => {
      if (!first) return local.newSession();
      first = false;
      return session;
    },
    ttlMs: 0,
    maxPerPrincipal: app.config.maxSessionsPerUser,
    log: app.log,
  });
  const server = createBridgeServer({
    config: app.config,
    sessions,
    principal: LOCAL_PRINCIPAL,
    connection: "local",
    render: getRenderer(app.config.outputMode),
    log: app.log,
    handshake: said,
    pool: app.pool,
    metrics: app.metrics,
  });
  const client = new Client({ name: "approvals-test-client", version: "0.0.0" }, { capabilities });
  setup(client);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  if (opts.front) {
    // As `serve` does: the front answers the opening, the server is attached afterwards (server/handshake-front.ts).
    const front = new HandshakeFront(serverSide);
    front.answerWith(said);
    await serverSide.start();
    await client.connect(clientSide);
    await client.listTools();
    await server.connect(front.attach());
  } else {
    await server.connect(serverSide);
    await client.connect(clientSide);
  }
  return {
    ...local,
    client,
    async run(code, extra = {}) {
      const { signal, onprogress, ...args } = extra;
      const raw = (await client.callTool({ name: "run_python", arguments: { code, ...args } }, undefined, {
        timeout: 120_000,
        signal,
        onprogress,
      })) as CallToolResult;
      const text = raw.content.map((c) => (c.type === "text" ? c.text : `<${c.type}>`)).join("\n");
      return { text, isError: raw.isError === true, structured: (raw.structuredContent ?? {}) as Record<string, unknown> };
    },
    async close() {
      await client.close().catch(() => {});
      await local.close();
    },
  };
}
