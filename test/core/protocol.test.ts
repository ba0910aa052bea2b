/**
 * The host ↔ sandbox contract has one source (src/sandbox/protocol.ts). These tests boot the real
 * entrypoint and read the Python side's own view of it: a kind, method, error or helper that exists
 * on one side only fails here.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ERROR_KINDS, HOST_FRAME_KINDS, RPC_METHODS, RUNTIME_HELPERS, SANDBOX_FRAME_KINDS } from "../../src/sandbox/protocol.ts";
import { ROOT } from "../support/env.ts";
import { localSession } from "../support/local-session.ts";

const local = localSession();
afterAll(() => local.close());

/** Evaluate a Python expression inside a booted entrypoint; it must be JSON-serialisable. */
async function py(expr: string): Promise<unknown> {
  const r = await local.session.run({ code: `import json, _mcp_host as h\nprint(json.dumps(${expr}))` });
  if (r.error) throw new Error(`${r.error.type}: ${r.error.message}`);
  return JSON.parse(r.stdout!);
}

const PY_SOURCES = ["interpreter.py", "mcp_package.py", "display.py", "init.py", "packages.py"]
  .map((f) => readFileSync(join(ROOT, "entrypoint", f), "utf8"))
  .join("\n");

describe("host ↔ sandbox contract", () => {
  test("the Python side handles exactly the host frame kinds", async () => {
    expect(((await py("sorted(h.HOST_FRAME_HANDLERS)")) as string[]).sort()).toEqual([...HOST_FRAME_KINDS].sort());
  });

  test("the Python side sends exactly the sandbox frame kinds", () => {
    const sent = new Set([...PY_SOURCES.matchAll(/"t": "([a-z_]+)"/g)].map((m) => m[1]!));
    expect([...sent].sort()).toEqual([...SANDBOX_FRAME_KINDS].sort());
  });

  test("every error kind becomes the exception class the contract names", async () => {
    const classes = (await py(
      "{k: type(h.ERROR_FACTORIES[k]({'kind': k, 'message': 'm'})).__name__ for k in h.PROTOCOL['error_kinds']}",
    )) as Record<string, string>;
    expect(classes).toEqual({ ...ERROR_KINDS });
  });

  test("the Python side requests exactly the methods the host answers", () => {
    const used = new Set([...PY_SOURCES.matchAll(/rpc(?:_sync)?\("([a-z_.]+)"/g)].map((m) => m[1]!));
    expect([...used].sort()).toEqual([...RPC_METHODS].sort());
  });

  test("`from mcp import runtime` offers exactly the helpers the model is told about", async () => {
    const names = (await py(
      "sorted(n for n in dir(__import__('mcp').runtime) if not n.startswith('_') and callable(getattr(__import__('mcp').runtime, n)) and not isinstance(getattr(__import__('mcp').runtime, n), type))",
    )) as string[];
    expect(names).toEqual(RUNTIME_HELPERS.map((h) => h.name).sort());
  });
});
