/** `mcp-code-exec exec`: run code once from -c, a file or stdin, and print the result. */
import { readFileSync } from "node:fs";
import { createApp } from "../app.ts";
import { BridgeError } from "../errors.ts";
import { getRenderer } from "../render/render.ts";
import { removeAllContainersSync } from "../sandbox/live-containers.ts";
import { checkRunRequest } from "../server/request-checks.ts";

export interface ExecOptions {
  code?: string;
  file?: string;
  timeout?: number;
  json?: boolean;
  servers?: string[];
}

export async function exec(opts: ExecOptions): Promise<number> {
  const code = opts.code ?? readSource(opts.file);
  // A person at a terminal wants the result, not the bridge's INFO lines.
  const app = createApp({ ...process.env, MCP_BRIDGE_LOG_LEVEL: process.env.MCP_BRIDGE_LOG_LEVEL ?? "WARNING" });
  const problem = checkRunRequest({ timeout: opts.timeout, servers: opts.servers }, app.config, app.pool);
  if (problem) throw new BridgeError("INVALID_INPUT", problem.replace(/^\[mcp-code-exec\] /, ""));
  const session = app.newSession();
  process.on("exit", () => {
    removeAllContainersSync();
    app.killUpstreamsSync();
  });
  for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    process.on(sig, () => {
      void session.close().finally(() => process.exit(130));
    });
  }
  try {
    const outcome = await session.run({ code, timeoutSec: opts.timeout, servers: opts.servers });
    const r = getRenderer(opts.json ? "json" : app.config.outputMode)(outcome);
    process.stdout.write(`${r.text}\n`);
    return r.isError ? 1 : 0;
  } finally {
    await session.close();
    await app.close();
  }
}

function readSource(file: string | undefined): string {
  if (file === undefined || file === "-") {
    if (process.stdin.isTTY && file === undefined) {
      throw new BridgeError("INVALID_INPUT", "no code given", { hint: "pass -c CODE, a file name, or pipe code on stdin" });
    }
    return readFileSync(0, "utf8");
  }
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw new BridgeError("INVALID_INPUT", `cannot read ${file}: ${(err as Error).message}`);
  }
}
