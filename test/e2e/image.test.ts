/**
 * `mcp-code-exec image ...` with the compiled binary on real engines. Only scratch tags of the sandbox
 * image are saved, removed and loaded (the real tag is never touched): a file saved by each engine is
 * loaded into every engine, then the bridge runs code in the loaded image. `image build` from the
 * cached root filesystem, the recipe's cache keys, and what happens when a mirror is not there.
 * image-offline.test.ts builds without a network from a folder `image fetch` filled.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY } from "../support/binary.ts";
import { bridgeEnv, ENGINES, IMAGE } from "../support/env.ts";
import { recipeDigest } from "../support/recipe.ts";
import { run } from "../support/run.ts";

const DIR = mkdtempSync(join(tmpdir(), "mcp-code-exec-image-"));
const SCRATCH = "mcp-code-exec-sandbox:savetest";
const BUILT = "mcp-code-exec-sandbox:buildtest";
const STANDIN = "mcp-code-exec-sandbox:recipetest";
const RECIPE = recipeDigest("batteries");
const cli = (args: string[], env: Record<string, string> = {}) => run([BINARY, "image", ...args], { cwd: DIR, env: bridgeEnv(env) });
const engine = (e: string, args: string[]) => run([e, ...args], { env: bridgeEnv() });
const exists = async (e: string, image: string) => (await engine(e, ["image", "inspect", image])).code === 0;
/** Remove a scratch tag; docker may also hold the localhost/ name a podman archive carries. */
async function untag(e: string, image: string) {
  for (const name of [image, `localhost/${image}`]) if (await exists(e, name)) await engine(e, ["rmi", name]);
}

afterAll(async () => {
  for (const e of ENGINES) for (const image of [SCRATCH, BUILT, STANDIN]) await untag(e, image);
  rmSync(DIR, { recursive: true, force: true });
});

describe("image save / load", () => {
  for (const from of ENGINES) {
    test(`a file saved by ${from} loads into ${ENGINES.join(" and ")} and the bridge runs in it`, async () => {
      expect(await exists(from, IMAGE)).toBe(true);
      expect((await engine(from, ["tag", IMAGE, SCRATCH])).code).toBe(0);
      const file = join(DIR, `${from}.tar`);
      const saved = await cli(["save", file, "--engine", from, "--image", SCRATCH]);
      expect(saved.stderr).toBe("");
      expect(saved.stdout).toStartWith(`saved ${SCRATCH} from ${from} to ${file} (`);
      expect(statSync(file).size).toBeGreaterThan(1024 * 1024);

      for (const to of ENGINES) {
        await untag(to, SCRATCH);
        expect(await exists(to, SCRATCH)).toBe(false);
        const loaded = await cli(["load", file, "--engine", to], { MCP_BRIDGE_IMAGE: SCRATCH });
        expect(loaded.stderr).toBe("");
        expect(loaded.stdout).toContain(`loaded ${file} into ${to}`);
        expect(loaded.stdout).toContain(`ready: the bridge will use ${SCRATCH}`);
        expect(await exists(to, SCRATCH)).toBe(true);
        const r = await run([BINARY, "exec", "-c", "import sys; print(sys.version_info[:2])"], {
          cwd: DIR,
          env: bridgeEnv({ MCP_BRIDGE_RUNTIME: to, MCP_BRIDGE_IMAGE: SCRATCH }),
        });
        expect(r.stdout).toBe("(3, 13)\n");
      }
      expect(await exists(from, IMAGE)).toBe(true);
    }, 600_000);
  }

  test("clear refusals: missing file, missing image, existing file, no file name, unknown action", async () => {
    const e = ENGINES[0] as string;
    const noFile = await cli(["load", join(DIR, "nope.tar"), "--engine", e]);
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toContain(`no such file: ${join(DIR, "nope.tar")}: pass the file written by \`mcp-code-exec image save\``);
    const noImage = await cli(["save", join(DIR, "x.tar"), "--engine", e, "--image", "mcp-code-exec-sandbox:no-such-tag"]);
    expect(noImage.code).toBe(1);
    expect(noImage.stderr).toContain(
      `[${e}] image mcp-code-exec-sandbox:no-such-tag is not in ${e}, so there is nothing to save: pull it (\`mcp-code-exec image pull\`), build it`,
    );
    expect(existsSync(join(DIR, "x.tar"))).toBe(false);
    writeFileSync(join(DIR, "taken.tar"), "x");
    const taken = await cli(["save", join(DIR, "taken.tar"), "--engine", e, "--image", IMAGE]);
    expect(taken.code).toBe(2);
    expect(taken.stderr).toContain("already exists: choose another file name, or pass --force to overwrite it");
    expect((await cli(["save"])).stderr).toContain("image save needs a file name: mcp-code-exec image save FILE.tar");
    expect((await cli(["frob"])).stderr).toContain(
      'unknown image action "frob": use save FILE, load FILE, pull, build (--offline, --variant slim) or fetch DIR',
    );
    expect((await cli(["fetch"])).stderr).toContain("image fetch needs a folder: mcp-code-exec image fetch DIR");
  });

  test("pull failure says what to do without a network", async () => {
    const r = await cli(["pull", "--engine", ENGINES[0] as string, "--image", "Not A Valid//Reference"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      "with no registry use `mcp-code-exec image build` (--offline: from a local Debian mirror and wheelhouse) or `image load FILE`",
    );
  });
});

describe("image build (the embedded scripts/build-image.sh)", () => {
  const e = ENGINES[0] as string;
  test(`builds a scratch tag in ${e} from the cached root filesystem (the one scripts/setup.sh built)`, async () => {
    await untag(e, BUILT);
    const r = await cli(["build", "--engine", e, "--tag", BUILT]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`[image] importing into ${e} as ${BUILT}`);
    expect(r.stderr).not.toContain("debootstrap");
    expect(r.stdout).toBe(`built ${BUILT} in ${e}; use it with MCP_BRIDGE_IMAGE=${BUILT}\n`);
    const run1 = await run([BINARY, "exec", "-c", "import pandas, sklearn; int(pandas.Series([41]).iloc[0]) + 1"], {
      cwd: DIR,
      env: bridgeEnv({ MCP_BRIDGE_RUNTIME: e, MCP_BRIDGE_IMAGE: BUILT }),
    });
    expect(run1.stdout).toBe("[value] 42\n");
  }, 600_000);

  test("--mirror reaches debootstrap; an unreachable mirror fails with what to check", async () => {
    const cache = mkdtempSync(join(DIR, "cache-"));
    const r = await cli(["build", "--engine", e, "--tag", "mcp-code-exec-sandbox:mirrortest", "--mirror", "http://127.0.0.1:9/debian"], {
      MCP_BRIDGE_IMAGE_CACHE: cache,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("[image] Debian trixie from http://127.0.0.1:9/debian");
    expect(r.stderr).toContain("building mcp-code-exec-sandbox:mirrortest failed (build script exited 1): see the lines above");
    expect(await exists(e, "mcp-code-exec-sandbox:mirrortest")).toBe(false);
  }, 600_000);

  test("--offline with neither a mirror nor the packages in the cache says where they come from", async () => {
    const cache = mkdtempSync(join(DIR, "offline-cache-"));
    const r = await cli(["build", "--offline", "--variant", "slim", "--engine", e, "--tag", "mcp-code-exec-sandbox:nothing"], {
      MCP_BRIDGE_IMAGE_CACHE: cache,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      "--offline needs a Debian mirror: --mirror URL (a local mirror, or file://DIR/debian from `mcp-code-exec image fetch DIR`",
    );
  });

  test("the cache is keyed by the recipe: another recipe's image is replaced, the current one kept, another recipe's tarball never reused (tiny stand-in rootfs)", async () => {
    const cache = mkdtempSync(join(DIR, "recipe-cache-"));
    const tree = mkdtempSync(join(DIR, "tree-"));
    mkdirSync(join(tree, "etc"));
    writeFileSync(join(tree, "etc", "stand-in"), "not a real root filesystem\n");
    const tarball = join(cache, `sandbox-batteries-${RECIPE}.tar`);
    expect((await run(["tar", "-C", tree, "-cf", tarball, "."])).code).toBe(0);
    const label = async () =>
      (
        await engine(e, ["image", "inspect", "--format", '{{ index .Config.Labels "io.github.mcp-code-exec.recipe" }}', STANDIN])
      ).stdout.trim();
    const id = async () => (await engine(e, ["image", "inspect", "--format", "{{.Id}}", STANDIN])).stdout.trim();
    const build = (tag: string, extra: string[] = []) =>
      cli(["build", "--engine", e, "--tag", tag, ...extra], { MCP_BRIDGE_IMAGE_CACHE: cache });

    await untag(e, STANDIN);
    expect((await engine(e, ["import", tarball, STANDIN])).code).toBe(0);
    const stale = await id();
    expect(await label()).toBe("");
    const replaced = await build(STANDIN);
    expect(replaced.code).toBe(0);
    expect(replaced.stderr).toContain(`[image] ${e} has ${STANDIN} from another recipe (none); rebuilding for ${RECIPE}`);
    expect(replaced.stderr).toContain(`[image] importing into ${e} as ${STANDIN}`);
    expect(replaced.stderr).not.toContain("debootstrap");
    // Another name than the default image's: the bridge uses it only when told to.
    expect(replaced.stdout).toBe(`built ${STANDIN} in ${e}; use it with MCP_BRIDGE_IMAGE=${STANDIN}\n`);
    expect(await label()).toBe(RECIPE);
    expect((await engine(e, ["image", "inspect", stale])).code).not.toBe(0);

    const kept = await build(STANDIN);
    expect(kept.code).toBe(0);
    expect(kept.stderr).toContain(`[image] ${STANDIN} (recipe ${RECIPE}) present in: ${e}`);
    expect(kept.stderr).not.toContain("importing");

    // A machine that holds only an older recipe's tarball builds afresh (here: from a mirror that is not there).
    rmSync(tarball);
    writeFileSync(join(cache, "sandbox-batteries-0123456789abcdef.tar"), "an older recipe's tarball");
    await untag(e, STANDIN);
    const rebuilt = await build(STANDIN, ["--mirror", "http://127.0.0.1:9/debian"]);
    expect(rebuilt.code).toBe(1);
    expect(rebuilt.stderr).toContain("[image] Debian trixie from http://127.0.0.1:9/debian");
    expect(await exists(e, STANDIN)).toBe(false);
  }, 600_000);
});
