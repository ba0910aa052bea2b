/**
 * scripts/install.sh against a local release server (Bun.serve on 127.0.0.1) that serves the real
 * linux-x64 release binary, stand-ins for the other platforms, and broken variants of the release:
 * a tampered binary, a SHA256SUMS without our entry, nothing at all. Runs under dash (/bin/sh).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { ROOT } from "../support/env.ts";
import { run } from "../support/run.ts";

const TMP = mkdtempSync(join(tmpdir(), "mcp-code-exec-install-"));
const SCRIPT = join(ROOT, "scripts/install.sh");
const SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin";
const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

/** release name → path → bytes, and every path asked for. */
const releases: Record<string, Record<string, Uint8Array>> = {};
const requests: string[] = [];
let server: ReturnType<typeof Bun.serve>;
let base = "";

beforeAll(async () => {
  const out = join(TMP, "release");
  const b = await run(["bun", "scripts/build.ts", "--release", "--outdir", out, "--targets", "linux-x64"], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? SYSTEM_PATH, HOME: process.env.HOME ?? "/root" },
  });
  if (b.code !== 0) throw new Error(`release build failed: ${b.stderr}`);
  const files: Record<string, Uint8Array> = { "mcp-code-exec-linux-x64": readFileSync(join(out, "mcp-code-exec-linux-x64")) };
  for (const n of ["linux-arm64", "darwin-x64", "darwin-arm64"])
    files[`mcp-code-exec-${n}`] = new TextEncoder().encode(`stand-in for ${n}\n`);
  const sums = Object.entries(files)
    .map(([name, bytes]) => `${sha256(bytes)}  ${name}\n`)
    .join("");
  expect(sums).toContain(readFileSync(join(out, "SHA256SUMS"), "utf8"));
  const installSh = readFileSync(join(out, "install.sh"));
  const enc = (s: string) => new TextEncoder().encode(s);
  releases.good = { ...files, SHA256SUMS: enc(sums), "install.sh": installSh };
  const tampered = Uint8Array.from(files["mcp-code-exec-linux-x64"] as Uint8Array);
  tampered[tampered.length - 100] = (tampered[tampered.length - 100] as number) ^ 0xff;
  releases.tampered = { ...releases.good, "mcp-code-exec-linux-x64": tampered };
  releases.nosum = {
    ...releases.good,
    SHA256SUMS: enc(
      sums
        .split("\n")
        .filter((l) => !l.endsWith("mcp-code-exec-linux-x64"))
        .join("\n"),
    ),
  };
  releases.empty = {};
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const [, release = "", file = ""] = new URL(req.url).pathname.split("/");
      requests.push(`${release}/${file}`);
      const bytes = releases[release]?.[file];
      return bytes ? new Response(bytes) : new Response("not found", { status: 404 });
    },
  });
  base = `http://127.0.0.1:${server.port}`;
});

afterAll(() => {
  server?.stop(true);
  rmSync(TMP, { recursive: true, force: true });
});

let n = 0;
/** Run install.sh with a fresh HOME and install dir; PATH is the system's unless given. */
async function install(args: string[], env: Record<string, string> = {}) {
  const home = join(TMP, `home-${++n}`);
  mkdirSync(home);
  const dir = join(home, "bin");
  requests.length = 0;
  const r = await run(["sh", SCRIPT, "--dir", dir, ...args], { cwd: home, env: { PATH: SYSTEM_PATH, HOME: home, ...env } });
  return { ...r, dir, home, asked: [...requests] };
}

/** The JSON block the script prints for Claude Desktop and Cursor. */
const snippet = (stdout: string) => JSON.parse(stdout.slice(stdout.indexOf("{\n"), stdout.indexOf("\n}\n") + 2));

describe("install.sh", () => {
  test("the one-liner: curl | sh installs into ~/.local/bin, the binary runs, the config snippet is exact", async () => {
    const home = join(TMP, "one-liner");
    mkdirSync(home);
    const r = await run(["sh", "-c", `curl -fsSL ${base}/good/install.sh | sh`], {
      cwd: home,
      env: { PATH: SYSTEM_PATH, HOME: home, MCP_CODE_EXEC_RELEASE_URL: `${base}/good` },
    });
    const bin = join(home, ".local/bin/mcp-code-exec");
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`installed mcp-code-exec/${pkg.version} at ${bin}`);
    expect(r.stderr).toContain(`warning: ${join(home, ".local/bin")} is not on your PATH`);
    expect(r.stdout).toContain(`claude mcp add code-exec -- '${bin}'`);
    expect(snippet(r.stdout)).toEqual({ mcpServers: { "code-exec": { command: bin } } });
    const v = await run([bin, "--version"]);
    expect(v.stdout).toStartWith(`mcp-code-exec/${pkg.version} `);
    expect(readdirSync(join(home, ".local/bin"))).toEqual(["mcp-code-exec"]);
  });

  test("--url wins over MCP_CODE_EXEC_RELEASE_URL; no PATH warning when the dir is on PATH; MCP_BRIDGE_IMAGE goes into the snippet", async () => {
    const home = join(TMP, "on-path");
    const dir = join(home, "bin");
    const r = await run(["sh", SCRIPT, "--url", `${base}/good/`, "--dir", dir], {
      env: {
        PATH: `${dir}:${SYSTEM_PATH}`,
        HOME: home,
        MCP_CODE_EXEC_RELEASE_URL: `${base}/empty`,
        MCP_BRIDGE_IMAGE: "mcp-code-exec-sandbox:bookworm",
      },
    });
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain("not on your PATH");
    expect(snippet(r.stdout)).toEqual({
      mcpServers: { "code-exec": { command: join(dir, "mcp-code-exec"), env: { MCP_BRIDGE_IMAGE: "mcp-code-exec-sandbox:bookworm" } } },
    });
    expect(r.stdout).toContain(
      `claude mcp add code-exec -e 'MCP_BRIDGE_IMAGE=mcp-code-exec-sandbox:bookworm' -- '${join(dir, "mcp-code-exec")}'`,
    );
  });

  test("a tampered binary is refused and nothing is installed", async () => {
    const r = await install(["--url", `${base}/tampered`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /error: checksum mismatch for mcp-code-exec-linux-x64: SHA256SUMS says [0-9a-f]{64}, the download is [0-9a-f]{64}\. The file is corrupt or was tampered with; nothing was installed/,
    );
    expect(existsSync(r.dir)).toBe(false);
    expect(r.stdout).toBe("");
  });

  test("a SHA256SUMS without our entry is refused and nothing is installed", async () => {
    const r = await install(["--url", `${base}/nosum`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `${base}/nosum/SHA256SUMS has no entry for mcp-code-exec-linux-x64: refusing to install a binary that cannot be verified`,
    );
    expect(existsSync(r.dir)).toBe(false);
  });

  test("a release that is not there: the download error names the URL", async () => {
    const r = await install(["--url", `${base}/empty`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`could not download ${base}/empty/mcp-code-exec-linux-x64: check the URL`);
    expect(existsSync(r.dir)).toBe(false);
  });

  test("unsupported architecture or OS: a clear refusal before any download", async () => {
    const arch = await install(["--url", `${base}/good`], { MCP_CODE_EXEC_UNAME_M: "riscv64" });
    expect(arch.code).toBe(1);
    expect(arch.stderr).toContain('unsupported architecture "riscv64": release binaries exist for x86_64/amd64 and aarch64/arm64');
    const os = await install(["--url", `${base}/good`], { MCP_CODE_EXEC_UNAME_S: "FreeBSD" });
    expect(os.code).toBe(1);
    expect(os.stderr).toContain('unsupported operating system "FreeBSD"');
    expect([...arch.asked, ...os.asked]).toEqual([]);
  });

  for (const [s, m, want] of [
    ["Linux", "aarch64", "linux-arm64"],
    ["Linux", "amd64", "linux-x64"],
    ["Darwin", "arm64", "darwin-arm64"],
    ["Darwin", "x86_64", "darwin-x64"],
  ] as const) {
    test(`${s} ${m} downloads mcp-code-exec-${want}`, async () => {
      const r = await install(["--url", `${base}/good`], { MCP_CODE_EXEC_UNAME_S: s, MCP_CODE_EXEC_UNAME_M: m });
      expect(r.code).toBe(0);
      expect(r.asked).toEqual([`good/mcp-code-exec-${want}`, "good/SHA256SUMS"]);
      expect(readFileSync(join(r.dir, "mcp-code-exec"))).toEqual(Buffer.from(releases.good?.[`mcp-code-exec-${want}`] as Uint8Array));
      if (want !== "linux-x64") expect(r.stderr).toContain("but it does not run on this machine");
    });
  }

  test("without curl and sha256sum it uses wget and shasum", async () => {
    const bin = join(TMP, "few-tools");
    mkdirSync(bin);
    for (const tool of [
      "sh",
      "uname",
      "ls",
      "ldd",
      "grep",
      "mktemp",
      "rm",
      "awk",
      "sed",
      "mkdir",
      "cp",
      "chmod",
      "mv",
      "wget",
      "shasum",
      "perl",
      "cat",
    ]) {
      const found = Bun.which(tool, { PATH: SYSTEM_PATH });
      if (found) symlinkSync(found, join(bin, tool));
    }
    const r = await install(["--url", `${base}/good`], { PATH: bin });
    expect(r.stderr).toContain("sha256 verified");
    expect(r.code).toBe(0);
    expect(r.asked).toEqual(["good/mcp-code-exec-linux-x64", "good/SHA256SUMS"]);
    const tampered = await install(["--url", `${base}/tampered`], { PATH: bin });
    expect(tampered.stderr).toContain("checksum mismatch");
    expect(existsSync(tampered.dir)).toBe(false);
  });
});
