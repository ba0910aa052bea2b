/**
 * packaging/npm/launcher.js, the `mcp-code-exec` command of the npm package: which platform package it
 * wants, what it says when that is missing or mismatched, and, run by Node with MCP_CODE_EXEC_BINARY set
 * to /bin/sh, that stdio, exit codes and signals pass through. (The full path through npm and npx is in
 * test/release/npx.test.ts.)
 */
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../support/env.ts";
import { run } from "../support/run.ts";

const LAUNCHER = join(ROOT, "packaging/npm/launcher.js");
const launcher = createRequire(import.meta.url)(LAUNCHER) as {
  platformPackage(m: object, platform?: string, arch?: string): { name: string; version: string };
  resolveBinary(m: object, opts?: { env?: Record<string, string>; platform?: string; arch?: string; from?: string }): string;
};
const PLATFORMS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"];
const manifest = {
  name: "mcp-code-exec",
  version: "1.2.3",
  optionalDependencies: Object.fromEntries(PLATFORMS.map((p) => [`@mcp-code-exec/${p}`, "1.2.3"])),
};

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** A folder laid out as npm installs the launcher (and, optionally, one platform package at `version`). */
function installed(platformVersion?: string): { dir: string; bin: string } {
  const dir = mkdtempSync(join(tmpdir(), "mcp-code-exec-launcher-"));
  made.push(dir);
  const pkgDir = join(dir, "node_modules/mcp-code-exec");
  mkdirSync(join(pkgDir, "bin"), { recursive: true });
  copyFileSync(LAUNCHER, join(pkgDir, "bin/mcp-code-exec.js"));
  writeFileSync(join(pkgDir, "package.json"), JSON.stringify(manifest));
  if (platformVersion) {
    const p = join(dir, "node_modules/@mcp-code-exec/linux-x64");
    mkdirSync(join(p, "bin"), { recursive: true });
    writeFileSync(join(p, "package.json"), JSON.stringify({ name: "@mcp-code-exec/linux-x64", version: platformVersion }));
  }
  return { dir, bin: join(pkgDir, "bin/mcp-code-exec.js") };
}

const PATH = process.env.PATH ?? "/usr/bin:/bin";
const viaSh = (bin: string, script: string, stdin?: string) =>
  run(["node", bin, "-c", script], { env: { PATH, MCP_CODE_EXEC_BINARY: "/bin/sh" }, stdin });

describe("npm launcher: which binary", () => {
  test("this machine's platform package, or a list of the platforms there are", () => {
    expect(launcher.platformPackage(manifest, "darwin", "arm64")).toEqual({ name: "@mcp-code-exec/darwin-arm64", version: "1.2.3" });
    expect(() => launcher.platformPackage(manifest, "win32", "x64")).toThrow(
      "mcp-code-exec has no binary for win32-x64 (there are: linux-x64, linux-arm64, darwin-x64, darwin-arm64). On Windows, run it inside WSL.",
    );
    expect(() => launcher.platformPackage(manifest, "freebsd", "x64")).toThrow(
      /^mcp-code-exec has no binary for freebsd-x64 \(there are: [^)]+\)\.$/,
    );
  });

  test("the binary inside the installed platform package; a version that differs from the launcher's is refused", () => {
    const ok = installed("1.2.3");
    expect(launcher.resolveBinary(manifest, { env: {}, platform: "linux", arch: "x64", from: ok.dir })).toBe(
      join(ok.dir, "node_modules/@mcp-code-exec/linux-x64/bin/mcp-code-exec"),
    );
    const stale = installed("1.2.0");
    expect(() => launcher.resolveBinary(manifest, { env: {}, platform: "linux", arch: "x64", from: stale.dir })).toThrow(
      "@mcp-code-exec/linux-x64 is 1.2.0 but this launcher is 1.2.3: reinstall mcp-code-exec@1.2.3 so both match.",
    );
    expect(launcher.resolveBinary(manifest, { env: { MCP_CODE_EXEC_BINARY: "/opt/mcp-code-exec" }, from: stale.dir })).toBe(
      "/opt/mcp-code-exec",
    );
  });

  test("run by Node without its platform package: exit 1 and what to do", async () => {
    const { bin } = installed();
    const r = await run(["node", bin, "--version"], { env: { PATH } });
    expect(r.code).toBe(1);
    expect(r.stderr).toStartWith(
      `[mcp-code-exec] @mcp-code-exec/${process.platform}-${process.arch} is not installed, so there is no binary to run.`,
    );
    expect(r.stderr).toContain("Reinstall without that option (npx -y mcp-code-exec@1.2.3)");
  });
});

describe("npm launcher: the binary's stdio, exit status and signals pass through", () => {
  const { bin } = installed();

  test("stdin, stdout, stderr and the exit code", async () => {
    const r = await viaSh(bin, 'cat; echo "to stderr" >&2; exit 3', "hello from stdin\n");
    expect(r).toEqual({ stdout: "hello from stdin\n", stderr: "to stderr\n", code: 3 });
  });

  test("SIGTERM to the launcher reaches the binary, whose exit code is the launcher's", async () => {
    const proc = Bun.spawn(["node", bin, "-c", 'trap "echo got SIGTERM; exit 7" TERM; echo ready; while :; do sleep 0.05; done'], {
      env: { PATH, MCP_CODE_EXEC_BINARY: "/bin/sh" },
      stdout: "pipe",
    });
    const reader = proc.stdout.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe("ready\n");
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(7);
    const rest = await reader.read();
    expect(new TextDecoder().decode(rest.value)).toBe("got SIGTERM\n");
  });

  test("a binary killed by a signal kills the launcher with the same signal", async () => {
    const proc = Bun.spawn(["node", bin, "-c", "kill -KILL $$"], { env: { PATH, MCP_CODE_EXEC_BINARY: "/bin/sh" } });
    await proc.exited;
    expect(proc.signalCode).toBe("SIGKILL");
  });

  test("a binary that cannot be started: exit 1 with the path and a hint", async () => {
    const r = await run(["node", bin], { env: { PATH, MCP_CODE_EXEC_BINARY: "/nonexistent/mcp-code-exec" } });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      "[mcp-code-exec] cannot start /nonexistent/mcp-code-exec: spawn /nonexistent/mcp-code-exec ENOENT (missing: reinstall mcp-code-exec)\n",
    );
  });
});
