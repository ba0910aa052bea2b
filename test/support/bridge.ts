/** Spawn the compiled bridge and talk to it with the MCP SDK's real client over stdio. */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult, ClientCapabilities, Progress } from "@modelcontextprotocol/sdk/types.js";
import { BINARY } from "./binary.ts";
import { bridgeEnv } from "./env.ts";

export interface BridgeHandle {
  client: Client;
  pid: number;
  stderr(): string;
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
  ): Promise<RunResult>;
  close(): Promise<void>;
}

export interface RunResult {
  text: string;
  isError: boolean;
  structured: Record<string, unknown>;
  raw: CallToolResult;
}

/**
 * `opts.wrap` runs the binary through a command prefix (e.g. withoutEngines from hide-engines.ts);
 * `opts.capabilities` and `opts.setup` make a client that declares and handles more (elicitation, sampling).
 */
export async function startBridge(
  env: Record<string, string> = {},
  opts: {
    args?: string[];
    cwd?: string;
    wrap?: (argv: string[]) => string[];
    capabilities?: ClientCapabilities;
    setup?: (client: Client) => void;
  } = {},
): Promise<BridgeHandle> {
  const [command, ...args] = (opts.wrap ?? ((a) => a))([BINARY, ...(opts.args ?? [])]);
  const transport = new StdioClientTransport({ command: command!, args, env: bridgeEnv(env), stderr: "pipe", cwd: opts.cwd });
  let stderr = "";
  transport.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const client = new Client({ name: "mcp-code-exec-tests", version: "0.0.0" }, { capabilities: opts.capabilities ?? {} });
  opts.setup?.(client);
  await client.connect(transport);
  const pid = transport.pid ?? -1;
  return {
    client,
    pid,
    stderr: () => stderr,
    async run(code, extra = {}) {
      const { signal, onprogress, ...args } = extra;
      const raw = (await client.callTool({ name: "run_python", arguments: { code, ...args } }, undefined, {
        timeout: 300_000,
        signal,
        onprogress,
      })) as CallToolResult;
      const text = raw.content.map((c) => (c.type === "text" ? c.text : `<${c.type}>`)).join("\n");
      return { text, isError: raw.isError === true, structured: (raw.structuredContent ?? {}) as Record<string, unknown>, raw };
    },
    async close() {
      await client.close().catch(() => {});
    },
  };
}
