/**
 * Getting a sandbox image the engine lacks: the engine pulls it (MCP_BRIDGE_PULL=missing, the default)
 * once per engine and image, however many sessions and calls wait for it. Its progress goes to the log
 * and to whoever is waiting (each run_python call in wait passes it on as progress notifications), with
 * a heartbeat while the engine is quiet, so a client that resets its timeout on progress keeps waiting.
 * A pull outlives the call that started it: a client that gives up or cancels does not waste the
 * download, and the next call finds the image. A failed pull is remembered for a little while, so a
 * burst of calls on a machine with no registry does not ask the engine again and again.
 */
import type { RuntimeAdapter } from "../../adapters/types.ts";
import type { Config } from "../config/env.ts";
import { BridgeError } from "../errors.ts";
import type { Logger } from "../log.ts";

/** Told what a pull is doing, for as long as it lasts. */
export type PullListener = (message: string) => void;

const HEARTBEAT_MS = 5_000;
/** How long a failed pull answers for the engine (the user may have fixed the cause by then). */
const FAILURE_MEMORY_MS = 30_000;

interface Pull {
  done: Promise<void>;
  listeners: Set<PullListener>;
  last: string;
}

const pulls = new WeakMap<RuntimeAdapter, Map<string, Pull>>();
const failures = new WeakMap<RuntimeAdapter, Map<string, { at: number; error: BridgeError }>>();

/** Whether a missing `image` may be pulled on this engine. */
export function canPull(config: Config, adapter: RuntimeAdapter): boolean {
  return config.pull === "missing" && typeof adapter.pull === "function";
}

/**
 * Pull `image` into the engine, joining a pull already under way; `listener` hears its progress
 * until it ends. Rejects with IMAGE_PULL (the engine's reason) when the image cannot be had.
 */
export async function pullImage(
  adapter: RuntimeAdapter,
  image: string,
  deps: { config: Config; log: Logger; listener?: PullListener },
): Promise<void> {
  const failed = failures.get(adapter)?.get(image);
  const ago = failed ? Date.now() - failed.at : Number.POSITIVE_INFINITY;
  if (failed && ago < FAILURE_MEMORY_MS) {
    const again = Math.ceil((FAILURE_MEMORY_MS - ago) / 1000);
    throw new BridgeError("IMAGE_PULL", `${failed.error.message} (${Math.round(ago / 1000)} s ago; pulled again in ${again} s)`, {
      source: failed.error.source,
      cause: failed.error,
    });
  }
  let mine = pulls.get(adapter);
  if (!mine) pulls.set(adapter, (mine = new Map()));
  let pull = mine.get(image);
  if (!pull) {
    pull = start(adapter, image, deps);
    mine.set(image, pull);
    const forget = () => mine!.delete(image);
    pull.done.then(forget, forget);
  }
  const listener = deps.listener;
  if (listener) {
    pull.listeners.add(listener);
    if (pull.last) listener(pull.last);
  }
  try {
    await pull.done;
  } finally {
    if (listener) pull.listeners.delete(listener);
  }
}

function start(adapter: RuntimeAdapter, image: string, deps: { config: Config; log: Logger }): Pull {
  const t0 = performance.now();
  const seconds = () => Math.round((performance.now() - t0) / 1000);
  const pull: Pull = { done: Promise.resolve(), listeners: new Set(), last: "" };
  let latest = "";
  const tell = (what: string) => {
    pull.last = `pulling the sandbox image ${image} into ${adapter.name} (first use; ${seconds()} s): ${what}`;
    for (const l of pull.listeners) l(pull.last);
  };
  const heartbeat = setInterval(() => tell(latest || "waiting for the registry"), HEARTBEAT_MS);
  (heartbeat as { unref?: () => void }).unref?.();
  deps.log.info("sandbox image missing: pulling it", { engine: adapter.name, image });
  tell("starting");
  pull.done = adapter.pull!(
    image,
    (line) => {
      latest = line.length > 200 ? `${line.slice(0, 200)}…` : line;
      tell(latest);
    },
    { timeoutMs: deps.config.pullTimeoutSec * 1000 },
  ).then(
    () => {
      clearInterval(heartbeat);
      deps.log.info("sandbox image pulled", { engine: adapter.name, image, s: seconds() });
      tell("done; starting the sandbox");
    },
    (err: unknown) => {
      clearInterval(heartbeat);
      const why = err instanceof Error ? err.message : String(err);
      const error = err instanceof BridgeError ? err : new BridgeError("IMAGE_PULL", why, { source: adapter.name, cause: err });
      let mine = failures.get(adapter);
      if (!mine) failures.set(adapter, (mine = new Map()));
      mine.set(image, { at: Date.now(), error });
      deps.log.warn("sandbox image pull failed", { engine: adapter.name, image, error: error.message });
      throw error;
    },
  );
  return pull;
}

/** The error a call gets when its image is missing and the pull failed: what happened, and every way out. */
export function pullFailed(image: string, adapter: RuntimeAdapter, err: unknown): BridgeError {
  const why = err instanceof Error ? err.message.replace(/^`[^`]*` exited [^:]*: /, "") : String(err);
  return new BridgeError("IMAGE_MISSING", `image ${image} is not in ${adapter.name}, and pulling it failed: ${why}`, {
    source: adapter.name,
    hint: `${adapter.imageHint(image)}, or set MCP_BRIDGE_IMAGE to an image this engine has`,
    cause: err,
  });
}
