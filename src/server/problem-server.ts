/**
 * When the bridge's own settings cannot be read (an MCP_BRIDGE_* variable with a bad value, a settings
 * file that is not valid JSON or holds an unknown policy key), it still connects instead of exiting:
 * a client whose server exits at start shows only "failed to connect", with the reason in a log file
 * few users open. Here the client lists the bridge, its `initialize` instructions say what is wrong,
 * and every run_python call answers with the problem and its fix, which the model reads and tells the
 * user. Nothing runs: a settings file that cannot be read may hold a policy that forbids what code
 * would do.
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { loadConfig } from "../config/env.ts";
import { handshake, initializeResult, TOOL_NAME } from "./handshake.ts";
import { JSONRPC_ERROR } from "./jsonrpc-envelope.ts";
import type { StdioTransport } from "./stdio-transport.ts";

/**
 * Serve on `transport` until it closes, answering every request from `problem` (the rendered error,
 * with its fix). `home` and `env` give the defaults run_python's arguments are described with.
 */
export function serveProblem(
  transport: StdioTransport,
  problem: string,
  version: string,
  env: Record<string, string | undefined>,
  home: string,
): void {
  // run_python as the default settings describe it: the client sees the tool it will have once fixed.
  const defaults = Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith("MCP_BRIDGE_")));
  const said = handshake(loadConfig(defaults, home), version, [], problem);
  const reply = (id: string | number, result: Record<string, unknown>) => transport.send({ jsonrpc: "2.0", id, result } as JSONRPCMessage);
  const fail = (id: string | number, code: number, message: string) => transport.send({ jsonrpc: "2.0", id, error: { code, message } });
  transport.onmessage = (message) => {
    if (!("method" in message) || !("id" in message)) return; // notifications and answers: nothing to do
    const { id, method } = message;
    const params = (message.params ?? {}) as Record<string, unknown>;
    switch (method) {
      case "initialize":
        return void reply(id, initializeResult(said, String(params.protocolVersion ?? "")));
      case "ping":
        return void reply(id, {});
      case "tools/list":
        return void reply(id, { tools: [said.tool] });
      case "resources/list":
        return void reply(id, { resources: [] });
      case "resources/templates/list":
        return void reply(id, { resourceTemplates: [] });
      case "tools/call":
        if (params.name !== TOOL_NAME)
          return void fail(
            id,
            JSONRPC_ERROR.InvalidParams,
            `unknown tool ${JSON.stringify(params.name)}: this server has one tool, ${TOOL_NAME}`,
          );
        return void reply(id, {
          content: [{ type: "text", text: `${problem}\nNothing runs until this is fixed; then restart the MCP server (or the client).` }],
          isError: true,
        });
      default:
        return void fail(id, JSONRPC_ERROR.MethodNotFound, `method not found: ${method}`);
    }
  };
}
