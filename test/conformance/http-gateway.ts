/**
 * The official conformance suite speaks Streamable HTTP; the bridge speaks stdio. This gateway relays
 * JSON-RPC messages unchanged between the two, one compiled-binary process per MCP session, so the suite
 * tests the binary users install. It adds nothing of its own beyond HTTP session handling.
 *   bun test/conformance/http-gateway.ts  → prints the URL, serves until stdin closes
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isJSONRPCRequest, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { BINARY } from "../support/binary.ts";
import { bridgeEnv } from "../support/env.ts";

export interface Gateway {
  url: string;
  close(): Promise<void>;
}

export async function startGateway(env: Record<string, string> = {}): Promise<Gateway> {
  const sessions = new Map<string, { http: StreamableHTTPServerTransport; stdio: StdioClientTransport }>();

  async function openSession(): Promise<StreamableHTTPServerTransport> {
    const stdio = new StdioClientTransport({ command: BINARY, args: [], env: bridgeEnv(env), stderr: "ignore" });
    const http = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, { http, stdio }),
    });
    // Notifications tied to a request (progress) must go out on that request's stream.
    const byProgressToken = new Map<string | number, string | number>();
    http.onmessage = (message: JSONRPCMessage) => {
      if (isJSONRPCRequest(message)) {
        const token = (message.params as { _meta?: { progressToken?: string | number } } | undefined)?._meta?.progressToken;
        if (token !== undefined) byProgressToken.set(token, message.id);
      }
      void stdio.send(message);
    };
    stdio.onmessage = (message: JSONRPCMessage) => {
      const token =
        "method" in message && message.method === "notifications/progress"
          ? (message.params as { progressToken: string | number }).progressToken
          : undefined;
      void http.send(message, token === undefined ? undefined : { relatedRequestId: byProgressToken.get(token) });
    };
    stdio.onclose = () => void http.close();
    http.onclose = () => {
      if (http.sessionId) sessions.delete(http.sessionId);
      void stdio.close();
    };
    await stdio.start();
    await http.start();
    return http;
  }

  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    try {
      const id = req.headers["mcp-session-id"];
      const known = typeof id === "string" ? sessions.get(id) : undefined;
      if (known) return await known.http.handleRequest(req, res);
      if (req.method === "POST" && !id) return await (await openSession()).handleRequest(req, res);
      res
        .writeHead(404, { "content-type": "application/json" })
        .end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "session not found" } }));
    } catch (err) {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    async close() {
      for (const s of sessions.values()) await s.stdio.close().catch(() => {});
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

if (import.meta.main) {
  const gw = await startGateway({ MCP_BRIDGE_RUNTIME: process.env.MCP_BRIDGE_RUNTIME ?? "docker" });
  console.log(gw.url);
  process.stdin.on("end", () => void gw.close().then(() => process.exit(0)));
  process.stdin.resume();
}
