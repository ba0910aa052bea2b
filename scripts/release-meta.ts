/**
 * Facts every install surface repeats (npm packages, MCPB bundles, server.json, the Homebrew formula,
 * README install links): one place, so they cannot drift apart.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import pkg from "../package.json" with { type: "json" };
import { npxLaunch, type Launch } from "../src/host/self.ts";

/** Source repository, as a browser opens it. */
export const REPOSITORY = "https://github.com/mcp-code-exec/mcp-code-exec";
/** Where releases are published; `v<version>` is appended. */
export const RELEASES = `${REPOSITORY}/releases/download`;
/** The server's name in the official MCP Registry (io.github.<owner>/<repo>, proved by the npm package's mcpName). */
export const MCP_NAME = "io.github.mcp-code-exec/mcp-code-exec";
/** The npm package users run with npx; the platform packages are `${NPM_SCOPE}/<platform>`. */
export const NPM_PACKAGE = "mcp-code-exec";
export const NPM_SCOPE = "@mcp-code-exec";
/** Under 100 characters: the MCP Registry's limit. */
export const SHORT_DESCRIPTION = "One tool, run_python: code runs in a hardened container and calls your other MCP servers.";
export const VERSION: string = pkg.version;

/** Release platform names (mcp-code-exec-<platform>) with Node's names for them. */
export const PLATFORMS = [
  { platform: "linux-x64", os: "linux", cpu: "x64" },
  { platform: "linux-arm64", os: "linux", cpu: "arm64" },
  { platform: "darwin-x64", os: "darwin", cpu: "x64" },
  { platform: "darwin-arm64", os: "darwin", cpu: "arm64" },
] as const;
export type Platform = (typeof PLATFORMS)[number]["platform"];

/** How an MCP client starts this version through npx (the same form `config snippet --npx` prints). */
export const NPX_LAUNCH: Launch = npxLaunch(VERSION);

/** `<sha256>  <file>` lines (sha256sum format, binary-mode `*` accepted) → file → sum. */
export function parseSums(text: string): Map<string, string> {
  const sums = new Map<string, string>();
  for (const [i, line] of text.split("\n").entries()) {
    if (!line.trim()) continue;
    const m = /^([0-9a-f]{64}) [ *](\S+)$/.exec(line.trim());
    if (!m) throw new Error(`SHA256SUMS line ${i + 1} is not "<sha256>  <file>": ${JSON.stringify(line)}`);
    sums.set(m[2] as string, m[1] as string);
  }
  return sums;
}

/** sha256 of a file, hex. */
export function sha256File(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}
