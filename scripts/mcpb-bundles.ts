#!/usr/bin/env bun
/**
 * MCP Bundles (.mcpb) for Claude Desktop, one per platform, from a release build:
 *   bun scripts/mcpb-bundles.ts [--release dist/release] [--targets darwin-arm64,...]
 * Each bundle holds manifest.json and server/mcp-code-exec (the release binary, checked against
 * SHA256SUMS); the manifest is validated and the bundle packed by the `mcpb` CLI (@anthropic-ai/mcpb, a
 * devDependency), written as mcp-code-exec-<platform>.mcpb beside the binaries, and its sha256 added to
 * SHA256SUMS (server.json needs it for the MCP Registry). A manifest's `platforms` names an OS, not a
 * CPU: Claude Desktop offers the bundle for that OS, so the download page says which CPU each is for.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_IMAGE } from "../src/config/env.ts";
import { RUN_PYTHON_DESCRIPTION, TOOL_NAME } from "../src/server/handshake.ts";
import { parseSums, PLATFORMS, REPOSITORY, sha256File, SHORT_DESCRIPTION, VERSION, type Platform } from "./release-meta.ts";

const root = resolve(import.meta.dir, "..");
const MCPB = join(root, "node_modules/.bin/mcpb");
/** The sandbox image a bundle starts with (the bridge's own default); the user can change it in Claude Desktop's settings. */
export { DEFAULT_IMAGE };

/** manifest.json of the bundle for one platform (MCPB manifest 0.3: a binary server). */
export function mcpbManifest(platform: Platform, version = VERSION): Record<string, unknown> {
  const p = PLATFORMS.find((x) => x.platform === platform);
  if (!p) throw new Error(`unknown platform "${platform}": use ${PLATFORMS.map((x) => x.platform).join(", ")}`);
  const cpu = { x64: p.os === "darwin" ? "Intel" : "x86_64", arm64: p.os === "darwin" ? "Apple silicon" : "arm64" }[p.cpu];
  return {
    manifest_version: "0.3",
    name: "mcp-code-exec",
    display_name: "Code Exec (run_python)",
    version,
    description: SHORT_DESCRIPTION,
    long_description:
      `For ${p.os === "darwin" ? "macOS" : "Linux"} on ${cpu}. The model's Python runs in a hardened, long-lived container ` +
      "(podman or docker must be installed and running) and can call the tools of your other MCP servers from code. " +
      `The first call pulls the sandbox image (Python 3.13 with numpy, pandas, matplotlib, scikit-learn and 36 more packages) if the engine lacks it; or set another image below. Documentation: ${REPOSITORY}`,
    author: { name: "mcp-code-exec contributors", url: REPOSITORY },
    repository: { type: "git", url: REPOSITORY },
    homepage: REPOSITORY,
    documentation: `${REPOSITORY}#readme`,
    support: `${REPOSITORY}/issues`,
    license: "MIT",
    keywords: ["python", "sandbox", "code execution", "containers", "mcp"],
    server: {
      type: "binary",
      entry_point: "server/mcp-code-exec",
      mcp_config: {
        command: "${__dirname}/server/mcp-code-exec",
        args: [],
        env: { MCP_BRIDGE_IMAGE: "${user_config.image}" },
      },
    },
    tools: [{ name: TOOL_NAME, description: RUN_PYTHON_DESCRIPTION }],
    compatibility: { platforms: [p.os] },
    user_config: {
      image: {
        type: "string",
        title: "Sandbox image",
        description: "Container image the Python code runs in (pulled at the first call when podman or docker lacks it).",
        default: DEFAULT_IMAGE,
        required: false,
      },
    },
  };
}

async function mcpb(args: string[]): Promise<{ code: number; out: string }> {
  const p = Bun.spawn([MCPB, ...args], { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out: `${out}${err}` };
}

/** Validate and pack one bundle per platform into `release`; returns the files written. */
export async function writeBundles(opts: { release: string; platforms: readonly Platform[]; version?: string }): Promise<string[]> {
  const sumsFile = join(opts.release, "SHA256SUMS");
  if (!existsSync(sumsFile)) throw new Error(`${sumsFile} is missing: build the release first with \`bun run build:release\``);
  const sums = parseSums(readFileSync(sumsFile, "utf8"));
  const written: string[] = [];
  for (const platform of opts.platforms) {
    const file = `mcp-code-exec-${platform}`;
    const binary = join(opts.release, file);
    if (!existsSync(binary) || sha256File(binary) !== sums.get(file))
      throw new Error(`${binary} is missing or does not match SHA256SUMS: rebuild with \`bun run build:release\``);
    const dir = mkdtempSync(join(tmpdir(), `mcp-code-exec-mcpb-${platform}-`));
    try {
      mkdirSync(join(dir, "server"));
      copyFileSync(binary, join(dir, "server/mcp-code-exec"));
      chmodSync(join(dir, "server/mcp-code-exec"), 0o755);
      writeFileSync(join(dir, "manifest.json"), `${JSON.stringify(mcpbManifest(platform, opts.version), null, 2)}\n`);
      const valid = await mcpb(["validate", join(dir, "manifest.json")]);
      if (valid.code !== 0) throw new Error(`mcpb validate refused the ${platform} manifest:\n${valid.out}`);
      const out = join(opts.release, `${file}.mcpb`);
      const packed = await mcpb(["pack", dir, out]);
      if (packed.code !== 0 || !existsSync(out)) throw new Error(`mcpb pack failed for ${platform}:\n${packed.out}`);
      sums.set(`${file}.mcpb`, sha256File(out));
      written.push(out);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  writeFileSync(sumsFile, [...sums].map(([f, s]) => `${s}  ${f}\n`).join(""));
  return written;
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      release: { type: "string", default: "dist/release" },
      targets: { type: "string", default: PLATFORMS.map((p) => p.platform).join(",") },
    },
  });
  try {
    const platforms = values.targets
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean) as Platform[];
    for (const p of platforms) mcpbManifest(p);
    for (const f of await writeBundles({ release: resolve(root, values.release), platforms })) console.log(`packed ${f}`);
  } catch (err) {
    console.error(`mcpb-bundles: ${(err as Error).message}`);
    process.exit(1);
  }
}
