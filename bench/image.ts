#!/usr/bin/env bun
/**
 * Sandbox images compared in one run: size, `image save` file size, cold start.
 *   bun bench/image.ts [--images A,B] [--engines podman,docker] [--runs 5]
 * For each engine and image: the size the engine reports; the file `mcp-code-exec image save` writes;
 * `ENGINE run --rm IMAGE true` (the floor: a container that runs nothing) and
 * `ENGINE run --rm IMAGE python3 -c 'print(1)'`, first run and median; the same with
 * `import numpy, pandas, matplotlib.pyplot, scipy, PIL` (wall time, and the CPU time inside); and the first run_python of a fresh bridge
 * (prewarm off, so the container starts inside the call) followed by the same imports in that sandbox.
 * Runs alternate between the images so that load on the machine falls on all of them alike.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startBridge } from "../test/support/bridge.ts";
import { BINARY } from "../test/support/binary.ts";
import { bridgeEnv, IMAGE } from "../test/support/env.ts";
import { plainRunFlags } from "../test/support/engines.ts";
import { run } from "../test/support/run.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    images: { type: "string", default: IMAGE },
    engines: { type: "string", default: "podman,docker" },
    runs: { type: "string", default: "5" },
  },
});
const images = values.images!.split(",").filter(Boolean);
const engines = values.engines!.split(",").filter(Boolean);
const RUNS = Number(values.runs);
const IMPORTS = "import numpy, pandas, matplotlib.pyplot, scipy, PIL";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number) => `${x.toFixed(0)} ms`;
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB (${(bytes / 1024 / 1024).toFixed(0)} MiB)`;

async function timed(argv: string[]): Promise<number> {
  return (await timedOutput(argv)).ms;
}

async function timedOutput(argv: string[]): Promise<{ ms: number; stdout: string }> {
  const t0 = performance.now();
  const r = await run(argv, { env: bridgeEnv() });
  if (r.code !== 0) throw new Error(`${argv.join(" ")} exited ${r.code}: ${r.stderr.trim()}`);
  return { ms: performance.now() - t0, stdout: r.stdout };
}

/** The imports, printing the CPU time they took inside the container (less sensitive to load than wall time). */
const IMPORTS_CPU = `${IMPORTS}; import os; t = os.times(); print(round((t.user + t.system) * 1000))`;

async function engineSize(engine: string, image: string): Promise<number> {
  const r = await run([engine, "image", "inspect", "--format", "{{.Size}}", image], { env: bridgeEnv() });
  if (r.code !== 0) throw new Error(`${engine} has no image ${image}: ${r.stderr.trim()}`);
  return Number(r.stdout.trim());
}

async function savedSize(engine: string, image: string): Promise<{ bytes: number; ms: number }> {
  const dir = mkdtempSync(join(tmpdir(), "bench-image-"));
  try {
    const file = join(dir, "image.tar");
    const t = await timed([BINARY, "image", "save", file, "--engine", engine, "--image", image]);
    return { bytes: statSync(file).size, ms: t };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A fresh bridge (prewarm off: the container starts inside the first call): the first call, then the imports. */
async function bridgeFirstCall(engine: string, image: string): Promise<{ first: number; imports: number }> {
  const state = mkdtempSync(join(tmpdir(), "bench-image-state-"));
  const bridge = await startBridge({
    MCP_BRIDGE_RUNTIME: engine,
    MCP_BRIDGE_IMAGE: image,
    MCP_BRIDGE_PREWARM: "0",
    MCP_BRIDGE_STATE_DIR: state,
  });
  try {
    let t0 = performance.now();
    const first = await bridge.run("print(1)");
    const firstMs = performance.now() - t0;
    if (first.isError) throw new Error(`first run_python failed: ${first.text.slice(0, 300)}`);
    t0 = performance.now();
    const imports = await bridge.run(IMPORTS);
    if (imports.isError) throw new Error(`imports failed: ${imports.text.slice(0, 300)}`);
    return { first: firstMs, imports: performance.now() - t0 };
  } finally {
    await bridge.close();
    rmSync(state, { recursive: true, force: true });
  }
}

const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(" ");
console.log(`images: ${images.join(", ")}; engines: ${engines.join(", ")}; ${RUNS} runs each; load average ${load()}`);
for (const engine of engines) {
  for (const image of images) {
    const size = await engineSize(engine, image);
    const saved = await savedSize(engine, image);
    console.log(`[${engine}] ${image}: size ${mb(size)}; image save file ${mb(saved.bytes)} in ${ms(saved.ms)}`);
  }
  // Explicit ulimits: podman otherwise copies its own hard limits, which fails without CAP_SYS_RESOURCE.
  const runArgs = (image: string, ...cmd: string[]) => [engine, "run", "--rm", ...plainRunFlags(engine), image, ...cmd];
  const samples = new Map(
    images.map((i) => [
      i,
      {
        floor: [] as number[],
        print: [] as number[],
        imports: [] as number[],
        importsCpu: [] as number[],
        first: [] as number[],
        bridgeImports: [] as number[],
      },
    ]),
  );
  for (let r = 0; r < RUNS; r++) {
    for (const image of images) {
      const s = samples.get(image)!;
      s.floor.push(await timed(runArgs(image, "true")));
      s.print.push(await timed(runArgs(image, "python3", "-c", "print(1)")));
      const imp = await timedOutput(runArgs(image, "python3", "-c", IMPORTS_CPU));
      s.imports.push(imp.ms);
      s.importsCpu.push(Number(imp.stdout.trim()));
      const b = await bridgeFirstCall(engine, image);
      s.first.push(b.first);
      s.bridgeImports.push(b.imports);
    }
  }
  const line = (xs: number[]) => `first ${ms(xs[0]!)}, median ${ms(median(xs))}`;
  for (const image of images) {
    const s = samples.get(image)!;
    console.log(
      `[${engine}] ${image}: run --rm true (floor): ${line(s.floor)}; python3 -c 'print(1)': ${line(s.print)}; python3 -c '${IMPORTS}': ${line(s.imports)} (CPU inside: ${line(s.importsCpu)})`,
    );
    console.log(
      `[${engine}] ${image}: bridge first run_python (fresh bridge, prewarm off): ${line(s.first)}; then the imports in that sandbox: ${line(s.bridgeImports)}`,
    );
  }
}
console.log(`load average at the end: ${load()}`);
process.exit(0);
