/**
 * Which image a sandbox starts from on an engine. MCP_BRIDGE_IMAGE when the user named another image than
 * the default, always. Otherwise the default image; but an engine that lacks the default and has the offline image
 * (`mcp-code-exec image build --offline`, what an air-gapped machine has) uses that one: a user who
 * built it should not also have to name it in every client's config. Learned per engine on the first
 * start that fails for a missing image (or by the startup check), never asked before a start.
 */
import type { RuntimeAdapter } from "../../adapters/types.ts";
import type { Config } from "../config/env.ts";

const chosen = new WeakMap<RuntimeAdapter, string>();

/** The image a start on this engine uses. */
export function imageFor(config: Config, adapter: RuntimeAdapter): string {
  return chosen.get(adapter) ?? config.image;
}

/**
 * Called once the image `missing` was found missing on this engine (by its start failing, or by asking):
 * when that is the default and the user did not choose another, the offline image if this engine has it
 * (remembered for the engine's later starts), else undefined. The offline image missing has no fallback.
 */
export async function fallbackImage(config: Config, adapter: RuntimeAdapter, missing = config.image): Promise<string | undefined> {
  const fallback = config.imageFallback;
  if (!fallback || missing !== config.image) return undefined;
  // Learned meanwhile (the startup check and a first start can both find it out).
  if (chosen.get(adapter) === fallback) return fallback;
  if (!(await adapter.imageExists(fallback).catch(() => false))) return undefined;
  chosen.set(adapter, fallback);
  return fallback;
}

/**
 * A fresh probe of the same engine gives a new adapter: it starts from the image the old one had
 * learned (else a start retried after a fresh probe would go back to the missing default image, and
 * whatever failed the start would be reported as that image missing).
 */
export function carryImageChoice(from: RuntimeAdapter, to: RuntimeAdapter): void {
  const image = chosen.get(from);
  if (image !== undefined && from.name === to.name && !chosen.has(to)) chosen.set(to, image);
}

/** The note for the log and for doctor when the fallback is in use. */
export function fallbackNote(config: Config, adapter: RuntimeAdapter, image: string): string {
  return `${config.image} is not in ${adapter.name}; using the offline image ${image} (set MCP_BRIDGE_IMAGE to choose another)`;
}
