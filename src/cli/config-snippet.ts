/**
 * `mcp-code-exec config snippet --client X`: the exact block each MCP client wants, for the running
 * binary. The block goes to stdout (pipe it, or paste it); where to put it goes to stderr.
 */
import { homedir } from "node:os";
import { claudeDesktopConfigPath } from "../config/server-sources.ts";
import { BridgeError } from "../errors.ts";
import { selfLaunch, type Launch } from "../host/self.ts";

/** The clients `config snippet --client` knows. */
export const CLIENTS = ["claude-desktop", "claude-code", "cursor", "vscode"] as const;
/** One of CLIENTS. */
export type ClientName = (typeof CLIENTS)[number];

/** What renderSnippet needs: the client, the server's name, how to launch it and its environment. */
export interface SnippetInput {
  client: ClientName;
  /** The server's name in the client's config. */
  name: string;
  launch: Launch;
  env: Record<string, string>;
  /** claude-code only: the .mcp.json block instead of the `claude mcp add` command. */
  json?: boolean;
}

/** The text to paste and a note on where it goes. */
export function renderSnippet(input: SnippetInput, home = homedir(), platform: NodeJS.Platform = process.platform): { text: string; where: string } {
  const { name, launch, env } = input;
  const entry = {
    ...(input.client === "vscode" || input.client === "claude-code" ? { type: "stdio" } : {}),
    command: launch.command,
    ...(launch.args.length ? { args: launch.args } : {}),
    ...(Object.keys(env).length ? { env } : {}),
  };
  const json = (o: unknown) => JSON.stringify(o, null, 2);
  switch (input.client) {
    case "claude-desktop": {
      const file = claudeDesktopConfigPath({ env: process.env, home, cwd: process.cwd(), platform });
      return { text: json({ mcpServers: { [name]: entry } }), where: `merge into "mcpServers" in ${file}, then restart Claude Desktop` };
    }
    case "cursor":
      return { text: json({ mcpServers: { [name]: entry } }), where: `merge into "mcpServers" in ~/.cursor/mcp.json (every project) or .cursor/mcp.json (this project)` };
    case "vscode":
      return { text: json({ servers: { [name]: entry } }), where: `merge into "servers" in .vscode/mcp.json (this workspace), or run "MCP: Open User Configuration"` };
    case "claude-code": {
      if (input.json) return { text: json({ mcpServers: { [name]: entry } }), where: `merge into "mcpServers" in .mcp.json at the project root` };
      const envFlags = Object.entries(env).flatMap(([k, v]) => ["-e", shellQuote(`${k}=${v}`)]);
      const text = ["claude", "mcp", "add", shellQuote(name), ...envFlags, "--", ...[launch.command, ...launch.args].map(shellQuote)].join(" ");
      return { text, where: "run this in your project (add --scope user after `add` for every project); --json prints the .mcp.json block" };
    }
  }
}

/** Quote for sh only when needed. */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Print the snippet; returns the exit status. */
export function configSnippet(opts: { client?: string; name?: string; json?: boolean }): number {
  const client = opts.client as ClientName | undefined;
  if (!client || !CLIENTS.includes(client)) {
    throw new BridgeError("INVALID_INPUT", opts.client ? `unknown client "${opts.client}"` : "which client?", { hint: `pass --client ${CLIENTS.join("|")}` });
  }
  const env: Record<string, string> = {};
  if (process.env.MCP_BRIDGE_IMAGE?.trim()) env.MCP_BRIDGE_IMAGE = process.env.MCP_BRIDGE_IMAGE.trim();
  const { text, where } = renderSnippet({ client, name: opts.name || "code-exec", launch: selfLaunch(), env, json: opts.json });
  process.stdout.write(`${text}\n`);
  process.stderr.write(`# ${where}\n`);
  return 0;
}

/** `config <what>` from the command line; `snippet` is the only thing it prints so far. */
export function config(what: string, opts: { client?: string; name?: string; json?: boolean }): number {
  if (what !== "snippet") throw new BridgeError("INVALID_INPUT", `unknown config action "${what}"`, { hint: "use `mcp-code-exec config snippet --client claude-desktop`" });
  return configSnippet(opts);
}
