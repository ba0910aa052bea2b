/**
 * `serve --http` through the compiled binary on a real engine: both protocol eras at /mcp, sign-in
 * (static tokens; JWTs from a real authorization server, oidc-provider), users kept apart (Python
 * sessions by handle, protocol sessions, held questions), approvals over HTTP, the audit log naming
 * the user, quotas, and the attacks: no token, a wrong one, one for another audience or expired, a
 * foreign Origin, 10,000 requests without a token, a client holding streams open.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { BINARY } from "../support/binary.ts";
import { bridgeEnv, ENGINES, ROOT } from "../support/env.ts";
import { legacyClient, modernPost, modernRun, startHttpBridge, type HttpBridge } from "../support/http-bridge.ts";
import { run } from "../support/run.ts";
import { CLOCK_SKEW_S } from "../../src/http/auth.ts";
import { startIssuer, type Issuer } from "../fixtures/oauth-issuer.ts";
import { startOAuthWorld, type OAuthWorld } from "../fixtures/oauth-world.ts";

const engine = ENGINES[0]!;
const FIXTURE = join(ROOT, "test", "fixtures", "hostile-upstream.ts");
const FAKE_BROWSER = join(ROOT, "test", "fixtures", "fake-browser.ts");
const rand = () => crypto.randomUUID().replace(/-/g, "");
const ALICE = `alice-${rand()}`;
const BOB = `bob-${rand()}`;

function home(): { dir: string; env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), "mcx-http-"));
  mkdirSync(join(dir, ".config", "mcp", "servers"), { recursive: true });
  writeFileSync(
    join(dir, ".config", "mcp", "servers", "hostile.json"),
    JSON.stringify({ mcpServers: { hostile: { command: process.execPath, args: [FIXTURE] } } }),
  );
  return {
    dir,
    env: {
      HOME: dir,
      MCP_BRIDGE_STATE_DIR: join(dir, "state"),
      MCP_BRIDGE_RUNTIME: engine,
      MCP_BRIDGE_PREWARM: "0",
      MCP_BRIDGE_ASK_TOOLS: "hostile/slow",
      MCP_BRIDGE_ASK_TIMEOUT: "30",
    },
  };
}

describe("serve --http with static tokens", () => {
  let b: HttpBridge;
  let env: Record<string, string>;
  beforeAll(async () => {
    const h = home();
    env = {
      ...h.env,
      MCP_BRIDGE_HTTP_TOKENS: `alice=${ALICE},bob=${BOB}`,
      MCP_BRIDGE_HTTP_MAX_CONNECTIONS: "3",
      MCP_BRIDGE_USER_CALLS_PER_MINUTE: "1000",
    };
    b = await startHttpBridge(env);
  }, 60_000);
  afterAll(async () => {
    expect(await b?.close()).toBe(0);
  });

  test("no token: 401 pointing at the protected-resource metadata; a wrong token: invalid_token; health and metadata are public", async () => {
    const none = await modernPost(b.url, undefined, "tools/list", {});
    expect(none.status).toBe(401);
    const challenge = none.headers.get("www-authenticate")!;
    expect(challenge).toStartWith("Bearer ");
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)![1]!;
    expect(metadataUrl).toBe(`${b.origin}/.well-known/oauth-protected-resource/mcp`);
    expect(await (await fetch(metadataUrl)).json()).toMatchObject({ resource: b.url, bearer_methods_supported: ["header"] });
    const wrong = await modernPost(b.url, `not-${ALICE}`, "tools/list", {});
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect(await (await fetch(`${b.origin}/healthz`)).json()).toMatchObject({ ok: true });
  });

  test("a request from a foreign web origin, or to a host name the server does not answer to, is refused before anything else (DNS rebinding)", async () => {
    const foreign = await modernPost(b.url, ALICE, "tools/list", {}, { origin: "http://evil.example" });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.message).toContain("evil.example");
    const rebound = await fetch(b.url.replace("127.0.0.1", "localhost"), {
      method: "POST",
      headers: { host: "evil.example:80", "content-type": "application/json", authorization: `Bearer ${ALICE}` },
      body: "{}",
    });
    expect(rebound.status).toBe(403);
    // The server's own origin is fine.
    expect((await modernPost(b.url, ALICE, "tools/list", {}, { origin: b.origin })).status).toBe(200);
  });

  test("2025-11-25: a protocol session keeps Python state; DELETE ends it, and its default Python session with it", async () => {
    const c = await legacyClient(b.url, ALICE);
    expect((await c.client.listTools()).tools.map((t) => t.name)).toEqual(["run_python"]);
    await c.run("v = 'legacy'");
    const r = await c.run("v");
    expect(r.structured.value).toBe("'legacy'");
    const handle = r.structured.session as string;
    await c.close();
    // Its default session ended with it: its handle is now an ended session.
    const after = await modernRun(b.url, ALICE, "1", { session: handle });
    expect(after.result.structuredContent?.error).toMatchObject({ type: "SessionNotFound" });
    expect(JSON.stringify(after.result.content)).toContain("has ended");
  });

  test("2026-07-28: no session, every POST stands alone; state lives in the caller's Python session, by handle", async () => {
    const discover = await modernPost(b.url, ALICE, "server/discover", {});
    expect(discover.body.result).toMatchObject({ resultType: "complete", supportedVersions: ["2026-07-28", "2025-11-25"] });
    const first = await modernRun(b.url, ALICE, "w = 6");
    expect(first.result.resultType).toBe("complete");
    const mine = first.result.structuredContent?.session as string;
    expect((await modernRun(b.url, ALICE, "w * 7")).result.structuredContent?.value).toBe("42");
    const other = await modernRun(b.url, ALICE, "w = 1", { session: "new" });
    const second = other.result.structuredContent?.session as string;
    expect(second).not.toBe(mine);
    expect((await modernRun(b.url, ALICE, "w", { session: second })).result.structuredContent?.value).toBe("1");
    expect((await modernRun(b.url, ALICE, "w", { session: mine })).result.structuredContent?.value).toBe("6");
  });

  test("users are kept apart: Bob with Alice's session handle or protocol session id finds nothing, and has his own default session", async () => {
    const a = await modernRun(b.url, ALICE, "secret = 'alice only'\nsecret");
    const handle = a.result.structuredContent?.session as string;
    const stolen = await modernRun(b.url, BOB, "secret", { session: handle });
    expect(stolen.result.isError).toBe(true);
    expect(stolen.result.structuredContent?.error).toMatchObject({ type: "SessionNotFound" });
    expect(JSON.stringify(stolen.result)).not.toContain("alice only");
    const own = await modernRun(b.url, BOB, "'secret' in globals()");
    expect(own.result.structuredContent?.value).toBe("False");
    expect(own.result.structuredContent?.session).not.toBe(handle);
    const alices = await legacyClient(b.url, ALICE);
    const sid = alices.transport.sessionId!;
    const hijack = await fetch(b.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${BOB}`,
        "mcp-session-id": sid,
        "mcp-protocol-version": "2025-11-25",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" }),
    });
    expect(hijack.status).toBe(404);
    await alices.close();
  });

  test("approvals over HTTP: a 2025-11-25 client is asked on the call's stream; a 2026-07-28 one gets input_required, and only its own retry answers it", async () => {
    const asked: string[] = [];
    const c = await legacyClient(b.url, ALICE, {
      capabilities: { elicitation: { form: {} } },
      setup: (client) =>
        client.setRequestHandler(ElicitRequestSchema, async (req) => {
          asked.push(String(req.params.message));
          return { action: "accept", content: { decision: "once" } };
        }),
    });
    const r = await c.run("await mcp_hostile.slow(ms=1)", { servers: ["hostile"] });
    expect(r.isError).toBe(false);
    expect(asked.at(-1)).toContain("Tool: slow");
    await c.close();

    const held = await modernRun(b.url, ALICE, "await mcp_hostile.slow(ms=1)", { servers: ["hostile"] });
    expect(held.result.resultType).toBe("input_required");
    const state = (held.result as unknown as { requestState: string }).requestState;
    const [key] = Object.keys((held.result as unknown as { inputRequests: object }).inputRequests);
    const answer = { requestState: state, inputResponses: { [key!]: { action: "accept", content: { decision: "once" } } } };
    // Bob cannot answer Alice's question with her handle: it is unknown to his connection.
    const bobs = await modernPost(b.url, BOB, "tools/call", { name: "run_python", arguments: { code: "" }, ...answer });
    expect(bobs.body.error).toMatchObject({ code: -32602, message: expect.stringContaining("requestState is unknown") });
    const done = await modernPost(b.url, ALICE, "tools/call", { name: "run_python", arguments: { code: "" }, ...answer });
    expect(done.body.result).toMatchObject({ resultType: "complete", isError: false });
  }, 120_000);

  test("the audit log names who made each proxied call", async () => {
    await modernRun(b.url, BOB, "await mcp_hostile.echo(x=1)", { servers: ["hostile"] });
    const out = await run([BINARY, "audit", "--json"], { env: bridgeEnv(env) });
    const lines = out.stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(lines.find((l) => l.tool === "echo")).toMatchObject({ principal: "token:bob", server: "hostile", outcome: "ok" });
    expect(lines.find((l) => l.tool === "slow")).toMatchObject({ principal: "token:alice", by: "user" });
  });

  test("10,000 requests without a token are each refused, and the bridge answers the next signed-in call", async () => {
    let refused = 0;
    for (let round = 0; round < 20; round++) {
      const statuses = await Promise.all(
        Array.from({ length: 500 }, () =>
          fetch(b.url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }).then((r) => r.status),
        ),
      );
      refused += statuses.filter((s) => s === 401).length;
    }
    expect(refused).toBe(10_000);
    expect((await modernRun(b.url, ALICE, "2 + 2")).result.structuredContent?.value).toBe("4");
  }, 120_000);

  test("a client holding streams open gets as many protocol sessions as its limit, and no more; another user is not affected", async () => {
    // Each of the SDK client's sessions holds its standalone SSE stream open (GET) as long as it lives.
    const held = [];
    for (let i = 0; i < 3; i++) held.push(await legacyClient(b.url, BOB));
    const another = await fetch(b.url, {
      headers: {
        accept: "text/event-stream",
        authorization: `Bearer ${BOB}`,
        "mcp-session-id": held[0]!.transport.sessionId!,
        "mcp-protocol-version": "2025-11-25",
      },
    });
    expect(another.status).toBe(409); // one stream per session
    await another.body?.cancel();
    await expect(legacyClient(b.url, BOB)).rejects.toThrow(/429|most one user may/);
    const alice = await legacyClient(b.url, ALICE);
    expect((await alice.run("3 * 3")).structured.value).toBe("9");
    await alice.close();
    for (const c of held) await c.close();
  }, 60_000);
});

test("a restart loses the sessions' Python state and says so; the audit log and sign-in keep", async () => {
  const h = home();
  const env = { ...h.env, MCP_BRIDGE_HTTP_TOKENS: `alice=${ALICE}` };
  const first = await startHttpBridge(env);
  const before = await modernRun(first.url, ALICE, "kept = 1\nawait mcp_hostile.echo(x=1)", { servers: ["hostile"] });
  const handle = before.result.structuredContent?.session as string;
  expect(await first.close()).toBe(0);
  const second = await startHttpBridge(env);
  try {
    const after = await modernRun(second.url, ALICE, "kept", { session: handle });
    expect(after.result.structuredContent?.error).toMatchObject({ type: "SessionNotFound" });
    expect(JSON.stringify(after.result.content)).toContain("a bridge that restarted");
    // The same token signs in; a new default session works; the audit line from before is there.
    expect((await modernRun(second.url, ALICE, "'kept' in globals()")).result.structuredContent?.value).toBe("False");
    const audit = await run([BINARY, "audit", "--json"], { env: bridgeEnv(env) });
    expect(audit.stdout).toContain('"principal":"token:alice"');
    expect(audit.stdout).toContain('"tool":"echo"');
  } finally {
    await second.close();
  }
}, 120_000);

describe("each user's own sign-in to a remote upstream server", () => {
  let world: OAuthWorld;
  let b: HttpBridge;
  beforeAll(async () => {
    world = await startOAuthWorld();
    const h = home();
    writeFileSync(
      join(h.dir, ".config", "mcp", "servers", "prot.json"),
      JSON.stringify({ mcpServers: { prot: { type: "http", url: world.mcpUrl } } }),
    );
    b = await startHttpBridge({ ...h.env, MCP_BRIDGE_HTTP_TOKENS: `alice=${ALICE},bob=${BOB}` });
  }, 60_000);
  afterAll(async () => {
    await b?.close();
    await world?.close();
  });

  /** A 2025-11-25 client whose user follows sign-in links in their own browser, as `user`. */
  async function person(token: string, user: string) {
    const asked: string[] = [];
    const browsers: Array<ReturnType<typeof Bun.spawn>> = [];
    const c = await legacyClient(b.url, token, {
      capabilities: { elicitation: { form: {}, url: {} } },
      setup: (client) =>
        client.setRequestHandler(ElicitRequestSchema, async (req) => {
          if (req.params.mode !== "url") return { action: "decline" };
          asked.push(req.params.url);
          browsers.push(
            Bun.spawn([process.execPath, FAKE_BROWSER, req.params.url], {
              env: { ...process.env, FAKE_BROWSER_USER: user },
              stdout: "ignore",
              stderr: "ignore",
            }),
          );
          return { action: "accept" };
        }),
    });
    return { c, asked, browsers };
  }

  test("a sign-in comes back to the server's own callback and is that user's alone: another user signs in for themselves", async () => {
    const alice = await person(ALICE, "alice-user");
    const a = await alice.c.run("await mcp_prot.whoami()", { servers: ["prot"] });
    expect(a.structured.value).toBe("{'subject': 'alice-user'}");
    expect(alice.asked).toHaveLength(1);
    // The browser came back to this server, not to the user's own machine.
    expect(new URL(alice.asked[0]!).searchParams.get("redirect_uri")).toBe(`${b.origin}/oauth/callback`);
    expect(await alice.browsers[0]!.exited).toBe(0);
    // Bob is not signed in by Alice's sign-in: he is asked, signs in as himself, and gets his own identity.
    const bob = await person(BOB, "bob-user");
    const r = await bob.c.run("await mcp_prot.whoami()", { servers: ["prot"] });
    expect(r.structured.value).toBe("{'subject': 'bob-user'}");
    expect(bob.asked).toHaveLength(1);
    // Alice's next call still runs as her, and asks nothing.
    expect((await alice.c.run("await mcp_prot.whoami()")).structured.value).toBe("{'subject': 'alice-user'}");
    expect(alice.asked).toHaveLength(1);
    await alice.c.close();
    await bob.c.close();
  }, 120_000);
});

describe("serve --http with an OAuth authorization server", () => {
  let issuer: Issuer;
  let b: HttpBridge;
  beforeAll(async () => {
    issuer = await startIssuer();
    const h = home();
    b = await startHttpBridge({ ...h.env, MCP_BRIDGE_HTTP_ISSUER: issuer.issuer, MCP_BRIDGE_HTTP_SCOPES: "mcp:run" });
  }, 60_000);
  afterAll(async () => {
    await b?.close();
    await issuer?.close();
  });

  test("its tokens for this server sign users in, each its own principal; the metadata names the issuer", async () => {
    const meta = await (await fetch(`${b.origin}/.well-known/oauth-protected-resource/mcp`)).json();
    expect(meta).toMatchObject({ resource: b.url, authorization_servers: [issuer.issuer], scopes_supported: ["mcp:run"] });
    const alice = await issuer.token("alice", b.url);
    const bob = await issuer.token("bob", b.url);
    const a = await modernRun(b.url, alice, "me = 'a'\nme");
    expect(a.result.structuredContent?.value).toBe("'a'");
    const stolen = await modernRun(b.url, bob, "me", { session: a.result.structuredContent?.session as string });
    expect(stolen.result.structuredContent?.error).toMatchObject({ type: "SessionNotFound" });
    const c = await legacyClient(b.url, bob);
    expect((await c.run("1 + 1")).structured.value).toBe("2");
    await c.close();
  });

  test("refused: a token for another audience, an expired token, one without the scope, a forged one", async () => {
    const elsewhere = await issuer.token("alice", "http://127.0.0.1:1/other/mcp");
    const other = await modernPost(b.url, elsewhere, "tools/list", {});
    expect(other.status).toBe(401);
    expect(other.body.error_description).toContain("another resource");

    const short = await issuer.token("short", b.url);
    expect((await modernPost(b.url, short, "tools/list", {})).status).toBe(200);
    // Its one second of life, and the clock skew allowed on top of it.
    await Bun.sleep((1 + CLOCK_SKEW_S) * 1000 + 300);
    const expired = await modernPost(b.url, short, "tools/list", {});
    expect(expired.status).toBe(401);
    expect(expired.body.error_description).toContain("expired");

    const unscoped = await issuer.token("alice", b.url, "mcp:admin");
    const scope = await modernPost(b.url, unscoped, "tools/list", {});
    expect(scope.status).toBe(403);
    expect(scope.headers.get("www-authenticate")).toContain('error="insufficient_scope"');

    const good = await issuer.token("alice", b.url);
    const [h, p] = good.split(".");
    const forged = `${h}.${p}.${Buffer.from("not the signature").toString("base64url")}`;
    const f = await modernPost(b.url, forged, "tools/list", {});
    expect(f.status).toBe(401);
    expect(f.body.error_description).toContain("signature");
  }, 60_000);
});

test("refuses to listen beyond loopback without sign-in, saying how to fix it", async () => {
  const r = await run([BINARY, "serve", "--http", "--listen", "0.0.0.0:0"], { env: bridgeEnv(home().env) });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain("refusing to serve 0.0.0.0:0 without sign-in");
  expect(r.stderr).toContain("MCP_BRIDGE_HTTP_TOKENS");
});
