/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance), server side against the
 * compiled binary's own Streamable HTTP face (`serve --http` on loopback, without sign-in: the suite
 * sends no token) and client side against the bridge's upstream client. Scenarios that do not apply are listed, with
 * the reason, in not-applicable.yaml, which the suite itself enforces as its baseline.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ENGINES, ROOT } from "../support/env.ts";
import { startHttpBridge, type HttpBridge } from "../support/http-bridge.ts";

// The suite's CLI needs Node 22 (fs.globSync); Bun runs it.
const SUITE = ["bun", join(ROOT, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")];
const BASELINE = join(import.meta.dir, "not-applicable.yaml");
const engine = ENGINES[0]!;

async function suite(args: string[]): Promise<{
  code: number;
  out: string;
  checks: Array<{ scenario: string; id: string; status: string; description: string; errorMessage?: string }>;
}> {
  const dir = mkdtempSync(join(tmpdir(), "mcx-conformance-out-"));
  const proc = Bun.spawn([...SUITE, ...args, "-o", dir], {
    env: { ...process.env, MCP_TEST_ENGINES: engine },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const checks = readdirSync(dir).flatMap((d) => {
    const scenario = d.replace(/^(server|client)-/, "").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
    try {
      return (
        JSON.parse(readFileSync(join(dir, d, "checks.json"), "utf8")) as Array<{ id: string; status: string; description: string }>
      ).map((c) => ({ ...c, scenario }));
    } catch {
      return [];
    }
  });
  return { code, out: `${out}\n${err}`, checks };
}

describe("server side: the compiled binary", () => {
  let bridge: HttpBridge;
  let result: Awaited<ReturnType<typeof suite>>;
  beforeAll(async () => {
    const home = mkdtempSync(join(tmpdir(), "mcx-conformance-home-"));
    // The suite runs its 30 scenarios from one process, each a protocol session whose stream stays open
    // until it exits: more sessions in use at once than one user may hold by default (16).
    bridge = await startHttpBridge({
      HOME: home,
      MCP_BRIDGE_RUNTIME: engine,
      MCP_BRIDGE_PREWARM: "0",
      MCP_BRIDGE_HTTP_MAX_CONNECTIONS: "64",
    });
    result = await suite(["server", "--url", bridge.url, "--expected-failures", BASELINE]);
  }, 300_000);
  afterAll(async () => {
    expect(await bridge?.close()).toBe(0);
  });

  test("every applicable scenario passes, and every listed one is still not applicable", () => {
    if (result.code !== 0) console.log(result.out.slice(-4000));
    expect(result.out).toContain("Baseline check passed: all failures are expected.");
    expect(result.code).toBe(0);
  });

  test("the scenarios that apply ran and passed: initialize, ping, tools/list, resources/list, SSE streams, DNS rebinding", () => {
    for (const scenario of [
      "server-initialize",
      "ping",
      "tools-list",
      "resources-list",
      "server-sse-multiple-streams",
      "dns-rebinding-protection",
    ]) {
      const checks = result.checks.filter((c) => c.scenario === scenario);
      expect(checks.length).toBeGreaterThan(0);
      expect(checks.filter((c) => c.status === "FAILURE")).toEqual([]);
    }
  });
});

describe("client side: the upstream client, through the compiled binary", () => {
  const command = `bun ${join(import.meta.dir, "upstream-client.ts")}`;
  for (const scenario of ["initialize", "tools_call", "sse-retry"]) {
    test(`${scenario}`, async () => {
      const r = await suite(["client", "--command", command, "--scenario", scenario, "--timeout", "90000"]);
      if (r.code !== 0) console.log(r.out.slice(-4000));
      expect(r.out).toContain("OVERALL: PASSED");
      expect(r.checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING")).toEqual([]);
      // A finished proxied call is never cancelled afterwards (the run's end used to send one).
      expect(r.checks.filter((c) => /notifications\/cancelled/.test(c.description))).toEqual([]);
    }, 120_000);
  }
});
