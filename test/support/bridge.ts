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
  /** Settles with its stderr so far once `check` accepts it: a log line the test waits for. */
  stderrSays(check: (text: string) => boolean): Promise<string>;
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
  let waiting: Array<() => boolean> = [];
  transport.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
    waiting = waiting.filter((settled) => !settled());
  });
  const client = new Client({ name: "mcp-code-exec-tests", version: "0.0.0" }, { capabilities: opts.capabilities ?? {} });
  opts.setup?.(client);
  await client.connect(transport);
  const pid = transport.pid ?? -1;
  return {
    client,
    pid,
    stderr: () => stderr,
    stderrSays: (check) =>
      new Promise((resolve) => {
        const settled = () => check(stderr) && (resolve(stderr), true);
        if (!settled()) waiting.push(settled);
      }),
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

/** A line for sandbox code to print where it has started: the bridge streams it as progress. */
export const SAY_STARTED = "print('started', flush=True)";

/** For run()'s onprogress: `started` settles once the code has printed SAY_STARTED. */
export function codeStarted(): { onprogress: (p: Progress) => void; started: Promise<void> } {
  const { promise, resolve } = Promise.withResolvers<void>();
  return {
    onprogress: (p) => {
      if (/^started$/m.test(String(p.message ?? ""))) resolve();
    },
    started: promise,
  };
}

/** How many sandboxes the bridge has seen exit so far (its DEBUG log says "sandbox exited"). */
export const exitsLogged = (stderr: string): number => stderr.split("sandbox exited").length - 1;
