/** Build the binary once before the suites run: end-to-end tests talk to what users install. */
import { spawnSync } from "bun";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
if (!process.env.MCP_TEST_SKIP_BUILD) {
  const r = spawnSync(["bun", "scripts/build.ts"], { cwd: root, stdout: "inherit", stderr: "inherit" });
  if (r.exitCode !== 0) throw new Error("building dist/mcp-code-exec failed");
}
