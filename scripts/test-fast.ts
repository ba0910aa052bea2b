/**
 * `bun run test:fast`: the unit and core suites, with no engine, no image and no compiled binary. The
 * engine CLIs are made unavailable for the run (as root: a private mount namespace puts /dev/null over
 * them, so not even the bridge's search of install folders finds one); the binary may not be built.
 * Extra arguments go to `bun test`.
 */
import { join } from "node:path";
import { CAN_HIDE_ENGINES, withoutEngines } from "../test/support/hide-engines.ts";

const SUITES = ["test/unit", "test/core", "test/ci"];
const testArgv = ["bun", "test", "--timeout", "60000", ...SUITES, ...process.argv.slice(2)];
if (!CAN_HIDE_ENGINES) console.error("[test:fast] not root: engines stay visible; the fast suites do not use them");
const proc = Bun.spawn(CAN_HIDE_ENGINES ? withoutEngines(testArgv) : testArgv, {
  cwd: join(import.meta.dir, ".."),
  env: { ...process.env, MCP_TEST_NO_BINARY: "1", MCP_TEST_ENGINES: "" },
  stdio: ["inherit", "inherit", "inherit"],
});
process.exit(await proc.exited);
