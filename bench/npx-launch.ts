#!/usr/bin/env bun
/**
 * How long `npx -y mcp-code-exec@<version>` takes to answer MCP `initialize`, against the binary run
 * directly (the floor), measured in the same run through the SDK's stdio client:
 *   bun bench/npx-launch.ts [--runs 10] [--cold-runs 5]
 * Builds a release, publishes its npm packages (all four platforms) to a local verdaccio on loopback,
 * then times, from spawn to the initialize answer (prewarm off, so no container starts):
 *   direct      the linux-x64 binary npm installed, spawned by path
 *   launcher    node + the launcher script (what a global `npm install -g` runs), no npm
 *   npx warm    npx with the package already in its cache
 *   npx warm --prefer-offline   the same, without asking the registry about the (pinned) version again
 *   npx cold    npx with an empty HOME and npm cache (download ~50 MB from loopback, unpack, link)
 * The registry is on this machine: a real network adds the download time of the ~50 MB tarball.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pkg from "../package.json" with { type: "json" };
import { ROOT } from "../test/support/env.ts";
import { startRegistry } from "../test/support/npm-registry.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { runs: { type: "string", default: "10" }, "cold-runs": { type: "string", default: "5" } },
});
const RUNS = Number(values.runs);
const COLD_RUNS = Number(values["cold-runs"]);
const WORK = mkdtempSync(join(tmpdir(), "mcp-code-exec-bench-npx-"));
const BIN = join(WORK, "bin");
const SPEC = `mcp-code-exec@${pkg.version}`;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const fmt = (xs: number[]) =>
  `median ${median(xs).toFixed(0)} ms, min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)} (n=${xs.length})`;

function sh(argv: string[], env: Record<string, string>): void {
  const r = Bun.spawnSync(argv, { cwd: ROOT, env, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${argv.join(" ")} failed:\n${r.stdout}\n${r.stderr}`);
}

/** Spawn → initialize answer, in ms. */
async function initialize(command: string, args: string[], env: Record<string, string>): Promise<number> {
  const t0 = performance.now();
  const transport = new StdioClientTransport({ command, args, env, stderr: "ignore", cwd: WORK });
  const client = new Client({ name: "bench", version: "0" });
  await client.connect(transport);
  const ms = performance.now() - t0;
  await client.close();
  return ms;
}

mkdirSync(BIN);
for (const tool of ["node", "npm", "npx", "sh"]) symlinkSync(Bun.which(tool) as string, join(BIN, tool));
const hostEnv = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: WORK };
console.log("building the release and publishing its npm packages to a local verdaccio (not timed)...");
sh(["bun", "scripts/build.ts", "--release", "--outdir", join(WORK, "release")], hostEnv);
const registry = await startRegistry();
try {
  sh(["bun", "scripts/npm-packages.ts", "--release", join(WORK, "release"), "--out", join(WORK, "npm"), "--publish"], {
    ...hostEnv,
    npm_config_userconfig: registry.npmrc,
    npm_config_cache: join(WORK, "publish-cache"),
  });

  const bridgeEnv = { MCP_BRIDGE_PREWARM: "0", MCP_BRIDGE_LOG_LEVEL: "ERROR" };
  const npxEnv = (home: string, cache: string) => ({
    PATH: BIN,
    HOME: home,
    npm_config_cache: cache,
    npm_config_registry: registry.url,
    npm_config_update_notifier: "false",
    ...bridgeEnv,
  });
  const fresh = () => {
    const dir = mkdtempSync(join(WORK, "cold-"));
    mkdirSync(join(dir, "home"));
    return { home: join(dir, "home"), cache: join(dir, "cache"), dir };
  };

  // Cold: a new HOME and npm cache each time, as on a machine that never ran it.
  const cold: number[] = [];
  for (let i = 0; i < COLD_RUNS; i++) {
    const f = fresh();
    cold.push(await initialize("npx", ["-y", SPEC], npxEnv(f.home, f.cache)));
    if (i < COLD_RUNS - 1) rmSync(f.dir, { recursive: true, force: true });
  }
  // Warm: the last cold run's cache, now holding the package.
  const last = readdirSync(WORK)
    .filter((d) => d.startsWith("cold-"))
    .map((d) => join(WORK, d))[0] as string;
  const env = npxEnv(join(last, "home"), join(last, "cache"));
  const [npxDir] = readdirSync(join(last, "cache/_npx"));
  const modules = join(last, "cache/_npx", npxDir as string, "node_modules");
  const binary = join(modules, "@mcp-code-exec/linux-x64/bin/mcp-code-exec");
  const launcher = join(modules, "mcp-code-exec/bin/mcp-code-exec.js");

  const direct: number[] = [];
  const viaLauncher: number[] = [];
  const warm: number[] = [];
  const offline: number[] = [];
  // Interleaved, so load from other work on the machine falls on all three alike.
  for (let i = 0; i < RUNS; i++) {
    direct.push(await initialize(binary, [], env));
    viaLauncher.push(await initialize("node", [launcher], env));
    warm.push(await initialize("npx", ["-y", SPEC], env));
    offline.push(await initialize("npx", ["-y", "--prefer-offline", SPEC], env));
  }

  console.log(`spawn to MCP initialize answer, ${SPEC}, prewarm off:`);
  console.log(`  direct binary (floor)      ${fmt(direct)}`);
  console.log(
    `  node launcher              ${fmt(viaLauncher)}  (+${(median(viaLauncher) - median(direct)).toFixed(0)} ms over the floor)`,
  );
  console.log(`  npx, warm cache            ${fmt(warm)}  (+${(median(warm) - median(direct)).toFixed(0)} ms)`);
  console.log(`  npx --prefer-offline, warm ${fmt(offline)}  (+${(median(offline) - median(direct)).toFixed(0)} ms)`);
  console.log(`  npx, empty HOME and cache  ${fmt(cold)}  (+${(median(cold) - median(direct)).toFixed(0)} ms; registry on loopback)`);
} finally {
  await registry.stop();
  rmSync(WORK, { recursive: true, force: true });
}
process.exit(0);
