/**
 * MCPB bundles for Claude Desktop from a real release build: scripts/mcpb-bundles.ts validates and packs
 * one per platform with the `mcpb` CLI; each bundle unpacks (with mcpb) to its manifest and that
 * platform's binary; SHA256SUMS and the release's server.json carry the bundles' sums (server.json
 * validated against the MCP Registry's schema); and the linux-x64 bundle, started the way Claude
 * Desktop starts it (its mcp_config with ${__dirname} and ${user_config.*} filled in), serves run_python
 * to the MCP SDK client. Claude Desktop itself does not run here.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Ajv from "ajv";
import addFormats from "ajv-formats";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { mcpbManifest } from "../../scripts/mcpb-bundles.ts";
import { parseSums, sha256File, type Platform } from "../../scripts/release-meta.ts";
import { bridgeEnv, IMAGE, ROOT } from "../support/env.ts";
import { run } from "../support/run.ts";

const WORK = mkdtempSync(join(tmpdir(), "mcp-code-exec-mcpb-"));
const RELEASE = join(WORK, "release");
const MCPB = join(ROOT, "node_modules/.bin/mcpb");
const PLATFORMS: Platform[] = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"];
const hostEnv = () => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: WORK });

/** Every file under dir, relative, sorted. */
function files(dir: string, prefix = ""): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]))
    .sort();
}

beforeAll(async () => {
  const build = await run(["bun", "scripts/build.ts", "--release", "--outdir", RELEASE], { cwd: ROOT, env: hostEnv() });
  if (build.code !== 0) throw new Error(`release build failed:\n${build.stderr}`);
  const pack = await run(["bun", "scripts/mcpb-bundles.ts", "--release", RELEASE], { cwd: ROOT, env: hostEnv() });
  if (pack.code !== 0) throw new Error(`mcpb-bundles failed:\n${pack.stdout}\n${pack.stderr}`);
}, 1_200_000);

afterAll(() => rmSync(WORK, { recursive: true, force: true }));

describe("MCPB bundles", () => {
  test("one per platform; each unpacks to its manifest and that platform's release binary, executable", async () => {
    for (const platform of PLATFORMS) {
      const bundle = join(RELEASE, `mcp-code-exec-${platform}.mcpb`);
      const info = await run([MCPB, "info", bundle], { env: hostEnv() });
      expect(info.code).toBe(0);
      const dir = join(WORK, `unpacked-${platform}`);
      const unpack = await run([MCPB, "unpack", bundle, dir], { env: hostEnv() });
      expect(unpack.code).toBe(0);
      expect(files(dir)).toEqual(["manifest.json", "server/mcp-code-exec"]);
      expect(JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"))).toEqual(mcpbManifest(platform));
      expect(sha256File(join(dir, "server/mcp-code-exec"))).toBe(sha256File(join(RELEASE, `mcp-code-exec-${platform}`)));
      expect(statSync(join(dir, "server/mcp-code-exec")).mode & 0o111).toBe(0o111);
      const valid = await run([MCPB, "validate", join(dir, "manifest.json")], { env: hostEnv() });
      expect(valid.code).toBe(0);
      if (platform !== "linux-x64") rmSync(dir, { recursive: true });
    }
  });

  test("SHA256SUMS lists every bundle, and the release's server.json lists them with those sums, valid for the MCP Registry", async () => {
    const sums = parseSums(readFileSync(join(RELEASE, "SHA256SUMS"), "utf8"));
    for (const p of PLATFORMS) expect(sums.get(`mcp-code-exec-${p}.mcpb`)).toBe(sha256File(join(RELEASE, `mcp-code-exec-${p}.mcpb`)));
    const out = join(RELEASE, "server.json");
    const r = await run(["bun", "scripts/server-json.ts", "--bundles", RELEASE, "--out", out], { cwd: ROOT, env: hostEnv() });
    expect(r.stderr).toBe("");
    const doc = JSON.parse(readFileSync(out, "utf8"));
    const ajv = new Ajv({ allErrors: true, strict: false });
    addFormats(ajv);
    const validate = ajv.compile(JSON.parse(readFileSync(join(ROOT, "packaging/mcp-registry/server.schema.json"), "utf8")));
    expect(validate(doc) ? [] : validate.errors).toEqual([]);
    const bundles = doc.packages.filter((p: { registryType: string }) => p.registryType === "mcpb");
    expect(bundles.map((b: { identifier: string; fileSha256: string }) => [b.identifier.split("/").pop(), b.fileSha256])).toEqual(
      PLATFORMS.map((p) => [`mcp-code-exec-${p}.mcpb`, sums.get(`mcp-code-exec-${p}.mcpb`)]),
    );
  });

  test("the linux-x64 bundle, started as Claude Desktop starts it, lists the manifest's tools and runs Python (docker)", async () => {
    const dir = join(WORK, "unpacked-linux-x64");
    const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
    const userConfig = { image: IMAGE };
    const fill = (s: string) =>
      s
        .replaceAll("${__dirname}", dir)
        .replace(
          /\$\{user_config\.(\w+)\}/g,
          (_, k: string) => userConfig[k as keyof typeof userConfig] ?? manifest.user_config[k].default,
        );
    const config = manifest.server.mcp_config;
    const env = Object.fromEntries(Object.entries(config.env as Record<string, string>).map(([k, v]) => [k, fill(v)]));
    expect(env).toEqual({ MCP_BRIDGE_IMAGE: IMAGE });
    const state = join(WORK, "state");
    const transport = new StdioClientTransport({
      command: fill(config.command),
      args: config.args.map(fill),
      env: bridgeEnv({ ...env, MCP_BRIDGE_RUNTIME: "docker", MCP_BRIDGE_STATE_DIR: state }),
      cwd: WORK,
      stderr: "pipe",
    });
    const client = new Client({ name: "mcpb-test", version: "0.0.0" });
    await client.connect(transport);
    try {
      expect(client.getServerVersion()?.version).toBe(pkg.version);
      const { tools } = await client.listTools();
      expect(tools.map((t) => ({ name: t.name, description: t.description }))).toEqual(manifest.tools);
      const result = (await client.callTool({ name: "run_python", arguments: { code: "print(6 * 7)" } }, undefined, {
        timeout: 120_000,
      })) as CallToolResult;
      expect(result.structuredContent).toMatchObject({ stdout: "42\n" });
    } finally {
      await client.close();
    }
  });

  test("mcpb validate really checks: a manifest without server.entry_point is refused", async () => {
    const broken = mcpbManifest("darwin-arm64") as { server: Record<string, unknown> };
    delete broken.server.entry_point;
    const file = join(WORK, "broken-manifest.json");
    writeFileSync(file, JSON.stringify(broken));
    const r = await run([MCPB, "validate", file], { env: hostEnv() });
    expect(r.code).not.toBe(0);
    expect(`${r.stdout}${r.stderr}`).toContain("entry_point");
  });
});
