#!/usr/bin/env bun
/**
 * What the model's Python has, and what having it costs, through the compiled bridge and a real MCP
 * client. Prints; asserts nothing.
 *   bun bench/packages.ts [--engines podman,docker] [--image IMAGE] [--slim IMAGE] [--offline IMAGE]
 *                         [--rounds 5] [--warm 200] [--only importable,image,installs]
 * Sections (--only picks some; each is one function in SECTIONS, so more can be added beside them):
 *   importable: in a fresh session of each image (the default, and the one `image build --offline`
 *     made when --offline names it), how many of image/python-top40.json import, and the share of
 *     LLM-written imports they satisfy (weighted by the list's share_of_llm_answers_pct);
 *   image: the batteries image against the slim one (same base, no packages: the floor): what a pull
 *     downloads (the compressed layers podman pushes to a registry on loopback), and per engine:
 *     size, cold first call (fresh bridge, prewarm off), warm `print(1)`, and
 *     `import numpy, pandas, matplotlib.pyplot, scipy, sklearn` in a fresh session (wall time of the
 *     call, and the time the imports took inside). Rounds alternate between the two images;
 *   installs: packages added to a running session (bench/package-installs.ts, run as it is).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startBridge, type BridgeHandle } from "../test/support/bridge.ts";
import { bridgeEnv, IMAGE, ROOT, SLIM_IMAGE } from "../test/support/env.ts";
import { OCI_REGISTRY_PORTS, startOciRegistry } from "../test/support/oci-registry.ts";
import { run } from "../test/support/run.ts";
import { conditions, HEADER, row, summarize } from "./support.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    engines: { type: "string", default: "podman,docker" },
    image: { type: "string", default: IMAGE },
    slim: { type: "string", default: SLIM_IMAGE },
    offline: { type: "string" },
    rounds: { type: "string", default: "5" },
    warm: { type: "string", default: "200" },
    only: { type: "string", default: "importable,image,installs" },
  },
});
const engines = values.engines!.split(",").filter(Boolean);
const ROUNDS = Number(values.rounds);
const WARM = Number(values.warm);

interface Listed {
  rank: number;
  distribution: string;
  import: string;
  share_of_llm_answers_pct: number | null;
}
const LIST = JSON.parse(readFileSync(join(ROOT, "image", "python-top40.json"), "utf8")) as { sources: string[]; packages: Listed[] };
const IMPORTS = "import numpy, pandas, matplotlib.pyplot, scipy, sklearn";

/** A fresh bridge on `engine` and `image` (prewarm off: the container starts inside the first call). */
async function bridgeOn(engine: string, image: string): Promise<{ bridge: BridgeHandle; done: () => Promise<void> }> {
  const state = mkdtempSync(join(tmpdir(), "bench-packages-"));
  const bridge = await startBridge({
    MCP_BRIDGE_RUNTIME: engine,
    MCP_BRIDGE_IMAGE: image,
    MCP_BRIDGE_PREWARM: "0",
    MCP_BRIDGE_STATE_DIR: state,
  });
  return {
    bridge,
    done: async () => {
      await bridge.close();
      rmSync(state, { recursive: true, force: true });
    },
  };
}

async function timedCall(bridge: BridgeHandle, code: string, reset = false): Promise<{ ms: number; text: string }> {
  const t0 = performance.now();
  const r = await bridge.run(code, { reset });
  const ms = performance.now() - t0;
  if (r.isError) throw new Error(`run_python failed: ${r.text.slice(0, 400)}`);
  return { ms, text: r.text };
}

const pct = (x: number) => `${x.toFixed(1)}%`;

/** Which of the 40 import in a fresh session of `image`, and what share of LLM imports that is. */
async function importable(engine: string, image: string, label: string): Promise<void> {
  const names = LIST.packages.map((p) => p.import);
  const code = `import importlib, json
ok = []
for name in ${JSON.stringify(names)}:
    try:
        importlib.import_module(name)
        ok.append(name)
    except Exception:
        pass
print(json.dumps(ok))`;
  const { bridge, done } = await bridgeOn(engine, image);
  try {
    const { text } = await timedCall(bridge, code);
    const ok = new Set(JSON.parse(text.trim().split("\n").at(-1)!) as string[]);
    const weight = (ps: Listed[]) => ps.reduce((sum, p) => sum + (p.share_of_llm_answers_pct ?? 0), 0);
    const have = LIST.packages.filter((p) => ok.has(p.import));
    const missing = LIST.packages.filter((p) => !ok.has(p.import)).map((p) => p.distribution);
    const share = (100 * weight(have)) / weight(LIST.packages);
    console.log(
      `  [${engine}] ${label} ${image}: ${have.length}/${LIST.packages.length} import; ${pct(share)} of the list's LLM-import weight` +
        (missing.length ? `; missing: ${missing.join(", ")}` : ""),
    );
  } finally {
    await done();
  }
}

async function sectionImportable(): Promise<void> {
  console.log("\nimportable in a fresh session (goal: default 40/40, offline >= 38/40, >= 98% of LLM imports)");
  console.log(`  the list: ${LIST.sources[0]}`);
  for (const engine of engines) {
    await importable(engine, values.image!, "default");
    if (values.offline) await importable(engine, values.offline, "offline");
  }
  if (!values.offline)
    console.log(
      "  (offline: pass --offline IMAGE, an image from `mcp-code-exec image build --offline --tag IMAGE --mirror file://DIR/debian --wheelhouse DIR/wheels` after `image fetch DIR`)",
    );
}

async function sizeOf(engine: string, image: string): Promise<number> {
  const r = await run([engine, "image", "inspect", "--format", "{{.Size}}", image], { env: bridgeEnv() });
  if (r.code !== 0) throw new Error(`${engine} has no image ${image}: ${r.stderr.trim()}`);
  return Number(r.stdout.trim());
}

/** What a pull of each image downloads: podman pushes it to a registry on loopback, the manifest lists the layers. */
async function downloadSizes(images: Record<string, string>): Promise<string> {
  const registry = await startOciRegistry(OCI_REGISTRY_PORTS.bench);
  try {
    const parts: string[] = [];
    for (const [variant, image] of Object.entries(images)) {
      const ref = `${registry.host}/bench:${variant}`;
      const pushed = await run(["podman", "push", "--quiet", image, ref], { env: bridgeEnv() });
      if (pushed.code !== 0) throw new Error(`podman push failed: ${pushed.stderr}`);
      const m = (await (
        await fetch(`http://${registry.host}/v2/bench/manifests/${variant}`, {
          headers: { accept: "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json" },
        })
      ).json()) as { layers: Array<{ size: number }> };
      parts.push(`${variant} ${(m.layers.reduce((a, l) => a + l.size, 0) / 1e6).toFixed(0)} MB`);
      await run(["podman", "rmi", ref], { env: bridgeEnv() });
    }
    return parts.join(", ");
  } finally {
    await registry.stop();
  }
}

async function sectionImage(): Promise<void> {
  const images = { batteries: values.image!, slim: values.slim! };
  console.log(`\nthe batteries image against the slim one (goals: size <= 900 MB; cold and warm within 1.2x of slim; imports <= 2 s)`);
  console.log(`  the 5 imports: ${IMPORTS}`);
  if (engines.includes("podman")) console.log(`  download (compressed layers): ${await downloadSizes(images)}`);
  for (const engine of engines) {
    const sizes = { batteries: await sizeOf(engine, images.batteries), slim: await sizeOf(engine, images.slim) };
    console.log(
      `  [${engine}] size: batteries ${(sizes.batteries / 1e6).toFixed(0)} MB (${(sizes.batteries / 2 ** 20).toFixed(0)} MiB), slim ${(sizes.slim / 1e6).toFixed(0)} MB`,
    );
    const cold = { batteries: [] as number[], slim: [] as number[] };
    const warm = { batteries: [] as number[], slim: [] as number[] };
    const imports: number[] = [];
    const inside: number[] = [];
    const insideCpu: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      for (const variant of ["batteries", "slim"] as const) {
        const { bridge, done } = await bridgeOn(engine, images[variant]);
        try {
          cold[variant].push((await timedCall(bridge, "print(1)")).ms);
          for (let i = 0; i < WARM / ROUNDS; i++) warm[variant].push((await timedCall(bridge, "print(1)")).ms);
          if (variant === "batteries") {
            // A fresh interpreter in a fresh sandbox (reset), started before the clock (print(1)).
            await timedCall(bridge, "print(1)", true);
            const t = await timedCall(
              bridge,
              `import os, time; _t, _c = time.perf_counter(), os.times(); ${IMPORTS}; _d = os.times(); print(round((time.perf_counter() - _t) * 1000), round((_d.user + _d.system - _c.user - _c.system) * 1000))`,
            );
            const [wall, cpu] = (t.text.trim().split("\n").at(-1) ?? "").split(" ").map(Number);
            imports.push(t.ms);
            inside.push(wall ?? Number.NaN);
            insideCpu.push(cpu ?? Number.NaN);
          }
        } finally {
          await done();
        }
      }
    }
    console.log(HEADER);
    const ratio = (a: number[], b: number[]) => `${(summarize(a).median / summarize(b).median).toFixed(2)}x slim`;
    console.log(row(`[${engine}] cold first call, slim (the floor)`, summarize(cold.slim)));
    console.log(row(`[${engine}] cold first call, batteries`, summarize(cold.batteries), ratio(cold.batteries, cold.slim)));
    console.log(row(`[${engine}] warm print(1), slim (the floor)`, summarize(warm.slim)));
    console.log(row(`[${engine}] warm print(1), batteries`, summarize(warm.batteries), ratio(warm.batteries, warm.slim)));
    console.log(row(`[${engine}] the 5 imports in a fresh session: the call`, summarize(imports)));
    console.log(row(`[${engine}]   of which the imports, inside (wall)`, summarize(inside)));
    console.log(row(`[${engine}]   CPU time of the imports (less sensitive to load)`, summarize(insideCpu)));
  }
}

async function sectionInstalls(): Promise<void> {
  console.log("\ninstalls into a running session (bench/package-installs.ts)");
  const p = Bun.spawn(["bun", join(ROOT, "bench", "package-installs.ts"), "--engines", engines.join(","), "--runs", String(ROUNDS)], {
    stdout: "inherit",
    stderr: "inherit",
  });
  if ((await p.exited) !== 0) throw new Error("bench/package-installs.ts failed");
}

/** The sections, in the order they run; one more is one more entry. */
const SECTIONS: Record<string, () => Promise<void>> = {
  importable: sectionImportable,
  image: sectionImage,
  installs: sectionInstalls,
};

console.log(
  `images: default ${values.image}, slim ${values.slim}${values.offline ? `, offline ${values.offline}` : ""}; engines ${engines.join(", ")}`,
);
console.log(`start: ${conditions()}`);
for (const name of values.only!.split(",")) {
  const section = SECTIONS[name];
  if (!section) throw new Error(`unknown section ${name}: one of ${Object.keys(SECTIONS).join(", ")}`);
  await section();
}
console.log(`\nend: ${conditions()}`);
process.exit(0);
