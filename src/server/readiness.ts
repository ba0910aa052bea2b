/**
 * Is the sandbox able to start? Checked at startup, so a missing image or engine is logged with its fix
 * and shows in the server instructions instead of surfacing only at the first call. Only definite
 * answers count: an engine that cannot be asked (a stopped VM, a slow daemon) leaves the question open
 * and the first call finds out.
 *
 * The handshake must stay fast: Claude Code's `-p` mode sends its first request without the tools of a
 * server that took ~0.6 s or more to answer `initialize` (measured with 2.1.330), and probing podman
 * alone takes ~0.5 s. So the handshake uses the last check's answer and waits briefly only when there
 * is none; the check goes on in the background (logging what it finds, warming the engine choice, and
 * leaving its answer for the next start).
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as z from "zod";
import type { Config } from "../config/env.ts";
import { BridgeError, renderError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { Selected } from "../engines/registry.ts";
import { fallbackImage, fallbackNote } from "../session/image-choice.ts";
import { canPull } from "../session/image-pull.ts";

export interface Readiness {
  /** What stops run_python from working, with its fix; undefined when ready or unknown. */
  problem?: string;
  /** The engine answered and the image is there. */
  ready?: boolean;
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
  if (present === undefined) return {};
  if (present) return { ready: true };
  const fallback = await fallbackImage(config, adapter);
  if (fallback) {
    log.info("sandbox image", { note: fallbackNote(config, adapter, fallback) });
    return { ready: true };
  }
  if (canPull(config, adapter)) {
    // Not a problem yet: the first start (the prewarm, else the first call) pulls it.
    log.info("sandbox image not here yet: the first sandbox start pulls it", { engine: adapter.name, image: config.image });
    return {};
  }
  const problem = `the sandbox image ${config.image} is not in ${adapter.name}: ${adapter.imageHint(config.image)}, or set MCP_BRIDGE_IMAGE to an image that is`;
  log.warn("run_python cannot work until this is fixed", { problem });
  return { problem };
}

/**
 * The startup check as the handshake sees it: what the last check found for this engine setting and
 * image, without waiting (this start's check runs in the background and leaves its answer for the
 * next); on a first start, the check if it answers within `waitMs`.
 */
export function startupReadiness(
  deps: {
    config: Config;
    engine: () => Promise<Selected>;
    log: Logger;
    /** Told when this start's check has finished and left its answer for the next start. */
    onChecked?: (r: Readiness) => void;
    /**
     * When an earlier check answered, this one (for the next start) begins this much later: asking the
     * engine costs a process start (~30 ms of CPU for podman) that a first call's sandbox and servers,
     * starting now, would wait behind on a machine with few cores.
     */
    laterMs?: number;
  },
  waitMs: number,
): Promise<Readiness> {
  const { file, key } = where(deps.config);
  const last = lastReadiness(deps.config);
  const run = () =>
    checkReadiness(deps).then((r) => {
      if (r.ready || r.problem) remember(file, { key, problem: r.problem }); // only definite answers
      deps.onChecked?.(r);
      return r;
    });
  if (!last) return withinMs<Readiness>(run(), waitMs, {});
  if (deps.laterMs) {
    const timer = setTimeout(() => void run().catch(() => {}), deps.laterMs);
    (timer as { unref?: () => void }).unref?.();
  } else void run().catch(() => {});
  return Promise.resolve(last);
}

/** What the last check found for this engine setting and image, when it found something definite. */
export function lastReadiness(config: Config): Readiness | undefined {
  const { file, key } = where(config);
  const last = recall(file, key);
  return last && (last.problem ? last : { ready: true });
}

function where(config: Config): { file: string; key: string } {
  return { file: join(config.stateDir, "readiness.json"), key: `${config.adapter ?? config.engine ?? "auto"} ${config.image}` };
}

const LastCheckSchema = z.object({ key: z.string(), problem: z.string().max(4000).optional() });

function recall(file: string, key: string): Readiness | undefined {
  try {
    const last = LastCheckSchema.parse(JSON.parse(readFileSync(file, "utf8")));
    return last.key === key ? { problem: last.problem } : undefined;
  } catch {
    return undefined; // no earlier check, or a file we did not write
  }
}

function remember(file: string, value: z.infer<typeof LastCheckSchema>): void {
  try {
    mkdirSync(join(file, ".."), { recursive: true });
    writeFileSync(`${file}.${process.pid}`, JSON.stringify(value));
    renameSync(`${file}.${process.pid}`, file);
  } catch {
    // a read-only state dir only costs the wait next time
  }
}

/**
 * What `p` settles to, waited for at most `ms`: `fallback` after that, or when it fails. The handshake
 * waits so for the check (a slower engine gets no answer rather than delaying it); serve.ts so for the
 * answers to what was asked before stdin ended.
 */
export function withinMs<T>(p: Promise<T>, ms: number, fallback: T): Promise<T> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(fallback), ms);
    (timer as { unref?: () => void }).unref?.();
    p.then(
      (r) => {
        clearTimeout(timer);
        resolve(r);
      },
      () => {
        clearTimeout(timer);
        resolve(fallback);
      },
    );
  });
}
