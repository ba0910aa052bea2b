/**
 * `bun scripts/build.ts --release`: four binaries of the right kind, a SHA256SUMS that sha256sum
 * accepts, the linux-x64 binary working from an empty directory, and a target whose Bun runtime
 * cannot be downloaded reported (offline is simulated with a fresh network namespace and an empty cache).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { bridgeEnv, IMAGE, ROOT } from "../support/env.ts";
import { run } from "../support/run.ts";

const OUT = mkdtempSync(join(tmpdir(), "mcp-code-exec-release-"));
const NAMES = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"];
const hostEnv = () => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root" });
let build: Awaited<ReturnType<typeof run>>;

beforeAll(async () => {
  build = await run(["bun", "scripts/build.ts", "--release", "--outdir", OUT], { cwd: ROOT, env: hostEnv() });
});
afterAll(() => rmSync(OUT, { recursive: true, force: true }));

/** ELF e_machine or Mach-O cputype, read from the header. */
function kind(file: string): string {
  const b = readFileSync(file).subarray(0, 64);
  if (b.readUInt32BE(0) === 0x7f454c46) return `elf-${{ 0x3e: "x64", 0xb7: "arm64" }[b.readUInt16LE(18)] ?? "?"}`;
  if (b.readUInt32LE(0) === 0xfeedfacf) return `macho-${{ 0x01000007: "x64", 0x0100000c: "arm64" }[b.readUInt32LE(4)] ?? "?"}`;
  return "unknown";
}

describe("release build", () => {
  test("one binary per platform, of the right kind, install.sh, and SHA256SUMS that sha256sum -c accepts", async () => {
    expect(build.stderr).toBe("");
    expect(build.code).toBe(0);
    expect(readdirSync(OUT).sort()).toEqual(["SHA256SUMS", "install.sh", ...NAMES.map((n) => `mcp-code-exec-${n}`)].sort());
    for (const n of NAMES)
      expect(kind(join(OUT, `mcp-code-exec-${n}`))).toBe(`${n.startsWith("linux") ? "elf" : "macho"}-${n.split("-")[1]}`);
    const sums = readFileSync(join(OUT, "SHA256SUMS"), "utf8");
    expect(
      sums
        .trimEnd()
        .split("\n")
        .map((l) => l.split("  ")[1])
        .sort(),
    ).toEqual(NAMES.map((n) => `mcp-code-exec-${n}`).sort());
    const check = await run(["sha256sum", "-c", "SHA256SUMS"], { cwd: OUT, env: hostEnv() });
    expect(check.code).toBe(0);
    expect(check.stdout.match(/: OK$/gm)?.length).toBe(4);
  });

  test("the linux-x64 binary runs from an empty directory: --version and exec against the offline image", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcp-code-exec-smoke-"));
    try {
      copyFileSync(join(OUT, "mcp-code-exec-linux-x64"), join(dir, "mcp-code-exec"));
      await run(["chmod", "+x", join(dir, "mcp-code-exec")]);
      const empty = mkdtempSync(join(tmpdir(), "mcp-code-exec-empty-"));
      const v = await run([join(dir, "mcp-code-exec"), "--version"], { cwd: empty, env: bridgeEnv() });
      expect(v.stdout).toStartWith(`mcp-code-exec/${pkg.version} `);
      const r = await run([join(dir, "mcp-code-exec"), "exec", "-c", "import numpy\nprint(int(numpy.arange(7).sum()) * 2)"], {
        cwd: empty,
        env: bridgeEnv({ MCP_BRIDGE_IMAGE: IMAGE }),
      });
      expect(r.stderr).toBe("");
      expect(r.stdout).toBe("42\n");
      rmSync(empty, { recursive: true });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  const canUnshare = Bun.spawnSync(["unshare", "-n", "true"]).exitCode === 0;
  test.skipIf(!canUnshare)("offline with no cached runtime: the foreign target is reported, the native one still built", async () => {
    const out = mkdtempSync(join(tmpdir(), "mcp-code-exec-offline-"));
    const cache = mkdtempSync(join(tmpdir(), "mcp-code-exec-bun-cache-"));
    try {
      const r = await run(
        ["unshare", "-n", "bun", "scripts/build.ts", "--release", "--outdir", out, "--targets", "linux-x64,linux-arm64"],
        {
          cwd: ROOT,
          env: { ...hostEnv(), BUN_INSTALL_CACHE_DIR: cache },
        },
      );
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("FAILED linux-arm64 (bun-linux-arm64)");
      expect(r.stderr).toContain("Failed to download 'bun-linux-aarch64-v");
      expect(r.stderr).toContain(
        `Run this once where the npm registry is reachable, or copy that file from a machine that has it to ${cache}/bun-linux-aarch64-v`,
      );
      expect(r.stderr).toContain("missing: linux-arm64");
      expect(readFileSync(join(out, "SHA256SUMS"), "utf8")).toMatch(/^[0-9a-f]{64} {2}mcp-code-exec-linux-x64\n$/);
      expect(readdirSync(out).sort()).toEqual(["SHA256SUMS", "install.sh", "mcp-code-exec-linux-x64"]);
    } finally {
      rmSync(out, { recursive: true, force: true });
      rmSync(cache, { recursive: true, force: true });
    }
  });
});
