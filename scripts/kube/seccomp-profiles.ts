/**
 * Writes the sandbox's seccomp profiles (src/sandbox/seccomp.ts) where a kubelet looks for Localhost
 * profiles: `bun scripts/kube/seccomp-profiles.ts <kubelet root>/seccomp/mcp-code-exec` writes
 * seccomp.json and seccomp-gvisor.json there, the names the kubernetes engine's pods ask for
 * (MCP_BRIDGE_KUBE_SECCOMP). Every node that runs sandboxes needs them.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { seccompProfilePath } from "../../src/sandbox/seccomp.ts";

const target = process.argv[2];
if (!target) {
  console.error("usage: bun scripts/kube/seccomp-profiles.ts <folder>");
  process.exit(2);
}
mkdirSync(target, { recursive: true });
const scratch = mkdtempSync(join(tmpdir(), "mcx-seccomp-"));
try {
  copyFileSync(seccompProfilePath(scratch), join(target, "seccomp.json"));
  copyFileSync(seccompProfilePath(scratch, { gvisor: true }), join(target, "seccomp-gvisor.json"));
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
