/** The clients whose files we read, in our order between clients (an earlier definition of a name wins). */

export const CLIENT_LABELS: Record<string, string> = {
  bridge: "mcp-code-exec",
  "claude-code": "Claude Code",
  "claude-desktop": "Claude Desktop",
  vscode: "VS Code",
  cursor: "Cursor",
  windsurf: "Windsurf",
  codex: "Codex",
  gemini: "Gemini CLI",
  zed: "Zed",
  opencode: "opencode",
  cline: "Cline",
  continue: "Continue",
  goose: "Goose",
  "copilot-cli": "GitHub Copilot CLI",
};

/** Our order between clients; inside each, the client's own precedence between its scopes. */
export const CLIENT_ORDER = [
  "bridge",
  "claude-code",
  "claude-desktop",
  "vscode",
  "cursor",
  "windsurf",
  "codex",
  "gemini",
  "zed",
  "opencode",
  "cline",
  "continue",
  "goose",
  "copilot-cli",
] as const;

export const CLIENT_ORDER_TEXT = `between clients an earlier one wins a name: MCP_BRIDGE_CONFIG, our folders, ${CLIENT_ORDER.slice(1)
  .map((c) => CLIENT_LABELS[c])
  .join(", ")}; inside a client, its own precedence`;

export function clientLabel(id: string): string {
  return CLIENT_LABELS[id] ?? id;
}
