/**
 * The contract every client reader fulfils: given where we are, read that client's files the way the
 * client does and return its server definitions in the client's own precedence (first wins a name).
 * One file per client in this folder; the registry (./index.ts) fixes our order between clients.
 */
import type { Definition } from "../definition.ts";
import type { FileFormat } from "../config-file.ts";
import type { Scope } from "../looked.ts";
import type { PathSegment } from "../server-schemas.ts";
import type { ReadResult } from "../config-file.ts";
import type { VarSyntax } from "../variables.ts";
import type { ClaudeCodeSettings } from "./claude-code-settings.ts";

export interface ReadContext {
  env: Record<string, string | undefined>;
  home: string;
  cwd: string;
  platform: NodeJS.Platform;
  claude: ClaudeCodeSettings;
  /**
   * Read a file (recorded as looked at; a broken file is reported) and return its top-level object.
   * `opts.read`: what an earlier reading of this file in this discovery gave (not read again).
   */
  read(file: string, format: FileFormat, scope: Scope, note?: string, opts?: { read?: ReadResult }): Record<string, unknown> | undefined;
  /** The entries of a folder (recorded as looked at); [] when absent. */
  list(dir: string, scope: Scope): string[];
  /** Record a path that exists but is deliberately not read, and why. */
  ignore(file: string, scope: Scope, why: string): void;
  problem(file: string, at: PathSegment[], message: string): void;
  /** Read a file without recording it (a side look, e.g. at a settings file). */
  peek(file: string, format?: FileFormat): Record<string, unknown> | undefined;
  exists(p: string): boolean;
  isDir(p: string): boolean;
  /** cwd, then each parent up to the filesystem root. */
  parents(): string[];
  /** The platform's user config folder (XDG_CONFIG_HOME, ~/Library/Application Support, %APPDATA%). */
  appConfigDir(): string;
}

export interface Candidate {
  name: string;
  file: string;
  at: PathSegment[];
  scope: Scope;
  /** The entry as written: the input of the approval digest. */
  raw: Record<string, unknown>;
  /** Normalised definition; absent when the entry is turned off or broken. */
  def?: Definition;
  /** Why the client would not start it (disabled, rejected, built into the client...). */
  off?: string;
  /** The client's own record approving a project-scope definition. */
  approval?: string;
  syntax: VarSyntax;
  /** Files whose definitions of this name the client merged into this one (opencode, Zed). */
  mergedFrom?: string[];
}

export interface ClientReader {
  id: string;
  read(ctx: ReadContext): Candidate[];
}
