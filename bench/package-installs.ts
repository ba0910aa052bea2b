#!/usr/bin/env bun
/**
 * Installs into a running session, end to end through the compiled bridge (run_python in, result out):
 *   bun bench/package-installs.ts [--engines podman,docker] [--runs 5]
 * Rows, each timed from the run_python call to its result, in a session already running (a reset
 * before each run, not timed, gives a fresh interpreter without the package):
 *   - rich (pure Python; markdown-it-py and pygments, and mdurl under markdown-it-py) from a warm
 *     wheelhouse, the store emptied before each run (resolve, hash, unpack) and then warm (resolve only)
 *   - scikit-learn 1.7.2 from the same wheelhouse: the sandbox image has scikit-learn 1.9 and every
 *     dependency, so this is one large compiled wheel (9.4 MB) replacing the image's version; and
 *     python-levenshtein with the two compiled packages under it the image lacks
 *   - both from the loopback package index after an approval the client gives at once, the store
 *     emptied before each run, beside the floor: `pip download --no-deps` of the same wheels from the
 *     same index into an empty folder
 * The wheels are the tests' (scripts/test-wheels.sh); the index is test/support/package-index.ts.
 * Goals (issue 30): rich p50 <= 2 s, scikit-learn <= 5 s, from a warm wheelhouse.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { startBridge, type BridgeHandle } from "../test/support/bridge.ts";
import "../test/support/binary.ts";
import { startPackageIndex, TEST_WHEELS } from "../test/support/package-index.ts";
import { conditions, HEADER, row, summarize } from "./support.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { engines: { type: "string", default: "podman,docker" }, runs: { type: "string", default: "5" } },
});
const RUNS = Number(values.runs);
const CASES = [
  {
    label: "rich + 3 deps",
    req: "rich",
    imports: "import rich.console",
    wheels: ["rich==15.0.0", "markdown-it-py==4.3.0", "mdurl==0.1.2", "pygments==2.21.0"],
  },
  {
    label: "scikit-learn 1.7.2 over the image's",
    req: "scikit-learn==1.7.2",
    imports: "import sklearn.linear_model",
    wheels: ["scikit-learn==1.7.2"],
  },
  {
    label: "python-levenshtein + 2 compiled deps",
    req: "python-levenshtein",
    imports: "import Levenshtein",
    wheels: ["python-levenshtein==0.27.5", "levenshtein==0.27.5", "rapidfuzz==3.14.6"],
  },
];

const index = await startPackageIndex({ dirs: [TEST_WHEELS] });
const home = mkdtempSync(join(tmpdir(), "mcx-bench-installs-"));
const emptyStore = (state: string) => {
  for (const d of ["site", "wheels", "store.json"]) rmSync(join(state, "packages", d), { recursive: true, force: true });
};

/** Milliseconds end to end, and of them the import alone (timed inside the sandbox). */
const importMs: Record<string, number[]> = {};

async function timedInstall(b: BridgeHandle, req: string, imports: string, key: string): Promise<number> {
  await b.run("pass", { reset: true });
  const t0 = performance.now();
  const r = await b.run(
    `from mcp import runtime\nimport time\nruntime.install(${JSON.stringify(req)})\nt = time.perf_counter()\n${imports}\nprint("IMPORT", (time.perf_counter() - t) * 1000)`,
  );
  const ms = performance.now() - t0;
  if (r.isError) throw new Error(`install of ${req} failed: ${r.text}`);
  (importMs[key] ??= []).push(Number(/IMPORT ([\d.]+)/.exec(r.text)?.[1]));
  return ms;
}

console.log(`Installs into a running session (${conditions()}); ${RUNS} runs per row; ms`);
for (const engine of values.engines!.split(",").filter(Boolean)) {
  const state = join(home, `state-${engine}`);
  const common = { MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_STATE_DIR: state, MCP_BRIDGE_PACKAGE_INDEX: index.url };
  // No elicitation: a wheelhouse install needs no question (one that did would fail the row).
  const house = await startBridge({ ...common, MCP_BRIDGE_WHEELHOUSE: TEST_WHEELS });
  const approving = await startBridge(common, {
    capabilities: { elicitation: { form: {} } },
    setup: (c) => c.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { decision: "install" } })),
  });
  console.log(`\n${engine}\n${HEADER}`);
  try {
    await house.run("pass");
    for (const c of CASES) {
      const cold: number[] = [];
      const warm: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        emptyStore(state);
        cold.push(await timedInstall(house, c.req, c.imports, `${engine}-${c.req}`));
        warm.push(await timedInstall(house, c.req, c.imports, `${engine}-${c.req}`));
      }
      console.log(row(`${c.label}, warm wheelhouse, empty store`, summarize(cold)));
      console.log(row(`${c.label}, warm wheelhouse, warm store`, summarize(warm)));
      console.log(row(`  of which the import alone, in the sandbox`, summarize(importMs[`${engine}-${c.req}`]!)));
    }
    for (const c of CASES) {
      const viaIndex: number[] = [];
      const floor: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        emptyStore(state);
        viaIndex.push(await timedInstall(approving, c.req, c.imports, `${engine}-${c.req}-index`));
        const dest = mkdtempSync(join(home, "pip-"));
        const t0 = performance.now();
        const p = Bun.spawn(
          [
            "python3",
            "-m",
            "pip",
            "download",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
            "--only-binary",
            ":all:",
            "--python-version",
            "3.13",
            "--platform",
            "manylinux_2_17_x86_64",
            "--platform",
            "manylinux_2_28_x86_64",
            "--index-url",
            index.url,
            "-d",
            dest,
            ...c.wheels,
          ],
          { stdout: "ignore", stderr: "pipe" },
        );
        const [err, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
        if (code !== 0) throw new Error(`pip download failed: ${err}`);
        floor.push(performance.now() - t0);
        rmSync(dest, { recursive: true, force: true });
      }
      console.log(row(`${c.label}, loopback index, approved at once`, summarize(viaIndex)));
      console.log(row(`  floor: pip download --no-deps of the same wheels`, summarize(floor)));
    }
  } finally {
    await house.close();
    await approving.close();
  }
}
index.close();
rmSync(home, { recursive: true, force: true });
