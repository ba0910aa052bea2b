/**
 * A folder of this process's own in the temporary folder, for what the state dir should hold but cannot
 * (a read-only home, a full disk): the sandbox's seccomp profile, the list of upstream servers the
 * watchdog kills if the bridge is killed. Made fresh with mkdtemp (0700, so nobody else can have put a
 * file there), once per process, and removed when the bridge exits; one left by a killed bridge is
 * swept by the next bridge's reaper (its name carries the pid, as the socket channel's folders do).
 */
import { accessSync, constants, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const PRIVATE_FOLDER_PREFIX = "mcp-code-exec-own-";

let folder: string | undefined;

/** This process's folder (made on the first call; throws when the temporary folder cannot take it). */
export function privateFolder(): string {
  if (folder) return folder;
  const dir = mkdtempSync(join(tmpdir(), `${PRIVATE_FOLDER_PREFIX}${process.pid}-`));
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  folder = dir;
  return dir;
}

/**
 * Why a file cannot be written in `dir` (made if missing; ENOSPC, EROFS, EACCES...), undefined when it
 * can: tried with a real write of a few KB, as a full disk fails only then.
 */
export function writeProblem(dir: string): string | undefined {
  const probe = join(dir, `.probe-${process.pid}`);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(probe, "x".repeat(4096));
    return undefined;
  } catch (err) {
    return errorCode(err);
  } finally {
    removeQuietly(probe);
  }
}

/** rmSync with force, which still throws where the path's parent is not a folder (EFAULT in Bun 1.4, ENOTDIR elsewhere). */
export function removeQuietly(path: string): void {
  try {
    rmSync(path, { force: true });
  } catch {
    // nothing there to remove
  }
}

/** An errno code (ENOSPC, EROFS, ...) or the message of an error. */
export function errorCode(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  return e?.code ?? (e instanceof Error ? e.message : String(err));
}

/**
 * TMPDIR, when it is set but is no folder this user can write (a stale per-session folder, a drive
 * not mounted): why, else undefined. Engines fail on it too (podman: "open $TMPDIR/...: no such file"),
 * and so did every start of ours, reported as the engine's binary missing (a spawn's working folder).
 */
export function unusableTmpdir(env: Record<string, string | undefined>): string | undefined {
  const dir = env.TMPDIR;
  if (!dir) return undefined;
  try {
    if (!statSync(dir).isDirectory()) return "ENOTDIR";
    accessSync(dir, constants.W_OK | constants.X_OK);
    return undefined;
  } catch (err) {
    return errorCode(err);
  }
}
