/** `Bun.` and `Deno.` belong in src/host/ only: the rest of the bridge must run under both runtimes. */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { ROOT } from "../support/env.ts";

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return tsFiles(p);
    return e.name.endsWith(".ts") ? [p] : [];
  });
}

test("runtime globals appear only in src/host/", () => {
  const offenders: string[] = [];
  for (const file of [...tsFiles(join(ROOT, "src")), ...tsFiles(join(ROOT, "adapters"))]) {
    const rel = relative(ROOT, file);
    if (rel.startsWith("src/host/")) continue;
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, i) => {
        const code = line.replace(/\/\/.*$/, "").replace(/^\s*\*.*$/, "");
        if (/\b(Bun|Deno)\.\w/.test(code) || /from ["']bun["']/.test(code)) offenders.push(`${rel}:${i + 1}: ${line.trim()}`);
      });
  }
  expect(offenders).toEqual([]);
});
