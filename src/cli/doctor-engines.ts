/**
 * The engines part of `mcp-code-exec doctor`: the selection order, what each engine said, and which
 * one the bridge would use. It mirrors selectEngine: an engine that is "not here" is skipped (an info
 * line with the reason, not a failure, when another engine works); an engine that is installed but
 * failing stops auto-selection, so it fails the check when it comes before the first working one.
 */
import { BridgeError, EngineUnavailableError, renderError } from "../errors.ts";
import { AUTO_ORDER, loadAdapter, type Selected } from "../engines/registry.ts";
import type { AdapterOptions, EngineInfo } from "../../adapters/types.ts";

/** One line of the doctor report. */
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
  /** An engine selection passed over because it is not here; informational, never a failure. */
  skipped?: boolean;
  /** Something that would work better here (a faster engine or runtime), shown under a passing check. */
  tip?: string;
}

/** What the user configured; the adapter file wins over the engine name. */
export interface EngineChoice {
  engine?: string;
  adapter?: string;
}

/** Probe the engines in selection order; `chosen` is what the bridge would use. */
export async function engineChecks(
  choice: EngineChoice,
  options: AdapterOptions,
): Promise<{ checks: Check[]; chosen?: Selected; available: Selected[] }> {
  const pinned = choice.adapter ?? choice.engine;
  const order = pinned ? [pinned] : AUTO_ORDER;
  const how = choice.adapter ? "MCP_BRIDGE_ADAPTER" : choice.engine ? "MCP_BRIDGE_RUNTIME" : "auto: the first that answers is used";
  const checks: Check[] = [{ name: "selection order", ok: true, detail: `${order.join(", ")} (${how})` }];
  let chosen: Selected | undefined;
  const available: Selected[] = [];
  let blockedBy: string | undefined;
  for (const name of order) {
    let label = name;
    try {
      const adapter = await loadAdapter(name, options);
      label = adapter.name;
      const info = await adapter.probe();
      available.push({ adapter, info });
      if (!chosen && !blockedBy) {
        chosen = { adapter, info };
        checks.push({ name: `engine ${label}`, ok: true, detail: describe(info) });
      } else {
        checks.push({
          name: `engine ${label}`,
          ok: true,
          detail: `${describe(info)}; available, not used: ${chosen?.adapter.name ?? blockedBy} comes first`,
        });
      }
    } catch (err) {
      const fix = err instanceof BridgeError ? err.hint : undefined;
      if (err instanceof EngineUnavailableError && !pinned) {
        checks.push({ name: `engine ${label}`, ok: true, skipped: true, detail: `not here: ${err.message}`, fix });
      } else if (pinned || (!chosen && !blockedBy)) {
        if (!pinned) blockedBy = label;
        checks.push({
          name: `engine ${label}`,
          ok: false,
          detail: renderError(err),
          fix: pinned
            ? fix
            : `${fix ? `${fix}; ` : ""}auto-selection stops at this error: fix it, or set MCP_BRIDGE_RUNTIME to another engine`,
        });
      } else {
        checks.push({
          name: `engine ${label}`,
          ok: true,
          skipped: true,
          detail: `not reached (${chosen?.adapter.name ?? blockedBy} comes first), and failing: ${renderError(err)}`,
          fix,
        });
      }
    }
  }
  if (!chosen) {
    checks.push(
      blockedBy
        ? { name: "selection", ok: false, detail: `auto-selection stops at ${blockedBy}, which is installed but failing (see above)` }
        : {
            name: "selection",
            ok: false,
            detail: "no engine available",
            fix: pinned
              ? "see the engine's fix above"
              : "install podman (Debian/Ubuntu: apt-get install podman runc; macOS: brew install podman, then podman machine init --now) or Docker (docker.io, Docker Desktop, OrbStack, Colima)",
          },
    );
    return { checks, available };
  }
  checks.push({
    name: "selection",
    ok: true,
    detail: `would use ${chosen.adapter.name}${pinned ? ` (${how})` : ` (auto order: ${AUTO_ORDER.join(", ")})`}`,
  });
  if (chosen.adapter.ensureRunning) {
    try {
      await chosen.adapter.ensureRunning();
      checks.push({ name: `${chosen.adapter.name} running`, ok: true, detail: "the engine is up (started it if it was stopped)" });
    } catch (err) {
      checks.push({
        name: `${chosen.adapter.name} running`,
        ok: false,
        detail: renderError(err),
        fix: err instanceof BridgeError ? err.hint : undefined,
      });
      return { checks, available };
    }
  }
  return { checks, chosen, available };
}

function describe(info: EngineInfo): string {
  const d = Object.entries(info.details)
    .map(([k, v]) => `${k}=${v}`)
    .join(", ");
  return `${info.binary} ${info.version}${d ? ` (${d})` : ""}`;
}
