/**
 * Whether a discovered server may start. Files the user keeps in their home folder (and what an
 * administrator deploys, and MCP_BRIDGE_CONFIG) are theirs; a definition from inside the working folder
 * or its parents comes from whatever repository was opened, so it starts only once the user approved it:
 * in the client's own record, or with `mcp-code-exec servers trust NAME` (bound to a digest of what runs).
 */
import type { ClaudeCodeSettings } from "./clients/claude-code-settings.ts";
import type { Scope } from "./looked.ts";
import { shellWord } from "./mask.ts";
import { isCurrentDigest } from "./trust-digest.ts";
import type { TrustStore } from "./trust-store.ts";

export interface TrustInfo {
  state: "trusted" | "needs-approval";
  /** Why it may start, or why not yet. */
  reason: string;
  /** How to approve it (needs-approval only). */
  approve?: string;
}

export interface TrustSubject {
  name: string;
  client: string;
  scope: Scope;
  /** File that defines it. */
  source: string;
  digest: string;
}

/** Approvals a client keeps itself, other than Claude Code's (read by each client's reader). */
export type ClientApproval = string | undefined;

export interface TrustContext {
  claude?: ClaudeCodeSettings;
  store: TrustStore;
}

const SCOPE_REASON: Partial<Record<Scope, string>> = {
  explicit: "named in MCP_BRIDGE_CONFIG",
  managed: "deployed by your administrator (a system-wide file)",
  user: "your own user-level file",
};

/** Whether a definition from this scope starts only once approved (it comes from a repository). */
export function needsApproval(scope: Scope): boolean {
  return SCOPE_REASON[scope] === undefined;
}

/** Decide one server's trust. `clientApproval` is the client's own record approving it, if any. */
export function decideTrust(s: TrustSubject, ctx: TrustContext, clientApproval?: ClientApproval): TrustInfo {
  const own = SCOPE_REASON[s.scope];
  if (own) return { state: "trusted", reason: own };
  const approve = approveHint(s);
  const record = ctx.store.records.find((r) => r.name === s.name && r.file === s.source);
  if (record && record.digest === s.digest) {
    return {
      state: "trusted",
      reason: `approved with \`mcp-code-exec servers trust\`${record.approved ? ` on ${record.approved.slice(0, 10)}` : ""}`,
    };
  }
  if (clientApproval) return { state: "trusted", reason: clientApproval };
  if (record) {
    const on = record.approved ? ` on ${record.approved.slice(0, 10)}` : "";
    return {
      state: "needs-approval",
      reason: isCurrentDigest(record.digest)
        ? `its definition, or a file it reads or names in the repository, changed since you approved it${on}`
        : `you approved it${on} with an older mcp-code-exec, whose approvals did not cover env and header values or the files a definition reads; approve it again`,
      approve,
    };
  }
  const where =
    s.scope === "local"
      ? "Claude Code's entry for a folder you have not trusted"
      : "a project file (inside the working folder or its parents)";
  return { state: "needs-approval", reason: `defined in ${where}; nothing from there starts until you approve it`, approve };
}

function approveHint(s: TrustSubject): string {
  const ours = `mcp-code-exec servers trust ${shellWord(s.name)}`;
  if (s.client === "claude-code" && s.scope === "project")
    return `${ours} (or approve it in Claude Code: run \`claude\` in this folder, or add it to enabledMcpjsonServers in ~/.claude/settings.json)`;
  if (s.client === "claude-code" && s.scope === "local") return `${ours} (or run \`claude\` in this folder and accept the trust dialog)`;
  const client: Record<string, string> = {
    codex: "trust the project in Codex",
    gemini: "trust the folder in Gemini CLI",
    "copilot-cli": "trust the folder in GitHub Copilot CLI",
  };
  return client[s.client] ? `${ours} (or ${client[s.client]})` : ours;
}
