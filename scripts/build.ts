#!/usr/bin/env bun
/**
 * Compile the bridge into self-contained binaries. The entrypoint (entrypoint/*.py) is embedded; nothing
 * needs to sit beside a binary.
 *   bun scripts/build.ts [--outfile PATH] [--target bun-linux-x64]     one binary for this machine (`bun run build`)
 *   bun scripts/build.ts --release [--outdir dist/release] [--targets linux-x64,darwin-arm64] [--allow-missing]
 * --release cross-compiles mcp-code-exec-<os>-<arch> for every RELEASE_TARGETS entry and writes SHA256SUMS
 * (sha256sum format) and a copy of scripts/install.sh beside them. Bun fetches each foreign target's
 * runtime once from the npm registry and caches it under ~/.bun/install/cache (or $BUN_INSTALL_CACHE_DIR);
 * a target it cannot fetch is reported with what to do, the others are still built, and the exit status
 * is 1 unless --allow-missing.
 */
import { $ } from "bun";
import { copyFileSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { parseArgs } from "node:util";

/** Release platform name (as install.sh spells it) → Bun compile target. */
export const RELEASE_TARGETS: Record<string, string> = {
  "linux-x64": "bun-linux-x64",
  "linux-arm64": "bun-linux-arm64",
  "darwin-x64": "bun-darwin-x64",
  "darwin-arm64": "bun-darwin-arm64",
};

const root = resolve(import.meta.dir, "..");

async function compile(outfile: string, target?: string): Promise<{ ok: true; ms: number } | { ok: false; error: string }> {
  const t0 = performance.now();
  const targetArgs = target ? [`--target=${target}`] : [];
  // --bytecode: JavaScriptCore bytecode is embedded beside the source, so a start skips parsing (spawn
  // to the initialize answer halves). It is tied to the Bun version the binary carries, not to the
  // architecture, so cross-compiled targets get it too; ESM bytecode needs --format=esm with --compile.
  const r =
    await $`bun build --compile --bytecode --format=esm --minify --sourcemap=none ${targetArgs} ${join(root, "src/main.ts")} --outfile ${outfile}`
      .cwd(root)
      .quiet()
      .nothrow();
  if (r.exitCode === 0) return { ok: true, ms: Math.round(performance.now() - t0) };
  // Keep the error, drop Bun's timing lines ("[19ms]  bundle  319 modules").
  const lines = `${r.stderr.toString()}\n${r.stdout.toString()}`.split("\n").filter((l) => l.trim() && !/^\s*\[\d+ms\]/.test(l));
  return { ok: false, error: lines.join("\n    ") };
}

/** A compile failure, with what to do when it is the runtime download that failed. */
function explain(target: string, error: string): string {
  const download = /Failed to download '([^']+)'/.exec(error);
  if (!download) return error;
  const cache = process.env.BUN_INSTALL_CACHE_DIR ?? join(process.env.HOME ?? "~", ".bun/install/cache");
  return (
    `${error}\n    Bun needs its ${target} runtime (${download[1]}, from the npm registry) to cross-compile and could not fetch it.` +
    `\n    Run this once where the npm registry is reachable, or copy that file from a machine that has it to ${join(cache, download[1] as string)}.`
  );
}

async function sha256(path: string): Promise<string> {
  return new Bun.CryptoHasher("sha256").update(await Bun.file(path).arrayBuffer()).digest("hex");
}

async function release(outdir: string, names: string[], allowMissing: boolean): Promise<number> {
  mkdirSync(outdir, { recursive: true });
  for (const f of readdirSync(outdir))
    if (f.startsWith("mcp-code-exec-") || f === "SHA256SUMS" || f === "install.sh") rmSync(join(outdir, f));
  const sums: string[] = [];
  const failed: string[] = [];
  for (const name of names) {
    const target = RELEASE_TARGETS[name];
    if (!target) throw new Error(`unknown release target "${name}": use ${Object.keys(RELEASE_TARGETS).join(", ")}`);
    const file = join(outdir, `mcp-code-exec-${name}`);
    const r = await compile(file, target);
    if (!r.ok) {
      failed.push(name);
      console.error(`FAILED ${name} (${target}):\n    ${explain(target, r.error)}`);
      continue;
    }
    const sum = await sha256(file);
    sums.push(`${sum}  ${basename(file)}`);
    console.log(`built ${file} (${(Bun.file(file).size / 1024 / 1024).toFixed(1)} MiB, sha256 ${sum}) in ${r.ms} ms`);
  }
  await Bun.write(join(outdir, "SHA256SUMS"), sums.length ? `${sums.join("\n")}\n` : "");
  // The one-liner fetches install.sh from the same release as the binaries.
  copyFileSync(join(root, "scripts/install.sh"), join(outdir, "install.sh"));
  console.log(`wrote ${join(outdir, "SHA256SUMS")} (${sums.length} of ${names.length} targets)`);
  if (failed.length) console.error(`missing: ${failed.join(", ")}${allowMissing ? " (allowed by --allow-missing)" : ""}`);
  return failed.length && !allowMissing ? 1 : 0;
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      outfile: { type: "string", default: "dist/mcp-code-exec" },
      target: { type: "string" },
      release: { type: "boolean", default: false },
      outdir: { type: "string", default: "dist/release" },
      targets: { type: "string", default: Object.keys(RELEASE_TARGETS).join(",") },
      "allow-missing": { type: "boolean", default: false },
    },
  });
  if (values.release) {
    const names = values.targets
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    process.exit(await release(resolve(root, values.outdir), names, values["allow-missing"]));
  }
  const outfile = resolve(root, values.outfile);
  const r = await compile(outfile, values.target);
  if (!r.ok) {
    console.error(values.target ? explain(values.target, r.error) : r.error);
    process.exit(1);
  }
  console.log(`built ${values.outfile} (${(Bun.file(outfile).size / 1024 / 1024).toFixed(1)} MiB) in ${r.ms} ms`);
}
