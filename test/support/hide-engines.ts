/**
 * Run a command as if no container engine were installed: in a private mount namespace, /dev/null is
 * bound over every engine CLI in the folders the bridge searches (PATH alone would not hide them: the
 * bridge also looks where installers put engines). Needs root and unshare.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";

const ENGINE_CLIS = ["podman", "docker", "nerdctl", "dockerd", "runc", "runsc", "crun", "conmon"];
const DIRS = ["/usr/local/bin", "/usr/bin", "/bin", "/usr/local/sbin", "/usr/sbin", "/sbin", "/opt/podman/bin", "/snap/bin"];

const UNSHARE = Bun.which("unshare", { PATH: "/usr/bin:/bin:/usr/sbin:/sbin" });
const MOUNT = Bun.which("mount", { PATH: "/usr/bin:/bin:/usr/sbin:/sbin" });

/** Absolute paths throughout: the wrapped command may run with an empty or odd PATH. */
export const CAN_HIDE_ENGINES = process.getuid?.() === 0 && UNSHARE !== null && MOUNT !== null;

/** `argv` wrapped so that it runs with the engines hidden (`only` limits which CLIs are hidden). */
export function withoutEngines(argv: string[], only: string[] = ENGINE_CLIS): string[] {
  const hide = DIRS.flatMap((d) => only.map((b) => join(d, b))).filter((p) => existsSync(p));
  const script = `n=$1; shift; while [ "$n" -gt 0 ]; do ${MOUNT} --bind /dev/null "$1" || exit 1; shift; n=$((n - 1)); done; exec "$@"`;
  return [UNSHARE!, "-m", "--propagation", "private", "/bin/sh", "-c", script, "sh", String(hide.length), ...hide, ...argv];
}
