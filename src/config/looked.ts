/** Every path discovery looked at, and what it found there: shown by `mcp-code-exec servers`. */

/** Where a definition lives, as its client sees it. */
export type Scope =
  /** Named by the user in MCP_BRIDGE_CONFIG. */
  | "explicit"
  /** Deployed by an administrator (Claude Code managed-mcp.json). */
  | "managed"
  /** The user's own files in their home folder. */
  | "user"
  /** The user's own per-project entry (Claude Code `projects[path]`), in their home folder. */
  | "local"
  /** A file inside the working folder or its parents: whatever repository the user opened. */
  | "project";

export type LookStatus = "found" | "absent" | "unreadable" | "ignored";

export interface LookedAt {
  path: string;
  /** Client whose file this is ("bridge" for our own folders). */
  client: string;
  scope?: Scope;
  status: LookStatus;
  /** Why ignored or unreadable, or what the file holds. */
  note?: string;
}
