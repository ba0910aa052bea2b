/**
 * server.json for the official MCP Registry, validated with ajv against the registry's published schema
 * (vendored in packaging/mcp-registry/, source noted there): the committed file is what
 * scripts/server-json.ts makes, it and the release form with MCPB bundles are valid, the schema really
 * refuses what the registry refuses, and the npm package it names claims this server (mcpName).
 */
import { describe, expect, test } from "bun:test";
import Ajv from "ajv";
import addFormats from "ajv-formats";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { launcherManifest } from "../../scripts/npm-packages.ts";
import { SCHEMA_URL, serverJson } from "../../scripts/server-json.ts";
import { ROOT } from "../support/env.ts";
import { run } from "../support/run.ts";

const schema = JSON.parse(readFileSync(join(ROOT, "packaging/mcp-registry/server.schema.json"), "utf8"));
const ajv = new Ajv({ allErrors: true, strict: false });
addFormats(ajv);
const validate = ajv.compile(schema);
const errors = (doc: unknown) => (validate(doc) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}`));
const PLATFORMS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"];

describe("server.json", () => {
  test("the committed server.json is what scripts/server-json.ts makes, and the schema accepts it", async () => {
    const r = await run(["bun", "scripts/server-json.ts"], { cwd: ROOT });
    expect(r.stderr).toBe("");
    const committed = readFileSync(join(ROOT, "server.json"), "utf8");
    expect(r.stdout).toBe(committed);
    const doc = JSON.parse(committed);
    expect(errors(doc)).toEqual([]);
    expect(doc.$schema).toBe(schema.$id);
    expect(doc.$schema).toBe(SCHEMA_URL);
    expect(doc.version).toBe(pkg.version);
  });

  test("the npm package it names is the launcher, which claims this server by mcpName", () => {
    const doc = serverJson();
    const [npm] = doc.packages as Array<Record<string, unknown>>;
    const launcher = launcherManifest(["linux-x64"]);
    expect(npm).toMatchObject({
      registryType: "npm",
      identifier: launcher.name,
      version: launcher.version,
      runtimeHint: "npx",
      transport: { type: "stdio" },
    });
    expect(launcher.mcpName).toBe(doc.name);
  });

  test("the release form lists one MCPB bundle per platform, each with its sha256, and is valid", () => {
    const sums = new Map(PLATFORMS.map((p, i) => [`mcp-code-exec-${p}.mcpb`, String(i + 1).repeat(64)]));
    const doc = serverJson({ bundleSums: sums });
    expect(errors(doc)).toEqual([]);
    const bundles = (doc.packages as Array<Record<string, unknown>>).filter((p) => p.registryType === "mcpb");
    expect(bundles.map((b) => [b.identifier, b.fileSha256])).toEqual(
      PLATFORMS.map((p, i) => [
        `https://github.com/mcp-code-exec/mcp-code-exec/releases/download/v${pkg.version}/mcp-code-exec-${p}.mcpb`,
        String(i + 1).repeat(64),
      ]),
    );
  });

  test("the schema refuses what the registry refuses: a range or 'latest' as version, a long description, a name without a namespace", () => {
    const good = serverJson();
    const withPackage = (change: Record<string, unknown>) => ({ ...good, packages: [{ ...(good.packages as object[])[0], ...change }] });
    expect(errors(withPackage({ version: "latest" }))).toContain("/packages/0/version must NOT be valid");
    expect(errors({ ...good, description: "x".repeat(101) })).toContain("/description must NOT have more than 100 characters");
    expect(errors({ ...good, name: "mcp-code-exec" })).toContain('/name must match pattern "^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$"');
    expect(errors(withPackage({ fileSha256: "not-a-sum" }))).toContain('/packages/0/fileSha256 must match pattern "^[a-f0-9]{64}$"');
    const { transport: _, ...noTransport } = (good.packages as Array<Record<string, unknown>>)[0] as Record<string, unknown>;
    expect(errors({ ...good, packages: [noTransport] })).toContain("/packages/0 must have required property 'transport'");
  });

  test("--bundles without the bundles built is refused with what to run", async () => {
    const r = await run(["bun", "scripts/server-json.ts", "--bundles", join(ROOT, "packaging/homebrew-tap")], { cwd: ROOT });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("has no entry for mcp-code-exec-linux-x64.mcpb");
    expect(r.stderr).toContain("run `bun scripts/mcpb-bundles.ts`");
  });
});
