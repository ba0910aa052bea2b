/**
 * `mcp-code-exec config snippet --client X`: the exact block each MCP client wants, for the running
 * binary. The block goes to stdout (pipe it, or paste it); where to put it goes to stderr.
 * `config add --client X` writes it into the client's own file (./config-add.ts).
 */
import { homedir } from "node:os";
import { BridgeError } from "../errors.ts";
import { npxLaunch, selfLaunch, type Launch } from "../host/self.ts";
import pkg from "../../package.json" with { type: "json" };
import { CLIENTS, snippetText, TARGETS, type ClientName } from "./client-targets.ts";

export { CLIENTS, type ClientName } from "./client-targets.ts";

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
export function renderSnippet(
  input: SnippetInput,
  home = homedir(),
  platform: NodeJS.Platform = process.platform,
): { text: string; where: string } {
  const { client, name, launch, env } = input;
  const t = TARGETS[client];
  if (client === "claude-code" && !input.json) {
    const envFlags = Object.entries(env).flatMap(([k, v]) => ["-e", shellQuote(`${k}=${v}`)]);
    const text = ["claude", "mcp", "add", shellQuote(name), ...envFlags, "--", ...[launch.command, ...launch.args].map(shellQuote)].join(
      " ",
    );
    return { text, where: "run this in your project (add --scope user after `add` for every project); --json prints the .mcp.json block" };
  }
  const file = t.file({ env: process.env, home, platform });
  const where = client === "claude-desktop" ? `merge into "mcpServers" in ${file}, then restart Claude Desktop` : t.where;
  return { text: snippetText(client, name, launch, env), where: `${where}; or run \`mcp-code-exec config add --client ${client}\`` };
}

/** Quote for sh only when needed. */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The client named on the command line, or a usage error listing them. */
export function clientArg(client: string | undefined): ClientName {
  if (!client || !(CLIENTS as readonly string[]).includes(client)) {
    throw new BridgeError("INVALID_INPUT", client ? `unknown client "${client}"` : "which client?", {
      hint: `pass --client ${CLIENTS.join("|")}`,
    });
  }
  return client as ClientName;
}

/**
 * MCP_BRIDGE_IMAGE and MCP_BRIDGE_MAX_TIMEOUT, when set, go into the entry (the longest run also sets the
 * timeout of clients whose entry has one, so the two stay together whatever the client's environment).
 */
export function bridgeEnvForEntry(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ["MCP_BRIDGE_IMAGE", "MCP_BRIDGE_MAX_TIMEOUT"]) if (process.env[key]?.trim()) env[key] = process.env[key]!.trim();
  return env;
}

/**
 * This binary, or `npx -y mcp-code-exec@<version>` with --npx. Started by npx (the npm launcher sets
 * MCP_CODE_EXEC_LAUNCHER=npx), the binary sits in npm's cache, so the npx form is the default there.
 */
export function launchFor(npx = process.env.MCP_CODE_EXEC_LAUNCHER === "npx"): Launch {
  return npx ? npxLaunch(pkg.version) : selfLaunch();
}

/** Print the snippet; returns the exit status. */
export function configSnippet(opts: { client?: string; name?: string; json?: boolean; npx?: boolean }): number {
  const client = clientArg(opts.client);
  const { text, where } = renderSnippet({
    client,
    name: opts.name || "code-exec",
    launch: launchFor(opts.npx),
    env: bridgeEnvForEntry(),
    json: opts.json,
  });
  process.stdout.write(`${text}\n`);
  process.stderr.write(`# ${where}\n`);
  return 0;
}

/** `config snippet` or `config add` from the command line. */
export async function config(
  what: string,
  opts: { client?: string; name?: string; json?: boolean; force?: boolean; npx?: boolean },
): Promise<number> {
  if (what === "snippet") return configSnippet(opts);
  if (what === "add") return (await import("./config-add.ts")).configAdd(opts);
  throw new BridgeError("INVALID_INPUT", `unknown config action "${what}"`, {
    hint: "use `mcp-code-exec config snippet --client claude-desktop` or `config add --client cursor`",
  });
}
