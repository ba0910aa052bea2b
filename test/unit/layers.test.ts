/**
 * The boundaries ARCHITECTURE.md states, checked against the imports in the code: which folders may
 * import which. A type-only import (`import type`) carries no code and is allowed across a boundary.
 * (`Bun.`/`Deno.` only in src/host/ is test/unit/host-boundary.test.ts.)
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { ROOT } from "../support/env.ts";

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? files(p) : e.name.endsWith(".ts") ? [p] : [];
  });
}

interface Import {
  from: string;
  to: string;
  typeOnly: boolean;
}

/** Every relative import and re-export (static or dynamic) of the bridge's own code. */
const IMPORTS: Import[] = [...files(join(ROOT, "src")), ...files(join(ROOT, "adapters"))].flatMap((file) => {
  const text = readFileSync(file, "utf8");
  const found: Import[] = [];
  for (const m of text.matchAll(/^(import|export)\s+(type\s+)?[^;]*?from\s+"(\.[^"]+)"|import\("(\.[^"]+)"\)/gm)) {
    const spec = m[3] ?? m[4]!;
    found.push({ from: relative(ROOT, file), to: relative(ROOT, join(dirname(file), spec)), typeOnly: m[2] !== undefined });
  }
  return found;
});

const code = (i: Import) => !i.typeOnly;
const under = (path: string, ...folders: string[]) => folders.some((f) => path.startsWith(`${f}/`) || path === f);
const show = (list: Import[]) => list.map((i) => `${i.from} -> ${i.to}`);

test("the imports were read", () => {
  expect(IMPORTS.length).toBeGreaterThan(500);
  expect(IMPORTS.some((i) => i.from === "src/session/session.ts" && i.to === "src/session/sandbox-life.ts")).toBe(true);
});

test("src/sandbox/ (one container and its frames) knows nothing of sessions, servers, upstreams or commands", () => {
  const bad = IMPORTS.filter(
    (i) => under(i.from, "src/sandbox") && code(i) && under(i.to, "src/session", "src/server", "src/upstream", "src/http", "src/cli"),
  );
  expect(show(bad)).toEqual([]);
});

test("src/host/ (the only code that touches Bun or Deno) depends on nothing of the bridge but the clock", () => {
  const bad = IMPORTS.filter((i) => under(i.from, "src/host") && !under(i.to, "src/host") && i.to !== "src/clock.ts");
  expect(show(bad)).toEqual([]);
});

test("src/session/ does not reach up into upstream servers, HTTP or commands (it gets handlers injected)", () => {
  const bad = IMPORTS.filter(
    (i) => under(i.from, "src/session") && code(i) && under(i.to, "src/upstream", "src/http", "src/cli", "src/server"),
  );
  expect(show(bad)).toEqual([]);
});

test("commands (src/cli/) are reached from src/main.ts only", () => {
  const bad = IMPORTS.filter((i) => under(i.to, "src/cli") && !under(i.from, "src/cli") && i.from !== "src/main.ts");
  expect(show(bad)).toEqual([]);
});

test("the Python that runs in the sandbox (entrypoint/) is embedded by src/sandbox/bootstrap.ts only", () => {
  const bad = IMPORTS.filter((i) => under(i.to, "entrypoint") && i.from !== "src/sandbox/bootstrap.ts");
  expect(show(bad)).toEqual([]);
  expect(IMPORTS.filter((i) => under(i.to, "entrypoint")).length).toBeGreaterThan(0);
});

test("shipped code imports no test or bench code", () => {
  const bad = IMPORTS.filter((i) => under(i.to, "test", "bench"));
  expect(show(bad)).toEqual([]);
});
