#!/usr/bin/env bun
/**
 * The first call of a conversation whose model opens its own session (`session="new"`, as opencode's
 * models are told to) against the first call without one, on a bridge whose prewarmed sandbox is ready.
 * The prewarmed sandbox belonged to the connection's default session only; now a "new" session takes it
 * while no call has used it. Each sample is a fresh bridge; the floor is a plain `ENGINE run` of the image.
 *
 *   bun bench/first-new-session.ts [--binary before=OLD --binary after=dist/mcp-code-exec] [--engine podman] [--n 5]
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { IMAGE, ROOT } from "../test/support/env.ts";
import { conditions, engineRunOnce, floorFlags, HEADER, row, startBridge, summarize } from "./support.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    binary: { type: "string", multiple: true },
    engine: { type: "string", default: process.env.MCP_TEST_ENGINES?.split(",")[0] ?? "podman" },
    n: { type: "string", default: "5" },
  },
});
const binaries = (values.binary?.length ? values.binary : [`current=${join(ROOT, "dist", "mcp-code-exec")}`]).map((b) => {
  const i = b.indexOf("=");
  return i > 0 ? { label: b.slice(0, i), path: resolve(b.slice(i + 1)) } : { label: b, path: resolve(b) };
});
const engine = values.engine!;
const n = Number(values.n);

/** A fresh bridge, its prewarmed sandbox ready, then one timed call with these arguments. */
async function firstCall(binary: string, args: Record<string, unknown>): Promise<number> {
  const bridge = await startBridge(binary, {
    MCP_BRIDGE_RUNTIME: engine,
    MCP_BRIDGE_LOG_LEVEL: "INFO",
    MCP_BRIDGE_STATE_DIR: mkdtempSync(join(tmpdir(), "mcx-bench-new-")),
  });
  try {
    await bridge.waitFor("sandbox ready");
    const t = performance.now();
    const r = (await bridge.client.callTool({ name: "run_python", arguments: { code: "print(1)", ...args } })) as { isError?: boolean };
    const ms = performance.now() - t;
    if (r.isError) throw new Error(`call failed: ${JSON.stringify(r)}`);
    return ms;
  } finally {
    await bridge.close();
  }
}

console.log(`first call on a bridge whose prewarmed sandbox is ready, ${engine}, ${n} bridges each; ${conditions()}`);
console.log(`${HEADER}  (ms)`);
const floor: number[] = [];
for (let i = 0; i < n; i++)
  floor.push(await engineRunOnce([engine, "run", "--rm", ...floorFlags(engine), IMAGE, "python3", "-c", "print(1)"]));
console.log(row(`floor: ${engine} run --rm IMAGE python3 -c 'print(1)'`, summarize(floor)));
for (const b of binaries) {
  for (const [what, args] of [
    ["no session (the default session)", {}],
    ['session="new"', { session: "new" }],
  ] as const) {
    const samples: number[] = [];
    for (let i = 0; i < n; i++) samples.push(await firstCall(b.path, args));
    console.log(row(`${b.label}: ${what}`, summarize(samples)));
  }
}
process.exit(0);
