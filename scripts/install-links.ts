#!/usr/bin/env bun
/**
 * "Add to Cursor" and "Install in VS Code" links for README.md, for the npx form of this version:
 *   bun scripts/install-links.ts          prints the Markdown to paste into README's Install section
 * Cursor: cursor://anysphere.cursor-deeplink/mcp/install?name=NAME&config=BASE64(JSON of the server
 * entry), reached from GitHub through https://cursor.com/en/install-mcp with the same query (GitHub drops
 * links with custom schemes). VS Code: vscode:mcp/install?URL-ENCODED(JSON of {name, ...entry}), reached
 * through https://insiders.vscode.dev/redirect?url=URL-ENCODED(that link). The entries are exactly what
 * `mcp-code-exec config snippet --npx --client cursor|vscode` prints.
 */
import { renderSnippet } from "../src/cli/config-snippet.ts";
import { NPX_LAUNCH } from "./release-meta.ts";

export const SERVER_NAME = "code-exec";

/** The server entry `config snippet` prints for that client, launched with npx. */
export function entryFor(client: "cursor" | "vscode"): Record<string, unknown> {
  const { text } = renderSnippet({ client, name: SERVER_NAME, launch: NPX_LAUNCH, env: {} });
  const doc = JSON.parse(text) as Record<string, Record<string, Record<string, unknown>>>;
  return (client === "cursor" ? doc.mcpServers : doc.servers)?.[SERVER_NAME] as Record<string, unknown>;
}

export function cursorDeeplink(name: string, entry: Record<string, unknown>): string {
  const config = Buffer.from(JSON.stringify(entry)).toString("base64");
  return `cursor://anysphere.cursor-deeplink/mcp/install?name=${encodeURIComponent(name)}&config=${encodeURIComponent(config)}`;
}

/** The https page that opens the Cursor deeplink (same query). */
export function cursorWebLink(name: string, entry: Record<string, unknown>): string {
  const link = cursorDeeplink(name, entry);
  return `https://cursor.com/en/install-mcp${link.slice(link.indexOf("?"))}`;
}

export function vscodeDeeplink(name: string, entry: Record<string, unknown>): string {
  return `vscode:mcp/install?${encodeURIComponent(JSON.stringify({ name, ...entry }))}`;
}

/** The https redirect that opens the VS Code deeplink. */
export function vscodeWebLink(name: string, entry: Record<string, unknown>): string {
  return `https://insiders.vscode.dev/redirect?url=${encodeURIComponent(vscodeDeeplink(name, entry))}`;
}

/** The two buttons, as README shows them. */
export function installLinksMarkdown(): string {
  return [
    `[![Add to Cursor](https://cursor.com/deeplink/mcp-install-dark.svg)](${cursorWebLink(SERVER_NAME, entryFor("cursor"))})`,
    `[![Install in VS Code](https://img.shields.io/badge/VS_Code-Install_code--exec-0098FF)](${vscodeWebLink(SERVER_NAME, entryFor("vscode"))})`,
  ].join("\n");
}

if (import.meta.main) console.log(installLinksMarkdown());
