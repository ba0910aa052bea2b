/**
 * The parts of OAuth and header handling that need no authorization server: the token store, the
 * provider's rules in the background, headersHelper (real shell commands) and trust, the transport's
 * fetch (real loopback HTTP servers), the loopback redirect, the browser command, config.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, statSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AuthRequiredError } from "../../src/auth/auth-required.ts";
import { browserCommand } from "../../src/auth/browser.ts";
import { transportFetch } from "../../src/auth/fetch.ts";
import { helperHeaders } from "../../src/auth/headers-helper.ts";
import { startLoopback } from "../../src/auth/loopback.ts";
import { StoredOAuthProvider } from "../../src/auth/provider.ts";
import { createTokenStore } from "../../src/auth/token-store.ts";
import { loadConfig } from "../../src/config/env.ts";
import { discoverServers, type ServerEntry, type TrustInfo } from "../../src/config/servers.ts";
import { addTrust } from "../../src/config/trust-store.ts";

const tmp = (p: string) => mkdtempSync(join(tmpdir(), p));
const URL_A = "https://mcp.example.com/mcp";

describe("token store", () => {
  test("one 0600 file per URL in a 0700 folder; a name pointing elsewhere never gets the token", () => {
    const store = createTokenStore(tmp("mcx-auth-"));
    store.update(URL_A, "notion", (s) => ({
      ...s,
      tokens: { access_token: "at-1", token_type: "Bearer", expires_in: 60 },
      tokensSavedAt: Date.now(),
    }));
    const file = store.pathFor(URL_A);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(store.dir).mode & 0o777).toBe(0o700);
    expect(store.read("https://MCP.example.com:443/mcp")?.tokens?.access_token).toBe("at-1");
    expect(store.read("https://evil.example.com/mcp")).toBeUndefined();
    expect(store.list().map((r) => [r.server, r.url])).toEqual([["notion", URL_A]]);
  });

  test("a damaged or foreign file reads as nothing, and the next write replaces it", () => {
    const store = createTokenStore(tmp("mcx-auth-"));
    mkdirSync(store.dir, { recursive: true });
    writeFileSync(store.pathFor(URL_A), "{ not json");
    expect(store.read(URL_A)).toBeUndefined();
    writeFileSync(store.pathFor(URL_A), JSON.stringify({ version: 1, url: "https://other/", server: "x", updatedAt: "" }));
    expect(store.read(URL_A)).toBeUndefined();
    store.update(URL_A, "n", () => ({ needsLogin: { at: "t", reason: "r" } }));
    expect(store.read(URL_A)?.needsLogin?.reason).toBe("r");
    expect(store.remove(URL_A)).toBe(true);
    expect(store.remove(URL_A)).toBe(false);
  });
});

describe("provider in the background (a bridge serving calls)", () => {
  const target = { name: "notion", url: URL_A };

  test("with nothing stored it refuses to register a client and names the login command", () => {
    const store = createTokenStore(tmp("mcx-auth-"));
    const p = new StoredOAuthProvider(target, store, { kind: "background" }, "1.0");
    expect(() => p.clientInformation()).toThrow(new AuthRequiredError("notion", "you have not signed in to it yet"));
    expect(store.read(URL_A)?.needsLogin?.reason).toBe("you have not signed in to it yet");
  });

  test("it never starts an authorization", () => {
    const store = createTokenStore(tmp("mcx-auth-"));
    store.update(URL_A, "notion", () => ({
      client: { client_id: "c" },
      tokens: { access_token: "a", token_type: "Bearer", refresh_token: "r" },
    }));
    const p = new StoredOAuthProvider(target, store, { kind: "background" }, "1.0");
    expect(() => p.redirectToAuthorization(new URL("https://as.example.com/authorize"))).toThrow(
      /the sign-in expired or was revoked and could not be refreshed; run `mcp-code-exec auth login notion`/,
    );
  });

  test("a refused refresh forgets only the tokens it used, not newer ones another bridge saved", () => {
    const store = createTokenStore(tmp("mcx-auth-"));
    store.update(URL_A, "notion", () => ({
      client: { client_id: "c" },
      tokens: { access_token: "a1", token_type: "Bearer", refresh_token: "r1" },
    }));
    const p = new StoredOAuthProvider(target, store, { kind: "background" }, "1.0");
    expect(p.tokens()?.refresh_token).toBe("r1");
    // Meanwhile another bridge refreshed r1 into r2.
    store.update(URL_A, "notion", (s) => ({ ...s, tokens: { access_token: "a2", token_type: "Bearer", refresh_token: "r2" } }));
    p.invalidateCredentials("tokens");
    expect(store.read(URL_A)?.tokens?.refresh_token).toBe("r2");
    expect(p.tokens()?.refresh_token).toBe("r2");
    p.invalidateCredentials("tokens");
    expect(store.read(URL_A)?.tokens).toBeUndefined();
    expect(store.read(URL_A)?.client?.client_id).toBe("c");
  });

  test("an entry naming another client for the same URL neither sees nor clears the user's sign-in", () => {
    const store = createTokenStore(tmp("mcx-auth-"));
    store.update(URL_A, "notion", () => ({
      client: { client_id: "dcr" },
      tokens: { access_token: "mine", token_type: "Bearer", refresh_token: "r" },
    }));
    const other = new StoredOAuthProvider(
      { name: "sneaky", url: URL_A, oauth: { clientId: "bogus" } },
      store,
      { kind: "background" },
      "1.0",
    );
    expect(other.tokens()).toBeUndefined();
    other.invalidateCredentials("all");
    expect(store.read(URL_A)?.tokens?.access_token).toBe("mine");
    expect(store.list().map((r) => [r.server, r.clientId])).toEqual([["notion", undefined]]);
  });

  test("a configured client id is used as is (Claude Code's oauth.clientId)", () => {
    const store = createTokenStore(tmp("mcx-auth-"));
    const p = new StoredOAuthProvider({ ...target, oauth: { clientId: "pre", clientSecret: "s" } }, store, { kind: "background" }, "1.0");
    expect(p.clientInformation()).toEqual({ client_id: "pre", client_secret: "s" });
    expect(p.clientMetadata.token_endpoint_auth_method).toBe("client_secret_basic");
  });
});

const TRUSTED: TrustInfo = { state: "trusted", reason: "your own user-level file" };

function remoteEntry(source: string, headersHelper: string, trust: TrustInfo = TRUSTED): ServerEntry {
  return {
    name: "svc",
    alias: "svc",
    source,
    shadowed: [],
    configHash: "x",
    transport: { type: "http", url: "https://svc.example.com/mcp", headers: {}, headersHelper },
    client: "claude-code",
    scope: "user",
    at: "mcpServers.svc",
    digest: "sha256:x",
    trust,
    needs: [],
    notes: [],
  };
}

describe("headersHelper", () => {
  const ctx = { env: { PATH: process.env.PATH }, cwd: tmpdir() };

  test("runs through the shell with the server's name and URL, and returns its JSON headers", async () => {
    const e = remoteEntry(
      "/home/u/.claude.json",
      `printf '{"Authorization": "Bearer %s", "X-Url": "%s"}' "$CLAUDE_CODE_MCP_SERVER_NAME" "$CLAUDE_CODE_MCP_SERVER_URL"`,
    );
    expect(await helperHeaders(e, ctx)).toEqual({ Authorization: "Bearer svc", "X-Url": "https://svc.example.com/mcp" });
  });

  test("failures say what went wrong without echoing values", async () => {
    await expect(helperHeaders(remoteEntry("/f", "echo oops >&2; exit 3"), ctx)).rejects.toThrow(
      "headersHelper of server svc: the command exited with 3 (stderr: oops)",
    );
    await expect(helperHeaders(remoteEntry("/f", "echo not-json"), ctx)).rejects.toThrow("must print a JSON object of headers");
    const bad = helperHeaders(remoteEntry("/f", `echo '{"Authorization": ["secret-value"]}'`), ctx);
    await expect(bad).rejects.toThrow("printed JSON that is not an object of string headers (Authorization:");
    await expect(bad).rejects.not.toThrow("secret-value");
    await expect(helperHeaders(remoteEntry("/f", `printf '{"X": "a\\\\nb"}'`), ctx)).rejects.toThrow(
      "header values must not contain line breaks",
    );
  });

  test("an untrusted entry's command never runs", async () => {
    const marker = join(tmp("mcx-helper-"), "ran");
    const e = remoteEntry("/proj/.mcp.json", `touch ${marker}; echo '{}'`, {
      state: "needs-approval",
      reason: "defined in a project file",
      approve: "mcp-code-exec servers trust svc",
    });
    await expect(helperHeaders(e, ctx)).rejects.toThrow(
      "headersHelper of server svc: not run, because it would run a command on this computer and the server is not trusted: defined in a project file; to approve it, run: mcp-code-exec servers trust svc",
    );
    expect(() => statSync(marker)).toThrow();
  });
});

describe("headersHelper and trust (issue 10's model decides)", () => {
  test("a repository's headersHelper runs only once approved, and changing it needs approval again", async () => {
    const home = tmp("mcx-home-");
    const proj = join(home, "code", "repo");
    const marker = join(tmp("mcx-helper-"), "ran");
    mkdirSync(proj, { recursive: true });
    const file = join(proj, ".mcp.json");
    const define = (helper: string) =>
      writeFileSync(
        file,
        JSON.stringify({ mcpServers: { svc: { type: "http", url: "https://svc.example.com/mcp", headersHelper: helper } } }),
      );
    writeFileSync(
      join(home, ".claude.json"),
      JSON.stringify({
        mcpServers: { mine: { type: "http", url: "https://mine.example.com/mcp", headersHelper: `echo '{"X-Mine": "1"}'` } },
      }),
    );
    define(`touch ${marker}; echo '{}'`);
    const discover = () => discoverServers({ env: {}, home, cwd: proj, platform: "linux" });
    const ctx = { env: { PATH: process.env.PATH }, cwd: proj };
    const d = discover();
    const svc = () => discover().servers.find((s) => s.name === "svc")!;
    expect(svc().trust.state).toBe("needs-approval");
    await expect(helperHeaders(svc(), ctx)).rejects.toThrow("the server is not trusted: defined in a project file");
    expect(() => statSync(marker)).toThrow();
    // The user's own file needs no approval.
    expect(await helperHeaders(d.servers.find((s) => s.name === "mine")!, ctx)).toEqual({ "X-Mine": "1" });
    // Approved (what `servers trust svc` records): it runs.
    addTrust(d.trustFile, { name: "svc", file, digest: svc().digest });
    expect(svc().trust.state).toBe("trusted");
    expect(await helperHeaders(svc(), ctx)).toEqual({});
    expect(statSync(marker).isFile()).toBe(true);
    // The repository changes the command: the approval no longer covers it.
    define(`echo '{"X-Other": "1"}'`);
    expect(svc().trust).toMatchObject({
      state: "needs-approval",
      reason: expect.stringContaining("changed since you approved it"),
    });
    await expect(helperHeaders(svc(), ctx)).rejects.toThrow("not trusted");
  });
});

describe("the transport's fetch", () => {
  const seen: Array<{ port: number; headers: IncomingHttpHeaders; body: string }> = [];
  const servers = [createServer(), createServer()];
  const ports: number[] = [];
  let tokenRequests = 0;
  afterAll(() => servers.forEach((s) => s.close()));

  const up = async () => {
    if (ports.length) return;
    for (const s of servers) {
      s.on("request", async (req, res) => {
        let body = "";
        for await (const c of req) body += c;
        const port = (s.address() as AddressInfo).port;
        seen.push({ port, headers: req.headers, body });
        if (req.url === "/protected") {
          const ok = req.headers.authorization === "Bearer at-new";
          res.writeHead(ok ? 200 : 401, { "WWW-Authenticate": 'Bearer error="invalid_token"' }).end(ok ? `ok ${body}` : "expired");
          return;
        }
        if (body.includes("grant_type=refresh_token")) {
          tokenRequests++;
          await new Promise((r) => setTimeout(r, 100));
          res
            .writeHead(200, { "Content-Type": "application/json" })
            .end(JSON.stringify({ access_token: `at-${tokenRequests}`, token_type: "Bearer" }));
          return;
        }
        res.end("ok");
      });
      await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
      ports.push((s.address() as AddressInfo).port);
    }
  };

  test("the server's headers go to its origin only, not to its authorization server", async () => {
    await up();
    const f = transportFetch(`http://127.0.0.1:${ports[0]}/mcp`, { headers: () => ({ "X-Api-Key": "k1" }) });
    await f(`http://127.0.0.1:${ports[0]}/mcp`, { method: "POST", headers: { Accept: "application/json" }, body: "{}" });
    await f(`http://127.0.0.1:${ports[1]}/.well-known/oauth-authorization-server`);
    expect(seen.find((s) => s.port === ports[0])?.headers["x-api-key"]).toBe("k1");
    expect(seen.find((s) => s.port === ports[0])?.headers.accept).toBe("application/json");
    expect(seen.find((s) => s.port === ports[1])?.headers["x-api-key"]).toBeUndefined();
  });

  test("a request refused for an access token replaced meanwhile goes again once with the current one; others keep their 401", async () => {
    await up();
    let stored = "at-new";
    const f = transportFetch(`http://127.0.0.1:${ports[0]}/mcp`, { headers: () => ({}), accessToken: () => stored });
    const url = `http://127.0.0.1:${ports[0]}/protected`;
    const post = (token: string) => f(url, { method: "POST", headers: { Authorization: `Bearer ${token}` }, body: '{"id":7}' });
    const from = seen.length;
    // It left with the old token while a parallel request's refresh saved a new one.
    const late = await post("at-old");
    expect([late.status, await late.text()]).toEqual([200, 'ok {"id":7}']);
    expect(seen.slice(from).map((s) => [s.headers.authorization, s.body])).toEqual([
      ["Bearer at-old", '{"id":7}'],
      ["Bearer at-new", '{"id":7}'],
    ]);
    // Refused for the token that is still the stored one: the SDK's own handling (refresh, or the login hint) decides.
    stored = "at-revoked";
    const refused = await post("at-revoked");
    expect(refused.status).toBe(401);
    expect(seen.length - from).toBe(3);
    // Without a stored sign-in (the user's own Authorization header), a 401 is the answer.
    const own = transportFetch(`http://127.0.0.1:${ports[0]}/mcp`, { headers: () => ({ Authorization: "Bearer at-old" }) });
    expect((await own(url, { method: "POST", body: "{}" })).status).toBe(401);
    expect(seen.length - from).toBe(4);
  });

  test("parallel refreshes of one refresh token make one request and share its answer", async () => {
    await up();
    const f = transportFetch(`http://127.0.0.1:${ports[0]}/mcp`, { headers: () => ({}) });
    const refresh = (rt: string) =>
      f(`http://127.0.0.1:${ports[1]}/token`, {
        method: "POST",
        body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: rt }),
      }).then((r) => r.json());
    const before = tokenRequests;
    const answers = await Promise.all([refresh("rt-1"), refresh("rt-1"), refresh("rt-1")]);
    expect(answers.map((a) => (a as { access_token: string }).access_token)).toEqual([
      "at-" + (before + 1),
      "at-" + (before + 1),
      "at-" + (before + 1),
    ]);
    expect(tokenRequests - before).toBe(1);
    await refresh("rt-2");
    expect(tokenRequests - before).toBe(2);
  });
});

describe("loopback redirect", () => {
  test("a redirect with the wrong state is refused and the real one still completes", async () => {
    const lb = await startLoopback({ state: "s-123", server: "svc" });
    expect(lb.redirectUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    const forged = await fetch(`${lb.redirectUrl}?code=evil&state=other`);
    expect(forged.status).toBe(400);
    const ok = await fetch(`${lb.redirectUrl}?code=good&state=s-123`);
    expect(await ok.text()).toContain("Signed in to svc");
    expect(await lb.code).toBe("good");
  });

  test("an error from the authorization server, and a mismatched issuer, fail the login", async () => {
    const denied = await startLoopback({ state: "s", server: "svc" });
    await fetch(`${denied.redirectUrl}?error=access_denied&error_description=user+said+no&state=s`);
    await expect(denied.code).rejects.toThrow("the authorization server answered access_denied (user said no)");
    const mixup = await startLoopback({ state: "s", server: "svc" });
    mixup.expectIssuer("https://as.example.com");
    await fetch(`${mixup.redirectUrl}?code=c&state=s&iss=${encodeURIComponent("https://evil.example.com")}`);
    await expect(mixup.code).rejects.toThrow("possible mix-up attack");
  });

  test("a fixed port that is taken says which setting to change", async () => {
    const first = await startLoopback({ state: "s", server: "svc" });
    const port = Number(new URL(first.redirectUrl).port);
    await expect(startLoopback({ state: "s", server: "svc", port })).rejects.toThrow(
      `port ${port} for the sign-in redirect is in use; free it or change oauth.callbackPort`,
    );
    first.cancel(new Error("done"));
  });
});

describe("browser command", () => {
  test("MCP_BRIDGE_BROWSER as a command line, a JSON array, or none; platform defaults", () => {
    const configured = (v: string) => browserCommand(loadConfig({ MCP_BRIDGE_BROWSER: v }, tmpdir()).browser);
    expect(configured("firefox --new-window")).toEqual({ command: "firefox", args: ["--new-window"] });
    expect(configured('["/Applications/My Browser", "-x"]')).toEqual({ command: "/Applications/My Browser", args: ["-x"] });
    expect(configured("none")).toBeUndefined();
    expect(browserCommand(undefined, "", "darwin")).toEqual({ command: "open", args: [] });
    expect(browserCommand(undefined, "", "win32")).toEqual({ command: "rundll32", args: ["url.dll,FileProtocolHandler"] });
  });

  test("a malformed MCP_BRIDGE_BROWSER is refused with the rest of the configuration", () => {
    expect(() => loadConfig({ MCP_BRIDGE_BROWSER: '["firefox", 3]' }, tmpdir())).toThrow(
      'MCP_BRIDGE_BROWSER="[\\"firefox\\", 3]": expected a command line, or a JSON array of non-empty strings',
    );
  });
});

describe("config", () => {
  test("Claude Code's oauth and headersHelper, Cursor's auth, with each client's variables in the strings", () => {
    const home = tmp("mcx-home-");
    const cwd = tmp("mcx-proj-");
    writeFileSync(
      join(home, ".claude.json"),
      JSON.stringify({
        mcpServers: {
          a: {
            type: "http",
            url: "https://a.example.com/mcp",
            oauth: { clientId: "${CID}", callbackPort: 8765, scopes: ["read", "write"] },
            headersHelper: "get-token",
          },
          b: { type: "http", url: "https://b.example.com/mcp", oauth: { callbackPort: "x" } },
        },
      }),
    );
    mkdirSync(join(home, ".cursor"));
    writeFileSync(
      join(home, ".cursor", "mcp.json"),
      JSON.stringify({
        mcpServers: {
          c: { url: "https://c.example.com/mcp", auth: { CLIENT_ID: "cursor-id", CLIENT_SECRET: "${env:SECRET}", scopes: "x y" } },
        },
      }),
    );
    const d = discoverServers({ env: { CID: "client-1", SECRET: "s3" }, home, cwd, platform: "linux" });
    const t = (n: string) => d.servers.find((s) => s.name === n)?.transport;
    expect(t("a")).toEqual({
      type: "http",
      url: "https://a.example.com/mcp",
      headers: {},
      headersHelper: "get-token",
      oauth: { clientId: "client-1", callbackPort: 8765, scopes: "read write" },
    });
    expect(t("c")).toEqual({
      type: "http",
      url: "https://c.example.com/mcp",
      headers: {},
      oauth: { clientId: "cursor-id", clientSecret: "s3", scopes: "x y" },
    });
    expect(d.problems.map((p) => `${p.path}: ${p.message}`)).toEqual(["mcpServers.b.oauth.callbackPort: expected number, received string"]);
  });

  test("each client's fields only where that client documents them: VS Code's oauth.clientId; no headersHelper outside Claude Code and our own files", () => {
    const home = tmp("mcx-home-");
    const cwd = tmp("mcx-proj-");
    const put = (file: string, value: unknown) => {
      mkdirSync(join(file, ".."), { recursive: true });
      writeFileSync(file, JSON.stringify(value));
    };
    put(join(home, ".config", "Code", "User", "mcp.json"), {
      servers: {
        v: {
          type: "http",
          url: "https://v.example.com/mcp",
          oauth: { clientId: "${env:VSC}", callbackPort: 9999 },
          headersHelper: "vs-helper",
        },
      },
    });
    put(join(home, ".cursor", "mcp.json"), {
      mcpServers: { c: { url: "https://c.example.com/mcp", headersHelper: "cursor-helper", oauth: { clientId: "not-cursor" } } },
    });
    put(join(home, ".codeium", "windsurf", "mcp_config.json"), {
      mcpServers: { w: { serverUrl: "https://w.example.com/mcp", headersHelper: "w-helper" } },
    });
    put(join(home, ".config", "mcp", "servers", "own.json"), {
      type: "http",
      url: "https://own.example.com/mcp",
      headersHelper: "own-helper",
      oauth: { clientId: "own-id" },
    });
    const d = discoverServers({ env: { VSC: "vs-id" }, home, cwd, platform: "linux" });
    const t = (n: string) => d.servers.find((s) => s.name === n)?.transport;
    expect(d.problems).toEqual([]);
    expect(t("v")).toEqual({ type: "http", url: "https://v.example.com/mcp", headers: {}, oauth: { clientId: "vs-id" } });
    expect(t("c")).toEqual({ type: "http", url: "https://c.example.com/mcp", headers: {} });
    expect(t("w")).toEqual({ type: "http", url: "https://w.example.com/mcp", headers: {} });
    expect(t("own")).toEqual({
      type: "http",
      url: "https://own.example.com/mcp",
      headers: {},
      headersHelper: "own-helper",
      oauth: { clientId: "own-id" },
    });
    // The client keeps its own sign-in; the note says how the bridge gets one.
    expect(d.servers.find((s) => s.name === "v")?.notes).toContain(
      "VS Code signs in to it with OAuth and keeps that token to itself; the bridge signs in on its own: if the server asks for a sign-in, run `mcp-code-exec auth login v`",
    );
  });
});
