/**
 * The compiled binary end-to-end suites talk to (what users install). Importing this module builds it,
 * once per test run: suites that never import it (unit, core) never pay for the build.
 * MCP_TEST_SKIP_BUILD=1 uses dist/mcp-code-exec as it is.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./env.ts";

export const BINARY = join(ROOT, "dist", "mcp-code-exec");

if (process.env.MCP_TEST_NO_BINARY) {
  throw new Error(
    "this suite runs under `bun run test:fast`, which has no compiled binary: move the test that needs it to an end-to-end suite",
  );
} else if (!process.env.MCP_TEST_SKIP_BUILD) {
  const r = Bun.spawnSync(["bun", "scripts/build.ts"], { cwd: ROOT, stdout: "inherit", stderr: "inherit" });
  if (r.exitCode !== 0) throw new Error("building dist/mcp-code-exec failed");
} else if (!existsSync(BINARY)) {
  throw new Error(`MCP_TEST_SKIP_BUILD is set but ${BINARY} does not exist: run \`bun run build\``);
}
