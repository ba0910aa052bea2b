/** MCP_BRIDGE_ADAPTER: loading a user's adapter module, and the errors that say what is wrong with it. */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config/env.ts";
import { BridgeError, EngineUnavailableError } from "../../src/errors.ts";
import { adapterProblems, loadExternalAdapter } from "../../src/engines/external-adapter.ts";
import { selectEngine } from "../../src/engines/registry.ts";

const DIR = mkdtempSync(join(tmpdir(), "external-adapters-"));
let n = 0;
/** Write a module and return its absolute path (a new name each time: imports are cached). */
function moduleFile(source: string, ext = "ts"): string {
  const p = join(DIR, `adapter-${n++}.${ext}`);
  writeFileSync(p, source);
  return p;
}

const COMPLETE = `{
  name: "mine",
  probe: async () => ({ engine: "mine", binary: "/bin/true", version: "1.0", details: {} }),
  runArgv: async (spec) => ["/bin/true", spec.image],
  imageExists: async () => true,
  remove: async () => {},
  removeSync: () => {},
  list: async () => [],
  imageHint: () => "pull it",
}`;

async function loadError(path: string): Promise<BridgeError> {
  const err = await loadExternalAdapter(path, { env: {} }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(BridgeError);
  return err as BridgeError;
}

describe("external adapters (MCP_BRIDGE_ADAPTER)", () => {
  test("a missing file is refused at configuration time and at load, naming the path", async () => {
    const missing = join(DIR, "nope.ts");
    expect(() => loadConfig({ MCP_BRIDGE_ADAPTER: missing }, "/root")).toThrow(`MCP_BRIDGE_ADAPTER="${missing}": is not an existing file`);
    expect(() => loadConfig({ MCP_BRIDGE_ADAPTER: "adapters/x.ts" }, "/root")).toThrow("must be an absolute path");
    expect(() => loadConfig({ MCP_BRIDGE_ADAPTER: moduleFile("", "txt") }, "/root")).toThrow("must be a .ts or .js module");
    expect((await loadError(missing)).render()).toContain(`MCP_BRIDGE_ADAPTER=${missing}: no such file`);
  });

  test("a module without a default export", async () => {
    const p = moduleFile(`export const adapter = ${COMPLETE};`);
    const err = await loadError(p);
    expect(err.render()).toContain(`MCP_BRIDGE_ADAPTER=${p}: the module has no default export`);
    expect(err.hint).toContain("docs/engines.md");
  });

  test("a factory returning an object without runArgv names every missing member", async () => {
    const p = moduleFile(`export default () => ({ name: "half", probe: async () => ({}), imageExists: async () => true });`);
    expect((await loadError(p)).message).toBe(
      `MCP_BRIDGE_ADAPTER=${p}: the factory returned an adapter that is missing runArgv(), remove(), removeSync(), list(), imageHint()`,
    );
  });

  test("a module that fails to load, a factory that throws, and a nameless object", async () => {
    expect((await loadError(moduleFile(`throw new Error("boom at import");`))).message).toContain(
      "the module failed to load: boom at import",
    );
    expect((await loadError(moduleFile(`export default () => { throw new Error("no config"); };`))).message).toContain(
      "the default export (a factory) threw: no config",
    );
    expect((await loadError(moduleFile(`export default async () => (${COMPLETE});`))).message).toContain("returned a Promise");
    expect((await loadError(moduleFile(`const a = ${COMPLETE}; export default { ...a, name: "" };`))).message).toContain(
      "the default export has no `name` string",
    );
    const fn = () => {};
    const methods = { probe: fn, runArgv: fn, imageExists: fn, remove: fn, removeSync: fn, list: fn, imageHint: fn };
    expect(adapterProblems({ name: "x", ...methods })).toEqual([]);
    expect(adapterProblems({ name: "x", ...methods, ensureRunning: "yes" })).toEqual(["has ensureRunning that is not a function"]);
    expect(adapterProblems(null)).toEqual(["is not an object (got null)"]);
  });

  test("a .js module exporting an adapter object works; a factory gets env and the kit", async () => {
    const obj = await loadExternalAdapter(moduleFile(`export default ${COMPLETE};`, "js"), { env: {} });
    expect(obj.name).toBe("mine");
    expect(await obj.runArgv({ image: "img" } as never)).toEqual(["/bin/true", "img"]);
    const p = moduleFile(
      `export default (o) => ({ ...${COMPLETE}, name: o.env.WHO + ":" + typeof o.kit.hardeningFlags + ":" + (o.kit.EngineUnavailableError.name) });`,
    );
    expect((await loadExternalAdapter(p, { env: { WHO: "me" } })).name).toBe("me:function:EngineUnavailableError");
  });

  test("what the adapter returns is checked where the bridge relies on it", async () => {
    const p = moduleFile(`export default { ...${COMPLETE}, probe: async () => ({ version: 1 }), runArgv: async () => "docker run" };`);
    const a = await loadExternalAdapter(p, { env: {} });
    expect(((await a.probe().catch((e: unknown) => e)) as Error).message).toContain(
      "probe() must resolve to { engine, binary, version, details }",
    );
    expect(((await a.runArgv({} as never).catch((e: unknown) => e)) as Error).message).toContain(
      "runArgv() must resolve to a non-empty array of strings",
    );
  });

  test("when set it is the configured engine: selected alone, and its 'not here' is not skipped", async () => {
    const ok = moduleFile(`export default ${COMPLETE};`);
    const { adapter, info } = await selectEngine(ok, { env: { PATH: "/nonexistent" } });
    expect(adapter.name).toBe("mine");
    expect(info).toMatchObject({ engine: "mine", version: "1.0" });
    const away = moduleFile(
      `export default (o) => ({ ...${COMPLETE}, probe: async () => { throw new o.kit.EngineUnavailableError("mine", "mine is away", "start it"); } });`,
    );
    const err = await selectEngine(away, { env: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineUnavailableError);
    expect((err as EngineUnavailableError).render()).toBe("[mcp-code-exec] [mine] mine is away: start it");
  });
});
