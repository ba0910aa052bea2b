/**
 * A guard that outlives the bridge by a moment, whatever ends it (SIGKILL included): a tiny detached
 * shell whose stdin is a pipe from the bridge. When that pipe hangs up, the bridge is gone and the
 * guard removes what the bridge left: its containers (by owner label, through the engine CLI) and the
 * upstream MCP servers it started (listed in a file the bridge keeps current; each is killed only when
 * /proc still shows the same process: same start time). It needs nothing from the sandbox, so code in
 * the sandbox cannot stop it; and it costs one `sh` while the bridge lives.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/**
 * $1: the owner label; $2: the upstreams file (`PID STARTTIME` lines; "-" for none); "$@" after them:
 * the engine CLI (none when no engine was used). Waits for EOF on stdin, then cleans up.
 */
const SCRIPT = `
label=$1; ups=$2; shift 2
cat >/dev/null
if [ -r "$ups" ]; then
  while IFS=' ' read -r pid st; do
    [ -r /proc/$pid/stat ] || continue
    s=$(cat /proc/$pid/stat 2>/dev/null) || continue
    s=\${s##*) }
    f=$(printf '%s\\n' "$s" | cut -d' ' -f20)
    [ "$f" = "$st" ] && kill -KILL "$pid" 2>/dev/null
  done < "$ups"
  rm -f "$ups"
fi
[ $# -gt 0 ] || exit 0
ids=$("$@" ps -aq --filter "label=$label" 2>/dev/null)
[ -n "$ids" ] && "$@" rm -f $ids >/dev/null 2>&1
exit 0
`;

/** Start time of a process in clock ticks since boot (/proc/PID/stat field 22); undefined off Linux. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

/**
 * Start the guard. At the bridge's death it kills the processes listed in `upstreamsFile` (see
 * UpstreamsFile) and, when `engineArgv` (the engine CLI and its global flags) is given, removes every
 * container labelled `label`. False where no POSIX shell could be started.
 */
export function startWatchdog(label: string, engineArgv: string[], env: Record<string, string>, upstreamsFile = "-"): boolean {
  let child: ChildProcess;
  try {
    child = spawn("/bin/sh", ["-c", SCRIPT, "mcp-code-exec-watchdog", label, upstreamsFile, ...engineArgv], {
      detached: true, // its own process group: a signal to the bridge's group does not reach it
      stdio: ["pipe", "ignore", "ignore"],
      env,
    });
  } catch {
    return false;
  }
  child.on("error", () => {});
  child.stdin?.on("error", () => {});
  child.unref();
  (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return true;
}

/** The upstream processes alive now, written synchronously so a guard always reads the current list. */
export class UpstreamsFile {
  #live = new Map<number, string>();
  constructor(readonly path: string) {}

  add(pid: number): void {
    const st = processStartTime(pid);
    if (st === undefined) return;
    this.#live.set(pid, st);
    this.#write();
  }

  remove(pid: number): void {
    if (this.#live.delete(pid)) this.#write();
  }

  #write(): void {
    try {
      mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
      writeFileSync(this.path, [...this.#live].map(([pid, st]) => `${pid} ${st}\n`).join(""), { mode: 0o600 });
    } catch {
      // best effort: the bridge's own exit handlers still kill them
    }
  }

  /** The bridge ended cleanly: nothing for a guard to do. */
  discard(): void {
    rmSync(this.path, { force: true });
  }
}
