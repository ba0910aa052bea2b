/**
 * Is the sandbox able to start? Checked at startup, so a missing image or engine is logged with its fix
 * and shows in the server instructions instead of surfacing only at the first call. Only definite
 * answers count: an engine that cannot be asked (a stopped VM, a slow daemon) leaves the question open
 * and the first call finds out.
 *
 * The handshake waits for the check only when the last one did not find this engine setting and image
 * ready: probing podman costs ~0.5 s, which every client start would otherwise pay for a problem that is
 * rare once fixed. When the last check passed, it runs in the background (and warms the engine choice).
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
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

/** The check, awaited by the handshake (at most `waitMs`) unless the last one found everything ready. */
export function startupReadiness(deps: { config: Config; engine: () => Promise<Selected>; log: Logger }, waitMs: number): Promise<Readiness> {
  const { config } = deps;
  const file = join(config.stateDir, "readiness.json");
  const key = JSON.stringify({ engine: config.adapter ?? config.runtime ?? "auto", image: config.image });
  let known = false;
  try {
    known = readFileSync(file, "utf8") === key;
  } catch {
    // no earlier check
  }
  const check = checkReadiness(deps).then((r) => {
    remember(file, r.problem ? "" : key);
    return r;
  });
  return known ? Promise.resolve({}) : withinMs(check, waitMs);
}

function remember(file: string, key: string): void {
  try {
    mkdirSync(join(file, ".."), { recursive: true });
    writeFileSync(`${file}.${process.pid}`, key);
    renameSync(`${file}.${process.pid}`, file);
  } catch {
    // a read-only state dir only costs the wait next time
  }
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
