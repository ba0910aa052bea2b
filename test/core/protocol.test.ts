/**
 * The host ↔ sandbox contract has one source (src/sandbox/protocol.ts). These tests boot the real
 * entrypoint and read the Python side's own view of it: a kind, method, error or helper that exists
 * on one side only fails here, and so does an interrupt timing or a display default that the two
 * sides (or the host's own configuration defaults) hold differently.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config/env.ts";
import {
  DISPLAY_DEFAULTS,
  displayLimits,
  ERROR_KINDS,
  HOST_FRAME_KINDS,
  INTERRUPT,
  RPC_METHODS,
  RUNTIME_HELPERS,
  SANDBOX_FRAME_KINDS,
} from "../../src/sandbox/protocol.ts";
import { INTERRUPT_GRACE_MS } from "../../src/session/ladder.ts";
import { MAX_IMAGES } from "../../src/session/outcome.ts";
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

  test("the interrupt's timing: the sandbox re-interrupts as the contract says, and stops before the host's grace ends", async () => {
    // h.rpc is a function of the entrypoint: its globals are the entrypoint's own.
    const [every, forS] = (await py("[h.rpc.__globals__['REINTERRUPT_EVERY_S'], h.rpc.__globals__['REINTERRUPT_FOR_S']]")) as number[];
    expect({ every: every! * 1000, for: forS! * 1000 }).toEqual({
      every: INTERRUPT.reinterrupt_every_ms,
      for: INTERRUPT.reinterrupt_for_ms,
    });
    expect(INTERRUPT.reinterrupt_for_ms).toBeLessThan(INTERRUPT.grace_ms);
    expect(INTERRUPT_GRACE_MS).toBe(INTERRUPT.grace_ms);
    // No second copy of the numbers on the Python side.
    expect(PY_SOURCES).not.toMatch(/REINTERRUPT_(EVERY|FOR)_S = [0-9]/);
  });

  test("the display limits: the sandbox's defaults are the contract's, and the host's configured defaults send the same", async () => {
    const defaults = (await py(
      "(lambda d: (d._run.update(limits={}), {k: d._limit(k) for k in h.PROTOCOL['display_defaults']})[1])(__import__('_mcp_display'))",
    )) as Record<string, number>;
    expect(defaults).toEqual({ ...DISPLAY_DEFAULTS });
    // Every limit the Python side reads has a default in the contract, and no literal of its own.
    const read = new Set([...PY_SOURCES.matchAll(/_limit\("([a-z_]+)"\)/g)].map((m) => m[1]!));
    expect([...read].sort()).toEqual(Object.keys(DISPLAY_DEFAULTS).sort());
    expect(PY_SOURCES).not.toMatch(/_limit\("[a-z_]+",/);
    // What an exec frame carries with MCP_BRIDGE_IMAGE_CAP, _FILE_CAP and _RESULT_CAP at their defaults.
    const sent = displayLimits(loadConfig({}, local.home));
    const { dpi: _dpi, ...sentByHost } = DISPLAY_DEFAULTS;
    expect(sent).toEqual(sentByHost);
    expect(MAX_IMAGES).toBe(DISPLAY_DEFAULTS.max_images);
  });

  test("the sandbox stops at the contract's image count, so the host's own cap never has to drop one", async () => {
    const r = await local.session.run({
      code: "import base64\nfrom mcp import runtime\npng = base64.b64decode('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==')\nfor _ in range(12): runtime.show(png)",
    });
    expect(r.images?.length).toBe(DISPLAY_DEFAULTS.max_images);
    const notes = r.displayNotes?.join(" ") ?? "";
    expect(notes).toContain(`at most ${DISPLAY_DEFAULTS.max_images} images per run`);
    expect(notes).not.toContain("dropped by the bridge");
  });
});
