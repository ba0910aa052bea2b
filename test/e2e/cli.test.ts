/**
 * The command line as a person uses it, and the bridge through the MCP Inspector CLI. Every command
 * runs the compiled binary from an empty directory, with nothing beside it.
 */
import { describe, expect, test } from "bun:test";
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_IMAGE, ENV_KEYS } from "../../src/config/env.ts";
import { BINARY } from "../support/binary.ts";
import { bridgeEnv, ENGINES, ROOT } from "../support/env.ts";

const EMPTY_DIR = mkdtempSync(join(tmpdir(), "mcp-code-exec-cli-"));

async function cli(args: string[], opts: { env?: Record<string, string>; stdin?: string } = {}) {
  const proc = Bun.spawn([BINARY, ...args], {
    cwd: EMPTY_DIR,
    env: bridgeEnv(opts.env),
    stdin: opts.stdin === undefined ? "ignore" : new Blob([opts.stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

describe("mcp-code-exec command line", () => {
  test("--version and --help", async () => {
    const v = await cli(["--version"]);
    expect(v.code).toBe(0);
    expect(v.stdout).toContain(`mcp-code-exec/${(await Bun.file(join(ROOT, "package.json")).json()).version}`);
    const h = await cli(["--help"]);
    expect(h.code).toBe(0);
    for (const word of ["run", "exec", "doctor", "servers", "image", "config", "stats"]) expect(h.stdout).toContain(word);
    // Every variable the bridge reads, with its settings-file key where it has one.
    for (const name of ENV_KEYS) expect(h.stdout).toContain(name);
    expect(h.stdout).toContain("[settings file: policy.denyTools]");
  });

  test("exec -c prints the result; a Python error exits 1 with the traceback", async () => {
    const ok = await cli(["exec", "-c", "print('hi')\n6 * 7"]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe("hi\n[value] 42\n");
    const bad = await cli(["exec", "-c", "[][1]"]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain("IndexError: list index out of range");
  });

  test("exec reads a file or stdin, and --json prints the structured result", async () => {
    const file = join(EMPTY_DIR, "script.py");
    writeFileSync(file, "import sys\nprint(sys.version_info >= (3, 9), end='')\n");
    const fromFile = await cli(["exec", file]);
    expect(fromFile.stdout).toBe("True\n");
    const fromStdin = await cli(["exec", "--json"], { stdin: "sum(range(10))" });
    expect(JSON.parse(fromStdin.stdout)).toMatchObject({ value: "45" });
    const missing = await cli(["exec", join(EMPTY_DIR, "nope.py")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("cannot read");
  });

  test("a bad environment variable is named with its value and the bridge refuses to start", async () => {
    const r = await cli(["exec", "-c", "1"], { env: { MCP_BRIDGE_TIMEOUT: "soon", MCP_BRIDGE_MEMORY: "lots" } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('MCP_BRIDGE_TIMEOUT="soon"');
    expect(r.stderr).toContain('MCP_BRIDGE_MEMORY="lots"');
    const serve = await cli(["run"], { env: { MCP_BRIDGE_CONTAINER_USER: "0:0" } });
    expect(serve.code).toBe(1);
    expect(serve.stderr).toContain("refusing to run the sandbox as root");
  });

  test("an unknown command is refused with a pointer to --help", async () => {
    const r = await cli(["frobnicate"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown command "frobnicate"');
  });

  test.each(ENGINES)("doctor passes every check on %s", async (engine) => {
    const r = await cli(["doctor", "--json"], { env: { MCP_BRIDGE_RUNTIME: engine } });
    const report = JSON.parse(r.stdout) as { ok: boolean; checks: Array<{ name: string; ok: boolean; detail: string }> };
    expect(report.checks.filter((c) => !c.ok)).toEqual([]);
    const names = report.checks.map((c) => c.name);
    for (const n of [
      "unprivileged user",
      "no capabilities",
      "read-only root",
      "no network",
      "memory limit",
      "pids limit",
      "cpu limit",
      "ulimits",
      "environment allow-list",
    ]) {
      expect(names).toContain(n);
    }
    // Both engines here are local: frames skip their stdio relays (podman's fd, docker's mounted socket).
    expect(report.checks.find((c) => c.name === "sandbox start")?.detail).toContain("frames over a socket straight to the sandbox");
    expect(r.code).toBe(0);
  });

  test("doctor finds the default image when MCP_BRIDGE_IMAGE is unset (the one scripts/setup.sh built)", async () => {
    const engine = ENGINES[0]!;
    const env = { MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_IMAGE: "" };
    const r = await cli(["doctor", "--json"], { env });
    const report = JSON.parse(r.stdout) as { ok: boolean; checks: Array<{ name: string; ok: boolean; detail: string }> };
    expect(report.checks.find((c) => c.name === "image")).toMatchObject({ ok: true, detail: `${DEFAULT_IMAGE} present` });
    // The sandbox doctor starts is that image, and passes every check.
    expect(report.checks.filter((c) => !c.ok)).toEqual([]);
    expect(r.code).toBe(0);
  });

  test("doctor explains a missing image", async () => {
    const r = await cli(["doctor"], { env: { MCP_BRIDGE_RUNTIME: ENGINES[0]!, MCP_BRIDGE_IMAGE: "nothing-here:1" } });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("FAIL  image: nothing-here:1 missing");
    expect(r.stdout).toContain("fix:");
  });
});

// home-manager links a client's file into place from the read-only /nix/store: `config add` must change
// nothing there (nor replace the link with a file of its own) and say where the entry belongs. The
// store is a read-only bind mount in a mount namespace of the test's own.
test("config add to a link into a read-only place: nothing changes, and the error says where to add the entry", async () => {
  const home = mkdtempSync(join(tmpdir(), "mcx-config-ro-"));
  const store = join(home, "store");
  const link = join(home, ".cursor", "mcp.json");
  mkdirSync(store);
  mkdirSync(join(home, ".cursor"));
  writeFileSync(join(store, "mcp.json"), '{ "mcpServers": {} }\n');
  symlinkSync(join(store, "mcp.json"), link);
  const script = `mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"`;
  const proc = Bun.spawn(
    ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", store, BINARY, "config", "add", "--client", "cursor"],
    { cwd: home, env: bridgeEnv({ HOME: home }), stdout: "pipe", stderr: "pipe" },
  );
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  expect(code).toBe(1);
  expect(stderr).toContain(`${link} is a link to ${join(store, "mcp.json")}, which cannot be written (EROFS); nothing was changed`);
  expect(stderr).toContain("`mcp-code-exec config snippet --client cursor` prints it");
  expect(lstatSync(link).isSymbolicLink()).toBe(true);
  expect(readdirSync(join(home, ".cursor"))).toEqual(["mcp.json"]);
  expect(readdirSync(store)).toEqual(["mcp.json"]);
  expect(readFileSync(join(store, "mcp.json"), "utf8")).toBe('{ "mcpServers": {} }\n');
});

describe("MCP Inspector CLI against the compiled binary", () => {
  const inspector = join(ROOT, "node_modules", ".bin", "mcp-inspector");
  const inspect = async (args: string[]) => {
    const env = bridgeEnv();
    const proc = Bun.spawn(["node", inspector, "--cli", BINARY, ...Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]), ...args], {
      cwd: EMPTY_DIR,
      env: { PATH: env.PATH!, HOME: env.HOME! },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { stdout, stderr, code };
  };

  test("tools/list shows run_python", async () => {
    const r = await inspect(["--method", "tools/list"]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { tools: Array<{ name: string }> };
    expect(out.tools.map((t) => t.name)).toEqual(["run_python"]);
  });

  test("tools/call runs code", async () => {
    const r = await inspect(["--method", "tools/call", "--tool-name", "run_python", "--tool-arg", "code=print(6*7)"]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { content: Array<{ text: string }>; structuredContent: { stdout: string }; isError: boolean };
    expect(out.isError).toBe(false);
    expect(out.structuredContent.stdout).toBe("42\n");
  });
});
