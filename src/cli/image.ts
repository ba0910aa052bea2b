/**
 * `mcp-code-exec image save|load|pull|build|fetch`: get a sandbox image onto a machine, including one
 * with no network. save/load move an image as a file through the selected engine (`save -o`,
 * `load -i`); build and fetch run the embedded scripts/build-image.sh (image-build.ts).
 */
import { existsSync, rmSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, resolve } from "node:path";
import { loadConfig } from "../config/env.ts";
import { BridgeError } from "../errors.ts";
import { runCommand } from "../host/process.ts";
import { engineEnv, selectEngine, type Selected } from "../engines/registry.ts";
import { imageBuild, imageFetch, streamed, type BuildOptions } from "./image-build.ts";

export interface ImageOptions {
  /** podman or docker; default MCP_BRIDGE_RUNTIME, then auto. */
  engine?: string;
  /** Image to save or pull; default MCP_BRIDGE_IMAGE. */
  image?: string;
}

const say = (s: string) => process.stdout.write(`${s}\n`);

async function context(opts: ImageOptions): Promise<{ selected: Selected; image: string; env: Record<string, string> }> {
  const config = loadConfig(process.env, process.env.HOME || homedir());
  const env = engineEnv(process.env);
  const selected = await selectEngine(opts.engine ?? config.engine, { env });
  return { selected, image: opts.image ?? config.image, env };
}

async function engineRun(c: { selected: Selected; env: Record<string, string> }, args: string[], what: string) {
  const { binary, engine } = c.selected.info;
  const r = await runCommand(binary, args, { env: c.env });
  if (r.exitCode !== 0) {
    throw new BridgeError(
      "ENGINE_FAILED",
      `${what} failed: \`${engine} ${args.join(" ")}\` exited ${r.exitCode ?? "by signal"}: ${r.stderr.trim().slice(0, 800)}`,
      { source: engine },
    );
  }
  return r;
}

const mib = (file: string) => `${(statSync(file).size / 1024 / 1024).toFixed(1)} MiB`;

/** `image save FILE`: write the image to a tar file another machine can `image load`. */
export async function imageSave(file: string, opts: ImageOptions & { force?: boolean }): Promise<number> {
  const out = resolve(file);
  if (existsSync(out) && !opts.force)
    throw new BridgeError("INVALID_INPUT", `${out} already exists`, { hint: "choose another file name, or pass --force to overwrite it" });
  if (!existsSync(dirname(out)))
    throw new BridgeError("INVALID_INPUT", `folder ${dirname(out)} does not exist`, { hint: "create it first, or save somewhere else" });
  const c = await context(opts);
  const { engine } = c.selected.info;
  if (!(await c.selected.adapter.imageExists(c.image))) {
    throw new BridgeError("IMAGE_MISSING", `image ${c.image} is not in ${engine}, so there is nothing to save`, {
      source: engine,
      hint: `pull it (\`mcp-code-exec image pull\`), build it (\`mcp-code-exec image build\`), or name another with --image`,
    });
  }
  if (existsSync(out)) rmSync(out);
  await engineRun(c, ["save", "-o", out, c.image], "saving the image");
  say(`saved ${c.image} from ${engine} to ${out} (${mib(out)})`);
  say(`on the other machine: mcp-code-exec image load ${out.split("/").pop()}`);
  return 0;
}

/** `image load FILE`: import a file written by `image save` (or `podman/docker save`). */
export async function imageLoad(file: string, opts: ImageOptions): Promise<number> {
  const input = resolve(file);
  if (!existsSync(input))
    throw new BridgeError("INVALID_INPUT", `no such file: ${input}`, { hint: "pass the file written by `mcp-code-exec image save`" });
  const c = await context(opts);
  const { engine, binary } = c.selected.info;
  const r = await engineRun(c, ["load", "-i", input], "loading the image");
  const loaded = [...`${r.stdout}\n${r.stderr}`.matchAll(/Loaded image(?:\(s\))?: *(.+)/g)].flatMap((m) =>
    (m[1] as string).split(",").map((s) => s.trim()),
  );
  // Podman stores local images as localhost/NAME and saves them so; docker would keep that prefix and
  // not find NAME. Give docker the short name too.
  for (const name of loaded) {
    const short = name.replace(/^localhost\//, "");
    if (engine === "docker" && short !== name) {
      await engineRun(c, ["tag", name, short], "tagging the loaded image");
      loaded.push(short);
    }
  }
  say(`loaded ${input} into ${engine} (${binary}): ${loaded.length ? loaded.join(", ") : "see the engine's output below"}`);
  if (!loaded.length) say(r.stdout.trim());
  const wanted = c.image;
  if (!(await c.selected.adapter.imageExists(wanted))) {
    say(`MCP_BRIDGE_IMAGE is ${wanted}, which ${engine} still does not have: set MCP_BRIDGE_IMAGE to the loaded image in your MCP config`);
  } else say(`ready: the bridge will use ${wanted}`);
  return 0;
}

/** `image pull`: fetch MCP_BRIDGE_IMAGE (or --image) from its registry, for machines that are online. */
export async function imagePull(opts: ImageOptions): Promise<number> {
  const c = await context(opts);
  const { engine, binary } = c.selected.info;
  const code = await streamed(binary, ["pull", c.image], c.env);
  if (code !== 0) {
    throw new BridgeError("ENGINE_FAILED", `\`${engine} pull ${c.image}\` exited ${code ?? "by signal"}`, {
      source: engine,
      hint: "check the image name and the network; with no registry use `mcp-code-exec image build` (--offline: from a local Debian mirror and wheelhouse) or `image load FILE`",
    });
  }
  say(`pulled ${c.image} into ${engine}`);
  return 0;
}

/** `image <action> [file]` from the command line. */
export async function image(
  action: string,
  file: string | undefined,
  opts: ImageOptions & BuildOptions & { force?: boolean },
): Promise<number> {
  const needFile = (verb: string, what = "a file name", example = "FILE.tar"): string => {
    if (!file) throw new BridgeError("INVALID_INPUT", `image ${verb} needs ${what}`, { hint: `mcp-code-exec image ${verb} ${example}` });
    return file;
  };
  switch (action) {
    case "save":
      return imageSave(needFile("save"), opts);
    case "load":
      return imageLoad(needFile("load"), opts);
    case "pull":
      return imagePull(opts);
    case "build":
      return imageBuild(opts);
    case "fetch":
      return imageFetch(resolve(needFile("fetch", "a folder", "DIR")), opts);
    default:
      throw new BridgeError("INVALID_INPUT", `unknown image action "${action}"`, {
        hint: "use save FILE, load FILE, pull, build (--offline, --variant slim) or fetch DIR",
      });
  }
}
