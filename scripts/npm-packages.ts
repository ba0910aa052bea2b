#!/usr/bin/env bun
/**
 * Turn a release build into npm packages, the way esbuild and biome ship native binaries:
 *   bun scripts/npm-packages.ts [--release dist/release] [--out dist/npm] [--targets linux-x64,...] [--publish]
 * writes one folder per platform, @mcp-code-exec/<platform> (package.json with `os`/`cpu`, and
 * bin/mcp-code-exec, checked against the release's SHA256SUMS), and the launcher `mcp-code-exec` (a
 * Node script in `bin` that runs the platform binary npm picked from its optionalDependencies).
 * Each tarball holds only what runs (the launcher also carries its README, the npm page).
 * --publish then runs `npm publish` on each folder, platform packages first, so the launcher never
 * points at a missing version; npm's own settings (registry, auth) apply as usual.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import {
  MCP_NAME,
  NPM_PACKAGE,
  NPM_SCOPE,
  parseSums,
  PLATFORMS,
  REPOSITORY,
  sha256File,
  SHORT_DESCRIPTION,
  VERSION,
  type Platform,
} from "./release-meta.ts";

const root = resolve(import.meta.dir, "..");
const LAUNCHER_SOURCE = join(root, "packaging/npm/launcher.js");
const LAUNCHER_README = join(root, "packaging/npm/README.md");

const common = (version: string) => ({
  version,
  license: "MIT",
  homepage: REPOSITORY,
  repository: { type: "git", url: `git+${REPOSITORY}.git` },
});

/** package.json of @mcp-code-exec/<platform>: npm installs it only where `os`, `cpu` (and `libc`) match. */
export function platformManifest(platform: Platform, version = VERSION): Record<string, unknown> {
  const p = PLATFORMS.find((x) => x.platform === platform);
  if (!p) throw new Error(`unknown platform "${platform}": use ${PLATFORMS.map((x) => x.platform).join(", ")}`);
  return {
    name: `${NPM_SCOPE}/${platform}`,
    ...common(version),
    description: `The ${platform} binary of ${NPM_PACKAGE}; install ${NPM_PACKAGE}, which picks it for you.`,
    os: [p.os],
    cpu: [p.cpu],
    // The Linux binaries need glibc; npm, pnpm and yarn skip them on musl, and the launcher says why.
    ...(p.os === "linux" ? { libc: ["glibc"] } : {}),
    files: ["bin/mcp-code-exec"],
    preferUnplugged: true,
  };
}

/** package.json of the launcher, with every platform package pinned to the same version. */
export function launcherManifest(platforms: readonly Platform[], version = VERSION): Record<string, unknown> {
  return {
    name: NPM_PACKAGE,
    ...common(version),
    description: SHORT_DESCRIPTION,
    keywords: ["mcp", "model-context-protocol", "mcp-server", "python", "sandbox", "code-execution"],
    // The MCP Registry checks that this package belongs to the server named in server.json.
    mcpName: MCP_NAME,
    bin: { [NPM_PACKAGE]: "bin/mcp-code-exec.js" },
    files: ["bin/mcp-code-exec.js"],
    engines: { node: ">=18" },
    optionalDependencies: Object.fromEntries(platforms.map((p) => [`${NPM_SCOPE}/${p}`, version])),
  };
}

/** Folder names under `out`, platform packages first: the order to publish in. */
export function writePackages(opts: { release: string; out: string; platforms: readonly Platform[]; version?: string }): string[] {
  const version = opts.version ?? VERSION;
  const sumsFile = join(opts.release, "SHA256SUMS");
  if (!existsSync(sumsFile)) throw new Error(`${sumsFile} is missing: build the release first with \`bun run build:release\``);
  const sums = parseSums(readFileSync(sumsFile, "utf8"));
  rmSync(opts.out, { recursive: true, force: true });
  const dirs: string[] = [];
  for (const platform of opts.platforms) {
    const file = `mcp-code-exec-${platform}`;
    const binary = join(opts.release, file);
    const want = sums.get(file);
    if (!want || !existsSync(binary))
      throw new Error(`${binary} is not in the release (or not in its SHA256SUMS): build it with \`bun run build:release\``);
    const got = sha256File(binary);
    if (got !== want) throw new Error(`${binary} has sha256 ${got}, but SHA256SUMS says ${want}: rebuild the release`);
    const dir = join(opts.out, platform);
    mkdirSync(join(dir, "bin"), { recursive: true });
    copyFileSync(binary, join(dir, "bin/mcp-code-exec"));
    chmodSync(join(dir, "bin/mcp-code-exec"), 0o755);
    writeFileSync(join(dir, "package.json"), `${JSON.stringify(platformManifest(platform, version), null, 2)}\n`);
    dirs.push(dir);
  }
  const launcher = join(opts.out, NPM_PACKAGE);
  mkdirSync(join(launcher, "bin"), { recursive: true });
  copyFileSync(LAUNCHER_SOURCE, join(launcher, "bin/mcp-code-exec.js"));
  chmodSync(join(launcher, "bin/mcp-code-exec.js"), 0o755);
  copyFileSync(LAUNCHER_README, join(launcher, "README.md"));
  writeFileSync(join(launcher, "package.json"), `${JSON.stringify(launcherManifest(opts.platforms, version), null, 2)}\n`);
  dirs.push(launcher);
  return dirs;
}

/** `npm publish` each folder in order; stops at the first failure. */
async function publish(dirs: string[]): Promise<number> {
  for (const dir of dirs) {
    const p = Bun.spawn(["npm", "publish", dir, "--access", "public"], { stdout: "inherit", stderr: "inherit" });
    const code = await p.exited;
    if (code !== 0) {
      console.error(`npm publish ${dir} failed (exit ${code}); the packages before it are published, the rest are not`);
      return code;
    }
  }
  return 0;
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      release: { type: "string", default: "dist/release" },
      out: { type: "string", default: "dist/npm" },
      targets: { type: "string", default: PLATFORMS.map((p) => p.platform).join(",") },
      version: { type: "string" },
      publish: { type: "boolean", default: false },
    },
  });
  try {
    const platforms = values.targets
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean) as Platform[];
    for (const p of platforms) platformManifest(p);
    const dirs = writePackages({
      release: resolve(root, values.release),
      out: resolve(root, values.out),
      platforms,
      version: values.version,
    });
    for (const d of dirs) console.log(`wrote ${d}`);
    if (values.publish) process.exit(await publish(dirs));
  } catch (err) {
    console.error(`npm-packages: ${(err as Error).message}`);
    process.exit(1);
  }
}
