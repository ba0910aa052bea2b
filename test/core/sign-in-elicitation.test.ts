/**
 * A remote server that wants an OAuth sign-in, met in the middle of a call by a client that supports
 * URL-mode elicitation: the bridge offers the authorization link there, the user signs in, and the
 * call is made again. Real parts: the OAuth world of test/fixtures/oauth-world.ts (oidc-provider in
 * front of the SDK's Streamable HTTP server), the SDK's Client in-process, a local-python session. The
 * stand-in is the browser (test/fixtures/fake-browser.ts), which the client's handler opens on the URL
 * it was given, as a client would show the link to its user.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  type ElicitRequest,
  type ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";
import { startOAuthWorld, type OAuthWorld } from "../fixtures/oauth-world.ts";
import { localBridge, type LocalBridge } from "../support/local-bridge.ts";
import { ROOT } from "../support/env.ts";

const FAKE_BROWSER = join(ROOT, "test", "fixtures", "fake-browser.ts");

let world: OAuthWorld;
beforeAll(async () => {
  world = await startOAuthWorld();
}, 60_000);
afterAll(async () => {
  await world?.close();
});

async function bridgeFor(answer: (p: ElicitRequest["params"]) => ElicitResult) {
  const home = mkdtempSync(join(tmpdir(), "mcx-signin-"));
  writeFileSync(join(home, ".claude.json"), JSON.stringify({ mcpServers: { prot: { type: "http", url: world.mcpUrl } } }));
  const asked: Array<ElicitRequest["params"]> = [];
  const completed: string[] = [];
  const browsers: Array<ReturnType<typeof Bun.spawn>> = [];
  const b = await localBridge({ HOME: home }, { elicitation: { form: {}, url: {} } }, (client) => {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params);
      const a = answer(req.params);
      // The user follows the link the client shows.
      if (a.action === "accept" && req.params.mode === "url")
        browsers.push(Bun.spawn([process.execPath, FAKE_BROWSER, req.params.url], { stdout: "ignore", stderr: "ignore" }));
      return a;
    });
    client.setNotificationHandler(ElicitationCompleteNotificationSchema, async (n) => {
      completed.push(n.params.elicitationId);
    });
  });
  return { b, asked, completed, browsers };
}

const whoami = `
from mcp import McpError
try:
    out = await mcp_prot.whoami()
except McpError as e:
    out = (type(e).__name__, e.kind, str(e))
out`;

describe("sign-in offered through the client (URL-mode elicitation)", () => {
  let open: LocalBridge[] = [];
  afterAll(async () => {
    await Promise.all(open.map((b) => b.close()));
    open = [];
  });

  test("the client shows the authorization link; once the user signs in, the call is made again and works", async () => {
    const { b, asked, completed, browsers } = await bridgeFor(() => ({ action: "accept" }));
    open.push(b);
    const r = await b.run(whoami, { servers: ["prot"] });
    expect(r.structured.value).toBe("{'subject': 'alice'}");
    expect(asked).toHaveLength(1);
    const q = asked[0]! as Extract<ElicitRequest["params"], { mode: "url" }>;
    expect(q.mode).toBe("url");
    expect(q.message).toBe("Sign in to prot so that sandbox code can use its tools; the code waits until you finish in the browser.");
    const url = new URL(q.url);
    expect(url.origin).toBe(world.issuer);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("redirect_uri")).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(completed).toEqual([q.elicitationId]);
    expect(await browsers[0]!.exited).toBe(0);
    // Signed in for good: the next call asks nothing.
    expect((await b.run("await mcp_prot.whoami()")).structured.value).toBe("{'subject': 'alice'}");
    expect(asked).toHaveLength(1);
  }, 60_000);

  test("declining the link gives the usual error naming the login command", async () => {
    const { b, asked } = await bridgeFor(() => ({ action: "decline" }));
    open.push(b);
    const r = await b.run(whoami, { servers: ["prot"] });
    expect(String(r.structured.value)).toBe(
      "('McpToolError', 'auth_required', 'server prot needs you to sign in (OAuth): you have not signed in to it yet; run `mcp-code-exec auth login prot` in a terminal, then call again')",
    );
    expect(asked.map((a) => a.mode)).toEqual(["url"]);
  }, 60_000);
});
