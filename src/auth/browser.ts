/**
 * Opening the authorization page in the user's browser. MCP_BRIDGE_BROWSER (read and checked with the
 * rest of the configuration, src/config/env.ts) picks the command, with the URL added last, or `none`
 * to only print the link; otherwise `open` (macOS), `rundll32 url.dll,FileProtocolHandler` (Windows) or
 * `xdg-open` / `wslview`. The URL is always printed as well, for machines without a browser.
 */
import { runCommand, which } from "../host/process.ts";

export interface BrowserCommand {
  command: string;
  args: string[];
}

/**
 * The command that opens a URL here, or undefined when there is none. `configured` is the parsed
 * MCP_BRIDGE_BROWSER (`[]` for none, undefined when unset).
 */
export function browserCommand(
  configured: readonly string[] | undefined,
  pathVar = "",
  platform: NodeJS.Platform = process.platform,
): BrowserCommand | undefined {
  if (configured) {
    const [command, ...args] = configured;
    return command === undefined ? undefined : { command, args };
  }
  if (platform === "darwin") return { command: "open", args: [] };
  if (platform === "win32") return { command: "rundll32", args: ["url.dll,FileProtocolHandler"] };
  for (const c of ["xdg-open", "wslview"]) if (which(c, pathVar)) return { command: c, args: [] };
  return undefined;
}

/**
 * Start the browser on `url` without waiting for it to close; `onProblem` hears why it could not be
 * opened (the caller has printed the URL, so the user can still open it by hand).
 */
export function openBrowser(
  url: string,
  configured: readonly string[] | undefined,
  env: Record<string, string | undefined>,
  onProblem: (message: string) => void,
): void {
  const cmd = browserCommand(configured, env.PATH ?? "");
  if (!cmd) return onProblem(configured ? "MCP_BRIDGE_BROWSER=none" : "no browser command found (set MCP_BRIDGE_BROWSER)");
  const path = which(cmd.command, env.PATH ?? "");
  if (!path) return onProblem(`browser command ${JSON.stringify(cmd.command)} not found`);
  const childEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) childEnv[k] = v;
  runCommand(path, [...cmd.args, url], { env: childEnv }).then(
    (r) => {
      if (r.exitCode !== 0)
        onProblem(
          `${cmd.command} exited with ${r.exitCode ?? "a signal"}${r.stderr.trim() ? `: ${r.stderr.trim().split("\n").slice(-2).join(" | ").slice(0, 300)}` : ""}`,
        );
    },
    (err: Error) => onProblem(`${cmd.command} failed: ${err.message}`),
  );
}
