/**
 * Is the sandbox able to start? Checked once at startup, before the MCP handshake is answered, so a
 * missing image or engine is logged with its fix and shows in the server instructions instead of
 * surfacing only at the first call. Only definite answers count: an engine that cannot be asked
 * (a stopped VM, a slow daemon) leaves the question open and the first call finds out.
 */
import type { Config } from "../config/env.ts";
import { BridgeError, renderError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { Selected } from "../runtime/registry.ts";

export interface Readiness {
  /** What stops run_python from working, with its fix; undefined when ready or unknown. */
  problem?: string;
}

export async function checkReadiness(deps: { config: Config; engine: () => Promise<Selected>; log: Logger }): Promise<Readiness> {
  const { config, log } = deps;
  let selected: Selected;
  try {
    selected = await deps.engine();
  } catch (err) {
    if (!(err instanceof BridgeError) || (err.code !== "ENGINE_UNAVAILABLE" && err.code !== "CONFIG")) return {};
    const problem = `no container engine: ${renderError(err)}`;
    log.warn("run_python cannot work until this is fixed", { problem });
    return { problem };
  }
  const { adapter } = selected;
  if (adapter.ensureRunning) return {}; // asking would start a VM: leave it to the first call
  const present = await adapter.imageExists(config.image).catch(() => undefined);
  if (present !== false) return {};
  const problem = `the sandbox image ${config.image} is not in ${adapter.name}: ${adapter.imageHint(config.image)}, or set MCP_BRIDGE_IMAGE to an image that is`;
  log.warn("run_python cannot work until this is fixed", { problem });
  return { problem };
}

/** Waits for the check at most `ms`; a slower engine leaves the answer open rather than delaying the handshake. */
export function withinMs(check: Promise<Readiness>, ms: number): Promise<Readiness> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({}), ms);
    (timer as { unref?: () => void }).unref?.();
    check.then(
      (r) => {
        clearTimeout(timer);
        resolve(r);
      },
      () => {
        clearTimeout(timer);
        resolve({});
      },
    );
  });
}
