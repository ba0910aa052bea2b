/**
 * Installs into running sessions through the compiled bridge, with real parts: uv (bootstrapped by the
 * bridge from the index, checked against its pinned SHA-256) resolving against a PEP 503/691 index on
 * loopback that serves real PyPI wheels (scripts/test-wheels.sh) and a few the test builds, the MCP
 * SDK's client answering the approval question (elicitation), podman, docker and gVisor containers.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ElicitRequestSchema, type ElicitRequest, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { BINARY } from "../support/binary.ts";
import { startBridge, type BridgeHandle } from "../support/bridge.ts";
import { bridgeEnv, ENGINES } from "../support/env.ts";
import { makeWheel } from "../support/make-wheel.ts";
import { startPackageIndex, TEST_WHEELS, type PackageIndex } from "../support/package-index.ts";

const GVISOR = (process.env.MCP_TEST_GVISOR ?? "1") !== "0";
const home = mkdtempSync(join(tmpdir(), "mcx-e2e-packages-"));
const built = join(home, "built");
const wheelhouse = join(home, "wheelhouse");
mkdirSync(built);
let index: PackageIndex;
let answer: (p: ElicitRequest["params"]) => ElicitResult = () => ({ action: "accept", content: { decision: "install" } });
const asked: Array<{ message: string; downloadsThen: number }> = [];

/** Run code that prints RESULT:<json>; returns the parsed value. */
async function result(b: BridgeHandle, code: string, extra: { reset?: boolean } = {}): Promise<Record<string, unknown>> {
  const r = await b.run(`import json\nfrom mcp import runtime, McpError\n${code}`, extra);
  const line = /RESULT:(.*)/.exec(r.text)?.[1];
  if (!line) throw new Error(`no result: ${r.text}`);
  return JSON.parse(line);
}

/** Python that installs `reqs` into `out`; printed as the RESULT unless more code follows (`then`). */
const tryInstall = (reqs: string, then = "") => `
try:
    r = runtime.install(${reqs})
    out = {"ok": [p["name"] for p in r["installed"]], "present": r["present"], "notes": r["notes"]}
except McpError as e:
    out = {"error": type(e).__name__, "message": str(e), "decided_by": e.decided_by}
${then}
print("RESULT:" + json.dumps(out))`;

const auditInstalls = (state: string) =>
  existsSync(join(state, "audit.jsonl"))
    ? readFileSync(join(state, "audit.jsonl"), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.event === "install")
    : [];

beforeAll(async () => {
  // One letter from tqdm, released today: both are flagged in the question. And one the index tampers with.
  makeWheel(built, "tqdn", "1.0.0", { "tqdn.py": "X = 1\n" });
  makeWheel(built, "pkgtamper", "1.0.0", { "pkgtamper.py": "X = 1\n" });
  index = await startPackageIndex({
    dirs: [TEST_WHEELS, built],
    uploadTime: (f) => (f.startsWith("tqdn-") ? new Date().toISOString() : undefined),
    tamper: new Set(["pkgtamper-1.0.0-py3-none-any.whl"]),
  });
  // The air-gapped path: `packages add` on a connected machine fills the wheelhouse (here from the loopback index).
  // Not spawnSync: the index answers from this very process.
  const add = Bun.spawn(
    [
      BINARY,
      "packages",
      "add",
      "--wheelhouse",
      wheelhouse,
      "--index",
      index.url,
      "--python",
      "3.13",
      "--platform",
      "x86_64-manylinux_2_36",
      "rich",
    ],
    { env: bridgeEnv({ MCP_BRIDGE_STATE_DIR: join(home, "add-state") }), stdout: "pipe", stderr: "pipe" },
  );
  const [err, code] = await Promise.all([new Response(add.stderr).text(), add.exited]);
  if (code !== 0) throw new Error(`packages add failed: ${err}`);
}, 120_000);

afterAll(() => index?.close());

test("packages add fills the wheelhouse with the closure and the pinned uv, and verify fails on a tampered file", () => {
  const manifest = JSON.parse(readFileSync(join(wheelhouse, "wheelhouse.json"), "utf8")).files as Record<string, unknown>;
  expect(Object.keys(manifest).sort()).toEqual([
    "markdown_it_py-4.3.0-py3-none-any.whl",
    "mdurl-0.1.2-py3-none-any.whl",
    "pygments-2.21.0-py3-none-any.whl",
    "rich-15.0.0-py3-none-any.whl",
    "uv-0.13.9-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
  ]);
  const copy = join(home, "house-copy");
  mkdirSync(copy);
  for (const f of [...Object.keys(manifest), "wheelhouse.json"]) copyFileSync(join(wheelhouse, f), join(copy, f));
  const verify = (dir: string) =>
    Bun.spawnSync([BINARY, "packages", "verify", "--wheelhouse", dir], { env: bridgeEnv({ MCP_BRIDGE_STATE_DIR: join(home, "v") }) });
  expect(verify(copy).exitCode).toBe(0);
  appendFileSync(join(copy, "mdurl-0.1.2-py3-none-any.whl"), "x");
  const bad = verify(copy);
  expect(bad.exitCode).toBe(1);
  expect(bad.stdout.toString()).toContain("TAMPERED");
  expect(bad.stdout.toString()).toContain("mdurl-0.1.2-py3-none-any.whl");
});

describe.each(ENGINES)("installs on %s", (engine) => {
  const state = join(home, `state-${engine}`);
  let b: BridgeHandle;

  beforeAll(async () => {
    b = await startBridge(
      {
        MCP_BRIDGE_RUNTIME: engine,
        MCP_BRIDGE_STATE_DIR: state,
        MCP_BRIDGE_WHEELHOUSE: wheelhouse,
        MCP_BRIDGE_PACKAGE_INDEX: index.url,
        MCP_BRIDGE_ASK_TIMEOUT: "20",
      },
      {
        cwd: home,
        capabilities: { elicitation: { form: {} } },
        setup: (client) =>
          client.setRequestHandler(ElicitRequestSchema, async (req) => {
            asked.push({ message: String(req.params.message), downloadsThen: index.downloads.length });
            return answer(req.params);
          }),
      },
    );
  }, 120_000);
  afterAll(() => b?.close());

  test("from the wheelhouse: importable in the running session, variables kept, nobody asked, audited", async () => {
    const before = asked.length;
    await b.run("x = 41");
    const r = await result(b, tryInstall('"rich"', 'import rich.console\nout["x"] = x + 1'));
    expect(r).toMatchObject({ ok: ["markdown-it-py", "mdurl", "pygments", "rich"], x: 42 });
    expect(asked.length).toBe(before);
    const line = auditInstalls(state).at(-1)!;
    expect(line).toMatchObject({ decision: "allow", approved_by: "local source (no download)", outcome: "ok", source: "local wheels" });
    expect((line.packages as Array<{ name: string; sha256: string }>).map((p) => [p.name, p.sha256.length])).toContainEqual(["rich", 64]);
    const listed = await result(b, 'print("RESULT:" + json.dumps({p["name"]: p["source"] for p in runtime.packages()}))');
    expect(listed).toMatchObject({ rich: "installed", numpy: "image" });
  });

  test("from the index after approval: the question names versions, sizes and dependencies; nothing downloaded before the answer; the sandbox still has no network", async () => {
    const before = asked.length;
    const downloaded = index.downloads.length;
    answer = () => ({ action: "accept", content: { decision: "install" } });
    // A pure-Python package over two compiled ones the image lacks (the image has the rest of the data stack).
    const r = await result(
      b,
      tryInstall('"python-levenshtein"', 'import Levenshtein\nout["d"] = Levenshtein.distance("kitten", "sitting")'),
    );
    expect(r).toMatchObject({ ok: ["levenshtein", "python-levenshtein", "rapidfuzz"], d: 3 });
    expect(asked.length).toBe(before + 1);
    const q = asked.at(-1)!;
    expect(q.downloadsThen).toBe(downloaded);
    expect(q.message).toContain("python-levenshtein 0.27.5  ");
    expect(q.message).toMatch(/Dependencies:\n {2}levenshtein 0\.27\.5 .*\n {2}rapidfuzz 3\.14\.6/);
    expect(q.message).not.toContain("numpy");
    expect(index.downloads.slice(downloaded).sort()).toEqual([
      "levenshtein-0.27.5-cp313-cp313-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl",
      "python_levenshtein-0.27.5-py3-none-any.whl",
      "rapidfuzz-3.14.6-cp313-cp313-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
    ]);
    expect(auditInstalls(state).at(-1)).toMatchObject({ decision: "allow", approved_by: "user", answer: "install", outcome: "ok" });
    const port = new URL(index.url).port;
    const net = await result(
      b,
      `import socket\nres = {}\nfor host in ["127.0.0.1", "10.0.2.2", "1.1.1.1"]:\n    try:\n        socket.create_connection((host, ${port}), timeout=2).close()\n        res[host] = "connected"\n    except OSError as e:\n        res[host] = "blocked"\nprint("RESULT:" + json.dumps(res))`,
    );
    expect(net).toEqual({ "127.0.0.1": "blocked", "10.0.2.2": "blocked", "1.1.1.1": "blocked" });
    const ro = await result(
      b,
      'import os\ntry:\n    open("/opt/mcp-code-exec/packages/x", "w")\n    w = "written"\nexcept OSError:\n    w = "refused"\nprint("RESULT:" + json.dumps({"w": w}))',
    );
    expect(ro).toEqual({ w: "refused" });
  });

  test("a made-up name: refused with the nearest real package, nothing downloaded, nobody asked", async () => {
    const before = asked.length;
    const downloaded = index.downloads.length;
    expect(await result(b, tryInstall('"scikit-lern"'))).toMatchObject({
      error: "PackageNotFoundError",
      message: expect.stringContaining('the nearest real package is "scikit-learn"'),
    });
    expect(await result(b, tryInstall('"zzqxv-nothing-like-it"'))).toMatchObject({
      error: "PackageNotFoundError",
      message: expect.stringContaining("no real package has a similar name"),
    });
    expect(asked.length).toBe(before);
    expect(index.downloads.length).toBe(downloaded);
  });

  test("a name one letter from a popular package, released today, is flagged; deny downloads nothing", async () => {
    const downloaded = index.downloads.length;
    answer = () => ({ action: "accept", content: { decision: "deny" } });
    expect(await result(b, tryInstall('"tqdn"'))).toMatchObject({ error: "McpPolicyError", decided_by: "user" });
    const q = asked.at(-1)!.message;
    expect(q).toContain('one letter away from the popular package "tqdm"');
    expect(q).toContain("released less than a day ago");
    expect(index.downloads.length).toBe(downloaded);
    expect(auditInstalls(state).at(-1)).toMatchObject({ decision: "deny", approved_by: "user", outcome: "refused" });
  });

  test("a wheel that does not match the index's SHA-256 is refused and nothing is importable", async () => {
    answer = () => ({ action: "accept", content: { decision: "install" } });
    const r = await result(
      b,
      tryInstall('"pkgtamper"', 'try:\n    import pkgtamper\n    out["imported"] = True\nexcept ImportError:\n    out["imported"] = False'),
    );
    expect(r).toMatchObject({ error: "InstallError", message: expect.stringContaining("SHA-256"), imported: false });
  });

  test("options, URLs and paths never reach the resolver", async () => {
    for (const bad of [
      '"--index-url=http://127.0.0.1:1/ rich"',
      '"rich @ https://example.org/rich.whl"',
      '"../../etc/passwd"',
      "\"rich; os_name=='posix'\"",
    ])
      expect(await result(b, tryInstall(bad))).toMatchObject({ error: "McpError", message: expect.stringMatching(/requirement/) });
  });

  test("a missing module is answered with the distribution and how to install it", async () => {
    // cv2, sklearn and the like are in the image: python-dotenv is not.
    const r = await b.run("import dotenv");
    expect(r.isError).toBe(true);
    expect(r.text).toContain("`import dotenv` needs the distribution python-dotenv (dotenv is its import name)");
    expect(r.text).toContain('runtime.install("python-dotenv")');
  });

  test("a new session gets MCP_BRIDGE_PACKAGES from the store without a question, installs turned off or not", async () => {
    const again = await startBridge({
      MCP_BRIDGE_RUNTIME: engine,
      MCP_BRIDGE_STATE_DIR: state,
      MCP_BRIDGE_PACKAGES: "rich,python-levenshtein",
      MCP_BRIDGE_INSTALL: "deny",
      MCP_BRIDGE_PACKAGE_INDEX: "http://127.0.0.1:9/simple/",
    });
    try {
      const r = await again.run("import rich, Levenshtein\n(rich.__name__, Levenshtein.__name__)");
      expect(r.text).not.toContain("warning");
      expect(r.structured.value).toBe("('rich', 'Levenshtein')");
      expect(await result(again, tryInstall('"tqdm"'))).toMatchObject({
        error: "McpPolicyError",
        message: expect.stringContaining("MCP_BRIDGE_INSTALL=deny"),
      });
    } finally {
      await again.close();
    }
  });
});

describe.if(GVISOR)("installs under gVisor", () => {
  test("a wheelhouse install is importable at once and the sandbox still cannot connect", async () => {
    const b = await startBridge({
      MCP_BRIDGE_RUNTIME: ENGINES[0]!,
      MCP_BRIDGE_OCI_RUNTIME: "runsc",
      MCP_BRIDGE_PIDS: "512",
      MCP_BRIDGE_STATE_DIR: join(home, "state-gvisor"),
      MCP_BRIDGE_WHEELHOUSE: wheelhouse,
      MCP_BRIDGE_INSTALL: "deny",
      MCP_BRIDGE_PACKAGES: "rich",
    });
    try {
      const port = new URL(index.url).port;
      const r = await b.run(
        `import rich, socket, os\ntry:\n    socket.create_connection(("127.0.0.1", ${port}), timeout=2)\n    net = "connected"\nexcept OSError:\n    net = "blocked"\n(rich.__name__, net, os.uname().release)`,
      );
      expect(r.structured.value).toBe("('rich', 'blocked', '4.4.0')");
    } finally {
      await b.close();
    }
  });
});
