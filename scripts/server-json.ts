#!/usr/bin/env bun
/**
 * server.json for the official MCP Registry (schema 2025-12-11, vendored in packaging/mcp-registry/):
 *   bun scripts/server-json.ts [--bundles dist/release] [--out FILE]
 * Without --bundles it lists the npm package only (the repository's own server.json, which needs no
 * release files); with --bundles it also lists each mcp-code-exec-<platform>.mcpb found in that folder,
 * with the sha256 the registry requires (SHA256SUMS, as scripts/mcpb-bundles.ts wrote it). Publish the
 * release's file with the registry's `mcp-publisher publish`; it checks the npm package's `mcpName`.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { envTable } from "../src/config/env.ts";
import { MCP_NAME, NPM_PACKAGE, parseSums, PLATFORMS, RELEASES, REPOSITORY, SHORT_DESCRIPTION, VERSION } from "./release-meta.ts";

export const SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";
/** Settings a registry client may offer when it installs the server; the rest are in the README. */
const ENV_OFFERED = ["MCP_BRIDGE_IMAGE", "MCP_BRIDGE_RUNTIME", "MCP_BRIDGE_WORKSPACE"];

function environmentVariables(): Array<Record<string, unknown>> {
  const table = new Map(envTable().map((r) => [r.name, r]));
  return ENV_OFFERED.map((name) => {
    const row = table.get(name);
    if (!row) throw new Error(`${name} is no longer a setting (src/config/env.ts): update ENV_OFFERED in scripts/server-json.ts`);
    return {
      name,
      description: row.description,
      ...(row.default ? { default: row.default } : {}),
      ...(name === "MCP_BRIDGE_WORKSPACE" ? { format: "filepath" } : {}),
      isRequired: false,
    };
  });
}

/** The server.json object; `bundleSums` maps mcp-code-exec-<platform>.mcpb to its sha256. */
export function serverJson(opts: { version?: string; bundleSums?: Map<string, string> } = {}): Record<string, unknown> {
  const version = opts.version ?? VERSION;
  const transport = { type: "stdio" };
  const npm = {
    registryType: "npm",
    registryBaseUrl: "https://registry.npmjs.org",
    identifier: NPM_PACKAGE,
    version,
    runtimeHint: "npx",
    transport,
    environmentVariables: environmentVariables(),
  };
  const bundles = PLATFORMS.flatMap(({ platform }) => {
    const file = `mcp-code-exec-${platform}.mcpb`;
    const sum = opts.bundleSums?.get(file);
    return sum ? [{ registryType: "mcpb", identifier: `${RELEASES}/v${version}/${file}`, version, fileSha256: sum, transport }] : [];
  });
  return {
    $schema: SCHEMA_URL,
    name: MCP_NAME,
    title: "mcp-code-exec",
    description: SHORT_DESCRIPTION,
    version,
    websiteUrl: REPOSITORY,
    repository: { url: REPOSITORY, source: "github" },
    packages: [npm, ...bundles],
  };
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: { bundles: { type: "string" }, out: { type: "string" }, version: { type: "string" } },
  });
  try {
    let bundleSums: Map<string, string> | undefined;
    if (values.bundles) {
      const sums = join(values.bundles, "SHA256SUMS");
      if (!existsSync(sums)) throw new Error(`${sums} is missing: run \`bun run build:release\` and \`bun scripts/mcpb-bundles.ts\` first`);
      bundleSums = parseSums(readFileSync(sums, "utf8"));
      const missing = PLATFORMS.map((p) => `mcp-code-exec-${p.platform}.mcpb`).filter((f) => !bundleSums?.has(f));
      if (missing.length) throw new Error(`${sums} has no entry for ${missing.join(", ")}: run \`bun scripts/mcpb-bundles.ts\``);
    }
    const text = `${JSON.stringify(serverJson({ version: values.version, bundleSums }), null, 2)}\n`;
    if (values.out) writeFileSync(values.out, text);
    else process.stdout.write(text);
  } catch (err) {
    console.error(`server-json: ${(err as Error).message}`);
    process.exit(1);
  }
}
