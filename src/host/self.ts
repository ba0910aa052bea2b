/**
 * How an MCP client starts this bridge again: the compiled binary itself, or the runtime running us
 * (bun, deno) plus the entry script. Used by `config snippet`.
 */
import { realpathSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { JS_HOST, which } from "./process.ts";

/** argv[0] and the rest, every path absolute. */
export interface Launch {
  command: string;
  args: string[];
}

/** Bun names the entry of a compiled binary /$bunfs/root/... (B:/~BUN/root/... on Windows). */
export function isCompiledBinary(argv1 = process.argv[1] ?? ""): boolean {
  return argv1.startsWith("/$bunfs/") || /^[A-Z]:[\\/]~BUN[\\/]/.test(argv1);
}

/**
 * The running bridge as a command line. A compiled binary that is also on PATH under another name (a
 * Homebrew or ~/.local/bin symlink) is given by that name, which survives upgrades.
 */
export function selfLaunch(env: Record<string, string | undefined> = process.env): Launch {
  if (isCompiledBinary()) {
    const exe = process.execPath;
    const onPath = which("mcp-code-exec", env.PATH ?? "");
    return { command: onPath && sameFile(onPath, exe) ? onPath : exe, args: [] };
  }
  const script = resolve(process.argv[1] ?? "src/main.ts");
  const command = isAbsolute(process.execPath) ? process.execPath : (which(process.execPath, env.PATH ?? "") ?? process.execPath);
  return JS_HOST === "deno" ? { command, args: ["run", "-A", script] } : { command, args: [script] };
}

/**
 * The npm form, `npx -y mcp-code-exec@<version>`: pinned, so the client runs the version the user chose
 * (and an unpinned spec would keep whatever npx cached first anyway).
 */
export function npxLaunch(version: string): Launch {
  return { command: "npx", args: ["-y", `mcp-code-exec@${version}`] };
}

function sameFile(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}
