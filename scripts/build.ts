#!/usr/bin/env bun
/**
 * Compile the bridge into one self-contained binary: `bun run build` writes dist/mcp-code-exec for this
 * machine. The entrypoint (entrypoint/runtime.py) is embedded; nothing needs to sit beside the binary.
 *   bun scripts/build.ts [--outfile PATH] [--target bun-linux-x64 ...]
 */
import { $ } from "bun";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { outfile: { type: "string", default: "dist/mcp-code-exec" }, target: { type: "string" } },
});
const root = new URL("..", import.meta.url).pathname;
const target = values.target ? ["--target", values.target] : [];
const t0 = performance.now();
await $`bun build --compile --minify --sourcemap=none ${target} ${root}src/main.ts --outfile ${values.outfile}`.cwd(root).quiet();
const size = Bun.file(`${root}${values.outfile}`).size;
console.log(`built ${values.outfile} (${(size / 1024 / 1024).toFixed(1)} MiB) in ${Math.round(performance.now() - t0)} ms`);
