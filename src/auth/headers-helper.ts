/**
 * Claude Code's `headersHelper`: a shell command, run on this computer each time the bridge connects to
 * the server, that prints a JSON object of HTTP headers (for short-lived tokens from a vault, an SSO CLI,
 * ...). As in Claude Code it runs through the shell with CLAUDE_CODE_MCP_SERVER_NAME and
 * CLAUDE_CODE_MCP_SERVER_URL set, within 10 seconds, and its headers win over static `headers` of the
 * same name.
 *
 * It runs a command on this computer, so it runs only for a server the user trusts (issue 10's model:
 * `entry.trust`, decided at discovery). A definition from a repository's file (`.mcp.json`, ...) is
 * trusted only once approved, and the approval covers the headersHelper (it is part of the digest).
 */
import * as z from "zod";
import type { ServerEntry } from "../config/servers.ts";
import { runCommand } from "../host/process.ts";

const HELPER_TIMEOUT_MS = 10_000;

const HeadersOutputSchema = z
  .record(
    z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, "not a valid header name"),
    z.string().regex(/^[^\r\n\0]*$/, "header values must not contain line breaks"),
  )
  .describe("Headers printed by headersHelper: a JSON object of header names to string values");

export class HeadersHelperError extends Error {
  constructor(server: string, message: string) {
    super(`headersHelper of server ${server}: ${message}`);
    this.name = "HeadersHelperError";
  }
}

export interface HeadersHelperContext {
  env: Record<string, string | undefined>;
  cwd: string;
  platform?: NodeJS.Platform;
}

/** Run the entry's headersHelper (if it has one) and return its headers; throws HeadersHelperError. */
export async function helperHeaders(entry: ServerEntry, ctx: HeadersHelperContext): Promise<Record<string, string>> {
  const t = entry.transport;
  if (t.type === "stdio" || !t.headersHelper) return {};
  // Checked here as well as before the server starts: nothing else may make this run untrusted.
  if (entry.trust.state !== "trusted") {
    throw new HeadersHelperError(
      entry.name,
      `not run, because it would run a command on this computer and the server is not trusted: ${entry.trust.reason}${entry.trust.approve ? `; to approve it, run: ${entry.trust.approve}` : ""}`,
    );
  }
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(ctx.env)) if (v !== undefined) env[k] = v;
  env.CLAUDE_CODE_MCP_SERVER_NAME = entry.name;
  env.CLAUDE_CODE_MCP_SERVER_URL = t.url;
  const windows = (ctx.platform ?? process.platform) === "win32";
  const [shell, ...args] = windows ? [env.ComSpec ?? "cmd.exe", "/d", "/s", "/c", t.headersHelper] : ["/bin/sh", "-c", t.headersHelper];
  let r;
  try {
    r = await runCommand(shell!, args, { env, cwd: ctx.cwd, timeoutMs: HELPER_TIMEOUT_MS });
  } catch (err) {
    throw new HeadersHelperError(entry.name, `could not start ${shell}: ${(err as Error).message}`);
  }
  const tail = r.stderr.trim().split("\n").slice(-3).join(" | ").slice(0, 300);
  // The command itself is never quoted in errors: it may hold a secret, and errors reach sandbox code.
  if (r.timedOut) throw new HeadersHelperError(entry.name, `the command did not finish within ${HELPER_TIMEOUT_MS / 1000}s`);
  if (r.exitCode !== 0)
    throw new HeadersHelperError(entry.name, `the command exited with ${r.exitCode ?? "a signal"}${tail ? ` (stderr: ${tail})` : ""}`);
  let value: unknown;
  try {
    value = JSON.parse(r.stdout);
  } catch {
    throw new HeadersHelperError(
      entry.name,
      `the command must print a JSON object of headers, e.g. {"Authorization": "Bearer ..."}; it printed ${r.stdout.trim() ? `${r.stdout.trim().length} characters that are not JSON` : "nothing"}`,
    );
  }
  const parsed = HeadersOutputSchema.safeParse(value);
  if (!parsed.success) {
    // Never echo the values: they are credentials.
    const where = parsed.error.issues
      .map((i) => (i.path.length ? `${String(i.path[0]).slice(0, 60)}: ${i.message}` : i.message))
      .join("; ");
    throw new HeadersHelperError(entry.name, `the command printed JSON that is not an object of string headers (${where})`);
  }
  return parsed.data;
}
