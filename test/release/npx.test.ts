/**
 * `npx -y mcp-code-exec` for real: a release build is turned into npm packages by
 * scripts/npm-packages.ts, published to a local verdaccio on loopback, and run from an empty HOME and
 * npm cache with only Node, npm and docker on PATH (no Bun): --version, a run_python call from the MCP
 * SDK client through the npx-launched server, the npx form of `config snippet`, SIGTERM through npx,
 * and an install that left the platform package out.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { IMAGE, ROOT } from "../support/env.ts";
import { startRegistry, type LocalRegistry } from "../support/npm-registry.ts";
import { run } from "../support/run.ts";

const WORK = mkdtempSync(join(tmpdir(), "mcp-code-exec-npx-"));
const RELEASE = join(WORK, "release");
const PACKAGES = join(WORK, "npm");
const BIN = join(WORK, "bin");
const HOME = join(WORK, "home");
const CACHE = join(WORK, "npm-cache");
const STATE = join(WORK, "state");
const PLATFORMS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"];
const SPEC = `mcp-code-exec@${pkg.version}`;
let registry: LocalRegistry;

/** What an MCP client on a machine with Node and no Bun would pass: nothing from this shell. */
function npxEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {
    PATH: BIN,
    HOME,
    npm_config_cache: CACHE,
    npm_config_registry: registry.url,
    npm_config_update_notifier: "false",
    MCP_BRIDGE_RUNTIME: "docker",
    MCP_BRIDGE_IMAGE: IMAGE,
    MCP_BRIDGE_STATE_DIR: STATE,
    MCP_BRIDGE_LOG_LEVEL: "WARNING",
  };
  if (process.env.DOCKER_HOST) env.DOCKER_HOST = process.env.DOCKER_HOST;
  return { ...env, ...extra };
}

/** Pids of processes running a binary from npx's cache under CACHE. */
function bridgePids(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/exe`).startsWith(CACHE)) pids.push(Number(entry));
    } catch {}
  }
  return pids;
}

/** Containers docker runs for the bridge with this pid. */
async function containersOf(pid: number): Promise<string[]> {
  const r = await run(["docker", "ps", "-aq", "--filter", `label=io.mcp-code-exec.owner=${hostname()}:${pid}`]);
  return r.stdout.split("\n").filter(Boolean);
}

/** Poll a condition that has no event to wait on (another process's exit), up to a deadline. */
async function until(what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

beforeAll(async () => {
  for (const d of [BIN, HOME, CACHE, STATE]) mkdirSync(d, { recursive: true });
  for (const tool of ["node", "npm", "npx", "sh", "docker"]) {
    const found = Bun.which(tool);
    if (!found) throw new Error(`${tool} is not on PATH: this test needs it`);
    symlinkSync(found, join(BIN, tool));
  }
  const hostEnv = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: WORK };
  const build = await run(["bun", "scripts/build.ts", "--release", "--outdir", RELEASE], { cwd: ROOT, env: hostEnv });
  if (build.code !== 0) throw new Error(`release build failed:\n${build.stderr}`);
  registry = await startRegistry();
  const publish = await run(["bun", "scripts/npm-packages.ts", "--release", RELEASE, "--out", PACKAGES, "--publish"], {
    cwd: ROOT,
    env: { ...hostEnv, npm_config_userconfig: registry.npmrc, npm_config_cache: join(WORK, "publish-cache") },
  });
  if (publish.code !== 0) throw new Error(`publishing failed:\n${publish.stdout}\n${publish.stderr}`);
}, 900_000);

afterAll(async () => {
  for (const pid of bridgePids()) process.kill(pid, "SIGKILL");
  await registry?.stop();
  rmSync(WORK, { recursive: true, force: true });
});

describe("npm packages", () => {
  test("each tarball holds only what runs: a platform binary with os/cpu, or the launcher that pins all four", async () => {
    const list = async (name: string) => {
      const meta = (await (await fetch(`${registry.url}${name.replace("/", "%2f")}`)).json()) as {
        versions: Record<string, Record<string, unknown> & { dist: { tarball: string } }>;
      };
      const manifest = meta.versions[pkg.version];
      if (!manifest) throw new Error(`${name}@${pkg.version} is not in the registry`);
      const tgz = join(WORK, `${name.replace("/", "-")}.tgz`);
      await Bun.write(tgz, await fetch(manifest.dist.tarball));
      const t = await run(["tar", "-tvzf", tgz]);
      rmSync(tgz);
      // "-rwxr-xr-x 0/0 109873328 1985-10-26 08:15 package/bin/mcp-code-exec" → mode and path.
      return {
        manifest,
        files: t.stdout
          .trim()
          .split("\n")
          .map((l) => {
            const f = l.split(/\s+/);
            return `${f[0]} ${f[5]}`;
          })
          .sort(),
      };
    };
    for (const p of PLATFORMS) {
      const { manifest, files } = await list(`@mcp-code-exec/${p}`);
      expect(files).toEqual(["-rw-r--r-- package/package.json", "-rwxr-xr-x package/bin/mcp-code-exec"].sort());
      const [os, cpu] = p.split("-");
      expect(manifest.os).toEqual([os]);
      expect(manifest.cpu).toEqual([cpu]);
      expect(manifest.libc).toEqual(os === "linux" ? ["glibc"] : undefined);
      expect(manifest.bin).toBeUndefined();
    }
    const { manifest, files } = await list("mcp-code-exec");
    expect(files).toEqual(
      ["-rw-r--r-- package/README.md", "-rw-r--r-- package/package.json", "-rwxr-xr-x package/bin/mcp-code-exec.js"].sort(),
    );
    expect(manifest.bin).toEqual({ "mcp-code-exec": "bin/mcp-code-exec.js" });
    expect(manifest.optionalDependencies).toEqual(Object.fromEntries(PLATFORMS.map((p) => [`@mcp-code-exec/${p}`, pkg.version])));
    expect(manifest.dependencies).toBeUndefined();
    expect(manifest.mcpName).toBe("io.github.mcp-code-exec/mcp-code-exec");
  });
});

describe("npx -y mcp-code-exec, Node without Bun", () => {
  test("--version from an empty HOME and npm cache; npm fetched only this machine's platform package", async () => {
    expect(Bun.which("bun", { PATH: BIN })).toBeNull();
    expect(readdirSync(CACHE)).toEqual([]);
    expect(readdirSync(HOME)).toEqual([]);
    const r = await run(["npx", "-y", "mcp-code-exec", "--version"], { cwd: HOME, env: npxEnv() });
    expect(r.stderr).toBe("");
    expect(r.stdout).toStartWith(`mcp-code-exec/${pkg.version} linux-x64 `);
    expect(r.code).toBe(0);
    const [npxDir] = readdirSync(join(CACHE, "_npx"));
    expect(readdirSync(join(CACHE, "_npx", npxDir as string, "node_modules/@mcp-code-exec"))).toEqual(["linux-x64"]);
  });

  test("a run_python call from the MCP SDK client through the npx-launched server (docker)", async () => {
    const transport = new StdioClientTransport({ command: "npx", args: ["-y", SPEC], env: npxEnv(), cwd: HOME, stderr: "pipe" });
    let stderr = "";
    transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    const client = new Client({ name: "npx-test", version: "0.0.0" });
    await client.connect(transport);
    try {
      expect(client.getServerVersion()).toMatchObject({ name: "mcp-code-exec", version: pkg.version });
      const result = (await client.callTool(
        { name: "run_python", arguments: { code: "import numpy\nprint(int(numpy.arange(7).sum()) * 2)" } },
        undefined,
        { timeout: 120_000 },
      )) as CallToolResult;
      expect(stderr).toBe("");
      expect(result.isError).toBeFalsy();
      // What the model sees: the text (structuredContent is off by default, see docs/clients.md).
      expect(result.content).toEqual([{ type: "text", text: "42" }]);
    } finally {
      await client.close();
    }
    await until("the npx-launched bridge to exit after the client closed", () => bridgePids().length === 0);
  });

  test("config snippet run through npx offers the npx form, pinned to this version", async () => {
    const r = await run(["npx", "-y", "mcp-code-exec", "config", "snippet", "--client", "cursor"], { cwd: HOME, env: npxEnv() });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      mcpServers: { "code-exec": { command: "npx", args: ["-y", SPEC], env: { MCP_BRIDGE_IMAGE: IMAGE } } },
    });
  });

  test("SIGTERM to npx, stdin still open: the bridge stops and removes its container", async () => {
    const transport = new StdioClientTransport({ command: "npx", args: ["-y", SPEC], env: npxEnv(), cwd: HOME, stderr: "pipe" });
    const client = new Client({ name: "npx-signal-test", version: "0.0.0" });
    await client.connect(transport);
    const result = (await client.callTool({ name: "run_python", arguments: { code: "print('up')" } }, undefined, {
      timeout: 120_000,
    })) as CallToolResult;
    expect(result.content).toEqual([{ type: "text", text: "up" }]);
    const [bridge] = bridgePids();
    expect(bridge).toBeNumber();
    expect(await containersOf(bridge as number)).toHaveLength(1);
    // Signal npx itself (npm exec), as a client that kills its server does; stdin stays open.
    process.kill(transport.pid as number, "SIGTERM");
    await until("the bridge to exit", () => !bridgePids().includes(bridge as number));
    expect(await containersOf(bridge as number)).toEqual([]);
    await client.close();
  });

  test("installed with --omit=optional: the launcher names the missing package and what to do", async () => {
    const project = join(WORK, "project");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), '{ "name": "p", "version": "1.0.0", "private": true }\n');
    const install = await run(["npm", "install", "--omit=optional", SPEC], { cwd: project, env: npxEnv() });
    expect(install.code).toBe(0);
    const r = await run([join(project, "node_modules/.bin/mcp-code-exec"), "--version"], { cwd: project, env: npxEnv() });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("[mcp-code-exec] @mcp-code-exec/linux-x64 is not installed, so there is no binary to run.");
    expect(r.stderr).toContain("--omit=optional");
    expect(r.stderr).toContain(`npx -y ${SPEC}`);
  });
});
