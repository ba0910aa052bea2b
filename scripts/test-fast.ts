/**
 * `bun run test:fast`: the unit and core suites, with no engine, no image and no compiled binary. The
 * engine CLIs are made unavailable for the run (as root: a private mount namespace puts /dev/null over
 * them, so not even the bridge's search of install folders finds one); the binary may not be built.
 * Extra arguments go to `bun test`.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
const SUITES = ["test/unit", "test/core", "test/ci"];
const ENGINE_CLIS = ["podman", "docker", "nerdctl", "dockerd", "runc", "runsc", "crun", "conmon"];
const DIRS = ["/usr/local/bin", "/usr/bin", "/bin", "/usr/local/sbin", "/usr/sbin", "/sbin", "/opt/podman/bin", "/snap/bin"];

const env = { ...process.env, MCP_TEST_NO_BINARY: "1", MCP_TEST_ENGINES: "" };
const testArgv = ["bun", "test", "--timeout", "60000", ...SUITES, ...process.argv.slice(2)];
let argv = testArgv;
const hide = DIRS.flatMap((d) => ENGINE_CLIS.map((b) => join(d, b))).filter((p) => existsSync(p));
if (process.getuid?.() === 0 && Bun.which("unshare")) {
  const script = `for f in "$@"; do case "$f" in --) break;; esac; mount --bind /dev/null "$f" || exit 1; done; shift $(( $# - ${testArgv.length} )); exec "$@"`;
  argv = ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", ...hide, "--", ...testArgv];
} else if (hide.length) {
  console.error(`[test:fast] not root: engines stay visible (${hide.join(", ")}); the fast suites do not use them`);
}
const proc = Bun.spawn(argv, { cwd: ROOT, env, stdio: ["inherit", "inherit", "inherit"] });
process.exit(await proc.exited);
