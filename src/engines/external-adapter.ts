/**
 * Adapters from outside the binary (MCP_BRIDGE_ADAPTER=/path/to/adapter.ts or .js). The module's
 * default export is an AdapterFactory or a ready RuntimeAdapter; it is checked at load, and every
 * problem names the file and the member. Bun (and so the compiled binary) imports .ts and .js from
 * an absolute path on disk at run time; that import is the one computed specifier this project has.
 */
import { existsSync } from "node:fs";
import { isAbsolute } from "node:path";
import { BridgeError, EngineUnavailableError } from "../errors.ts";
import { hardeningFlags, runArgv } from "../../adapters/oci-flags.ts";
import type { AdapterKit, AdapterOptions, EngineInfo, RuntimeAdapter } from "../../adapters/types.ts";

/** What the bridge lends adapters (see AdapterKit). */
export const ADAPTER_KIT: AdapterKit = { hardeningFlags, runArgv, EngineUnavailableError, BridgeError };

/** Module files an external adapter may be. */
export const ADAPTER_FILE = /\.(ts|mts|js|mjs|cjs)$/;

const REQUIRED_METHODS = ["probe", "runArgv", "imageExists", "remove", "removeSync", "list", "imageHint"] as const;
const OPTIONAL_METHODS = ["ensureRunning"] as const;
const HINT = "see docs/engines.md for the interface (examples/adapters/docker-wrapper.ts is a working one)";

/** Whether `choice` names an adapter file rather than a built-in engine. */
export function isAdapterPath(choice: string): boolean {
  return isAbsolute(choice) && ADAPTER_FILE.test(choice);
}

/** Import `path`, build the adapter with `options` (plus the kit) and check it; throws a BridgeError naming what is wrong. */
export async function loadExternalAdapter(path: string, options: AdapterOptions): Promise<RuntimeAdapter> {
  const fail = (what: string, cause?: unknown) =>
    new BridgeError("CONFIG", `MCP_BRIDGE_ADAPTER=${path}: ${what}`, { source: "adapter", hint: HINT, cause });
  if (!existsSync(path)) throw fail("no such file");
  let mod: { default?: unknown };
  try {
    mod = (await import(path)) as { default?: unknown };
  } catch (err) {
    throw fail(`the module failed to load: ${err instanceof Error ? err.message : String(err)}`, err);
  }
  const exported = mod.default;
  if (exported === undefined || exported === null) {
    throw fail("the module has no default export; export default a factory `(options) => adapter` or an adapter object");
  }
  let adapter: unknown = exported;
  if (typeof exported === "function") {
    try {
      adapter = (exported as (o: AdapterOptions) => unknown)({ ...options, kit: ADAPTER_KIT });
    } catch (err) {
      throw fail(`the default export (a factory) threw: ${err instanceof Error ? err.message : String(err)}`, err);
    }
    if (adapter instanceof Promise)
      throw fail("the factory returned a Promise; it must return the adapter itself (probe() is where async work goes)");
  }
  const problems = adapterProblems(adapter);
  if (problems.length > 0)
    throw fail(`${typeof exported === "function" ? "the factory returned an adapter that" : "the default export"} ${problems.join("; ")}`);
  return checkedProbe(adapter as RuntimeAdapter, fail);
}

/** What is missing or wrong in `value` as a RuntimeAdapter; empty when it is one. */
export function adapterProblems(value: unknown): string[] {
  if (typeof value !== "object" || value === null) return [`is not an object (got ${value === null ? "null" : typeof value})`];
  const a = value as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof a.name !== "string" || a.name.trim() === "") problems.push("has no `name` string");
  const missing = REQUIRED_METHODS.filter((m) => typeof a[m] !== "function");
  if (missing.length > 0) problems.push(`is missing ${missing.map((m) => `${m}()`).join(", ")}`);
  for (const m of OPTIONAL_METHODS) if (a[m] !== undefined && typeof a[m] !== "function") problems.push(`has ${m} that is not a function`);
  return problems;
}

/** A delegate that checks what the user's adapter returns where the bridge relies on its shape. */
function checkedProbe(a: RuntimeAdapter, fail: (what: string) => BridgeError): RuntimeAdapter {
  return {
    name: a.name,
    async probe(): Promise<EngineInfo> {
      const info = (await a.probe()) as Partial<EngineInfo> | undefined;
      if (!info || typeof info.version !== "string" || typeof info.binary !== "string") {
        throw fail("probe() must resolve to { engine, binary, version, details }");
      }
      info.engine ??= a.name;
      info.details ??= {};
      return info as EngineInfo;
    },
    async runArgv(spec) {
      const argv = await a.runArgv(spec);
      if (!Array.isArray(argv) || argv.length === 0 || !argv.every((x) => typeof x === "string")) {
        throw fail("runArgv() must resolve to a non-empty array of strings (the binary first)");
      }
      return argv;
    },
    imageExists: (image) => a.imageExists(image),
    remove: (name) => a.remove(name),
    removeSync: (name) => a.removeSync(name),
    list: (label) => a.list(label),
    imageHint: (image) => a.imageHint(image),
    ...(a.ensureRunning ? { ensureRunning: () => a.ensureRunning!() } : {}),
  };
}
