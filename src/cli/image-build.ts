/**
 * `mcp-code-exec image build` and `image fetch DIR`: the sandbox image from its recipe (image/ in the
 * repository: pinned Debian packages and wheels), through scripts/build-image.sh. The script and the
 * recipe are embedded, so the binary needs nothing beside it: they are written to a temporary folder
 * in the layout the script expects and run with bash (Linux, root, debootstrap).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_IMAGE } from "../config/env.ts";
import { BridgeError } from "../errors.ts";
import { spawnChild, which } from "../host/process.ts";
import BUILD_IMAGE_SH from "../../scripts/build-image.sh" with { type: "text" };
import IMAGE_SOURCES_SH from "../../scripts/image-sources.sh" with { type: "text" };
import RECIPE_SH from "../../image/recipe.sh" with { type: "text" };
import DEBIAN_LOCK from "../../image/debian.lock" with { type: "text" };
import WHEELS_LOCK from "../../image/wheels.lock" with { type: "text" };
import TOP40 from "../../image/python-top40.json" with { type: "text" };
import MANIFEST_PY from "../../image/manifest.py" with { type: "text" };
import CHECK_PY from "../../image/check.py" with { type: "text" };

/** The slim variant of an image name: the same repository, the tag with `-slim`. */
export const slimName = (image: string) => `${image}-slim`;

export interface BuildOptions {
  engine?: string;
  /** batteries (default) or slim. */
  variant?: string;
  tag?: string;
  force?: boolean;
  offline?: boolean;
  mirror?: string;
  wheelhouse?: string;
  /** Push the built image to this reference. */
  push?: string;
  debianUnlocked?: boolean;
}

const say = (s: string) => process.stdout.write(`${s}\n`);

/** The files of scripts/ and image/ the build script reads, written where it looks for them. */
function writeRecipe(dir: string): string {
  mkdirSync(join(dir, "scripts"));
  mkdirSync(join(dir, "image"));
  const files: Array<[string, string, number]> = [
    ["scripts/build-image.sh", BUILD_IMAGE_SH, 0o700],
    ["scripts/image-sources.sh", IMAGE_SOURCES_SH, 0o600],
    ["image/recipe.sh", RECIPE_SH, 0o600],
    ["image/debian.lock", DEBIAN_LOCK, 0o600],
    ["image/wheels.lock", WHEELS_LOCK, 0o600],
    ["image/python-top40.json", TOP40 as unknown as string, 0o600],
    ["image/manifest.py", MANIFEST_PY, 0o600],
    ["image/check.py", CHECK_PY, 0o600],
  ];
  for (const [name, text, mode] of files) writeFileSync(join(dir, name), text, { mode });
  return join(dir, "scripts", "build-image.sh");
}

async function runScript(args: string[], env: Record<string, string>, what: string): Promise<void> {
  if (process.platform !== "linux") {
    throw new BridgeError("INVALID_INPUT", `${what} needs Linux (debootstrap and chroot)`, {
      hint: "build on a Linux machine and move the image with `image save` / `image load`",
    });
  }
  const bash = which("bash", process.env.PATH ?? "");
  if (!bash)
    throw new BridgeError("INVALID_INPUT", "bash not found on PATH", {
      hint: "install bash; image build runs the embedded build script with it",
    });
  const dir = mkdtempSync(join(tmpdir(), "mcp-code-exec-build-"));
  try {
    const code = await streamed(bash, [writeRecipe(dir), ...args], env);
    if (code !== 0) {
      throw new BridgeError("ENGINE_FAILED", `${what} failed (build script exited ${code ?? "by signal"})`, {
        source: "image build",
        hint: "see the lines above; it needs root, debootstrap and curl, and a Debian mirror and PyPI (or --offline with --mirror and --wheelhouse)",
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function scriptEnv(image?: string): Record<string, string> {
  const env = { ...process.env, ...(image ? { MCP_BRIDGE_OFFLINE_IMAGE: image } : {}) };
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

/** `image build`: the batteries image (or --variant slim), named after this release unless --tag says otherwise. */
export async function imageBuild(opts: BuildOptions): Promise<number> {
  const variant = opts.variant ?? "batteries";
  if (variant !== "batteries" && variant !== "slim")
    throw new BridgeError("INVALID_INPUT", `unknown variant "${variant}"`, { hint: "--variant batteries (the default) or --variant slim" });
  const named = process.env.MCP_BRIDGE_OFFLINE_IMAGE || DEFAULT_IMAGE;
  const image = opts.tag ?? (variant === "slim" ? slimName(named) : named);
  const engine = opts.engine ?? process.env.MCP_BRIDGE_RUNTIME;
  const args = [
    "--tag",
    image,
    "--variant",
    variant,
    ...(engine && engine !== "auto" ? ["--engines", engine] : []),
    ...(opts.mirror ? ["--mirror", opts.mirror] : []),
    ...(opts.wheelhouse ? ["--wheelhouse", opts.wheelhouse] : []),
    ...(opts.offline ? ["--offline"] : []),
    ...(opts.force ? ["--force"] : []),
    ...(opts.push ? ["--push", opts.push] : []),
    ...(opts.debianUnlocked ? ["--debian-unlocked"] : []),
  ];
  await runScript(args, scriptEnv(image), `building ${image}`);
  const where = `built ${image}${engine && engine !== "auto" ? ` in ${engine}` : ""}`;
  say(image === DEFAULT_IMAGE ? `${where}: the bridge's default image, nothing to set` : `${where}; use it with MCP_BRIDGE_IMAGE=${image}`);
  return 0;
}

/** `image fetch DIR`: every pinned .deb and wheel into DIR, for `image build --offline` on a machine without a network. */
export async function imageFetch(dir: string, opts: { mirror?: string }): Promise<number> {
  await runScript(["--fetch", dir, ...(opts.mirror ? ["--mirror", opts.mirror] : [])], scriptEnv(), `fetching into ${dir}`);
  return 0;
}

/** Run a command whose progress a person wants to see: its output goes to our stderr as it comes. */
export async function streamed(command: string, args: string[], env: Record<string, string>): Promise<number | null> {
  const child = spawnChild(command, args, { env });
  child.closeStdin();
  const pump = async (s: ReadableStream<Uint8Array>) => {
    for await (const chunk of s) process.stderr.write(chunk);
  };
  const [, , code] = await Promise.all([pump(child.stdout), pump(child.stderr), child.exited]);
  return code;
}
