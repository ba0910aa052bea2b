#!/usr/bin/env bun
/**
 * What a stored OAuth sign-in costs per upstream call, and how long a sign-in and a refresh take.
 *   bun bench/oauth-calls.ts [--calls 2000]
 * Against the test world (oidc-provider + an SDK Streamable HTTP server that checks bearer tokens, on
 * loopback), with the bridge's own UpstreamServer:
 * - floor: the same token given as a static `Authorization` header (no provider, no store);
 * - oauth: the stored sign-in through the OAuth provider (a token-store read per HTTP request);
 * - login: `beginLogin` to stored tokens, with the stand-in browser (test/fixtures/fake-browser.ts);
 * - refresh: first call after the access token expired (401, refresh, retry).
 * Prints median and p99 per call for floor and oauth, and the two durations.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { beginLogin } from "../src/auth/login.ts";
import { createTokenStore } from "../src/auth/token-store.ts";
import { createUpstreamAuth } from "../src/auth/upstream-auth.ts";
import type { ServerEntry } from "../src/config/servers.ts";
import { silentLogger } from "../src/log.ts";
import { UpstreamServer } from "../src/upstream/upstream-server.ts";
import { startOAuthWorld } from "../test/fixtures/oauth-world.ts";

const { values } = parseArgs({ args: Bun.argv.slice(2), options: { calls: { type: "string", default: "2000" } } });
const CALLS = Math.ceil(Number(values.calls) / 4);
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const ms = (x: number) => `${x.toFixed(3)} ms`;

const world = await startOAuthWorld({ accessTokenTtl: 3600 });
const state = mkdtempSync(join(tmpdir(), "mcx-bench-oauth-"));
const store = createTokenStore(state);
const entry = (headers: Record<string, string>): ServerEntry => ({
  name: "prot",
  alias: "prot",
  source: "/bench",
  shadowed: [],
  configHash: "b",
  transport: { type: "http", url: world.mcpUrl, headers },
  client: "bridge",
  scope: "user",
  at: "",
  digest: "sha256:bench",
  trust: { state: "trusted", reason: "your own user-level file" },
  needs: [],
  notes: [],
});

const t0 = performance.now();
const start = await beginLogin({ name: "prot", url: world.mcpUrl, type: "http" }, { store, version: "bench" });
if (start.kind !== "pending") throw new Error("the server did not ask for a sign-in");
const browser = Bun.spawn(
  [process.execPath, join(import.meta.dir, "..", "test", "fixtures", "fake-browser.ts"), start.login.authorizationUrl.href],
  { stdout: "ignore", stderr: "ignore" },
);
await start.login.completion;
const loginMs = performance.now() - t0;
await browser.exited;

const auth = createUpstreamAuth({ store, version: "bench", env: {}, cwd: tmpdir() });
async function measure(server: UpstreamServer): Promise<number[]> {
  await server.listTools();
  for (let i = 0; i < 50; i++) await server.callTool("add", { a: i, b: 1 }, 10_000);
  const times: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const s = performance.now();
    await server.callTool("add", { a: i, b: 1 }, 10_000);
    times.push(performance.now() - s);
  }
  await server.close();
  return times;
}
const opts = { log: silentLogger, version: "bench", connectTimeoutMs: 10_000, onTools: () => {}, auth };
const token = store.read(world.mcpUrl)!.tokens!.access_token;
// Alternate rounds so that load from other processes falls on both alike.
const floor: number[] = [];
const oauth: number[] = [];
for (let round = 0; round < 4; round++) {
  floor.push(...(await measure(new UpstreamServer(entry({ Authorization: `Bearer ${token}` }), opts))));
  oauth.push(...(await measure(new UpstreamServer(entry({}), opts))));
}

// Make the stored access token unusable (as an expired one is): the bridge learns it from the 401.
const refreshing = new UpstreamServer(entry({}), opts);
await refreshing.listTools();
store.update(world.mcpUrl, "prot", (s) => ({ ...s, tokens: { ...s.tokens!, access_token: "expired-or-unknown" } }));
const r0 = performance.now();
await refreshing.callTool("add", { a: 1, b: 2 }, 10_000);
const refreshMs = performance.now() - r0;
await refreshing.close();

console.log(`upstream calls over Streamable HTTP on loopback, ${CALLS * 4} sequential 'add' calls each, in 4 alternating rounds`);
console.log(`  floor (static Authorization header): median ${ms(pct(floor, 50))}, p99 ${ms(pct(floor, 99))}`);
console.log(`  stored OAuth sign-in:                median ${ms(pct(oauth, 50))}, p99 ${ms(pct(oauth, 99))}`);
console.log(`  overhead:                            median ${ms(pct(oauth, 50) - pct(floor, 50))}`);
console.log(`login (probe, discovery, registration, consent in the stand-in browser, code exchange): ${loginMs.toFixed(0)} ms`);
console.log(
  `first call after the access token stopped working (401, refresh, retry): ${refreshMs.toFixed(1)} ms; token grants: ${world.tokenGrants.join(", ")}`,
);
await world.close();
process.exit(0);
