/** Shared facts for the test suites: which engines and image they run against, where the binary is. */
import { join } from "node:path";
import { DEFAULT_IMAGE } from "../../src/config/env.ts";

export const ROOT = join(import.meta.dir, "..", "..");
/** The sandbox image (the batteries image scripts/setup.sh builds under the bridge's default name). */
export const IMAGE = process.env.MCP_TEST_IMAGE ?? DEFAULT_IMAGE;
/** Its slim variant (Python and its base only), built beside it. */
export const SLIM_IMAGE = process.env.MCP_TEST_SLIM_IMAGE ?? `${IMAGE}-slim`;
/** Real engines every engine-parametrised suite runs against. A missing one fails the suite. */
export const ENGINES = (process.env.MCP_TEST_ENGINES ?? "podman,docker")
  .split(",")
  .map((s) => s.trim())
  .filter(Boolean);

/** The environment a bridge under test gets: only what it needs, plus the test's own settings. */
export function bridgeEnv(extra: Record<string, string> = {}): Record<string, string> {
  const base: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: process.env.HOME ?? "/root",
    MCP_BRIDGE_IMAGE: IMAGE,
    MCP_BRIDGE_LOG_LEVEL: "WARNING",
    // Most suites assert on the structured payload, so they ask for it; the default (off) is tested
    // by test/e2e/protocol.test.ts and the real-client suite.
    MCP_BRIDGE_STRUCTURED_CONTENT: "1",
  };
  for (const k of ["XDG_RUNTIME_DIR", "DOCKER_HOST", "CONTAINER_HOST"]) {
    const v = process.env[k];
    if (v) base[k] = v;
  }
  return { ...base, ...extra };
}
