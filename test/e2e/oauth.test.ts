/**
 * Remote MCP servers behind OAuth 2.1, end to end: a real authorization server (oidc-provider from npm)
 * in front of a Streamable HTTP MCP server (the SDK's) that checks bearer tokens, the compiled binary's
 * `auth login|status|logout`, and proxied calls from sandbox code through a bridge the SDK's client talks
 * to. The browser is the one stand-in (test/fixtures/fake-browser.ts, given as MCP_BRIDGE_BROWSER): it
 * follows the redirects, fills the login form and presses consent as a user would.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { startOAuthWorld, type OAuthWorld } from "../fixtures/oauth-world.ts";
import { startBridge, type BridgeHandle } from "../support/bridge.ts";
import { BINARY } from "../support/binary.ts";
import { bridgeEnv, ENGINES, ROOT } from "../support/env.ts";

const FAKE_BROWSER = join(ROOT, "test", "fixtures", "fake-browser.ts");
const TOKEN_TTL_SEC = 4;

let world: OAuthWorld;
let home: string;
let cwd: string;
let state: string;
let marker: string;
let bridge: BridgeHandle;

function write(path: string, value: unknown) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(value, null, 2));
}

function env(extra: Record<string, string> = {}): Record<string, string> {
  return bridgeEnv({
    HOME: home,
    MCP_BRIDGE_STATE_DIR: state,
    MCP_BRIDGE_RUNTIME: ENGINES[0]!,
    MCP_BRIDGE_BROWSER: `${process.execPath} ${FAKE_BROWSER}`,
    ...extra,
  });
}

async function cli(args: string[], extra: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn([BINARY, ...args], { env: env(extra), cwd, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** The stored record of the protected server (what `auth login` wrote). */
function record(): { file: string; tokens: { access_token: string; refresh_token?: string; expires_in?: number }; tokensSavedAt: number } {
  const files = new Bun.Glob("*.json").scanSync(join(state, "auth"));
  for (const f of files) {
    const r = JSON.parse(readFileSync(join(state, "auth", f), "utf8"));
    if (r.url === world.mcpUrl && r.tokens) return { ...r, file: join(state, "auth", f) };
  }
  throw new Error("no stored sign-in");
}

/** Call a tool from sandbox code; returns the value, or (kind, message) of the McpError raised. */
async function call(server: string, tool: string): Promise<string> {
  const alias = server.replace(/-/g, "_");
  const r = await bridge.run(
    `from mcp import McpError\ntry:\n    out = await mcp_${alias}.${tool}()\nexcept McpError as e:\n    out = (type(e).__name__, e.kind, str(e))\nout`,
    { servers: [server] },
  );
  return String(r.structured.value ?? r.text);
}

beforeAll(async () => {
  world = await startOAuthWorld({ accessTokenTtl: TOKEN_TTL_SEC });
  home = mkdtempSync(join(tmpdir(), "mcx-oauth-home-"));
  cwd = mkdtempSync(join(tmpdir(), "mcx-oauth-proj-"));
  state = mkdtempSync(join(tmpdir(), "mcx-oauth-state-"));
  marker = join(tmpdir(), `mcx-oauth-marker-${process.pid}`);
  // The user's own file (Claude Code's ~/.claude.json): an OAuth server, and the same server with a headersHelper.
  write(join(home, ".claude.json"), {
    mcpServers: {
      prot: { type: "http", url: world.mcpUrl },
      helped: { type: "http", url: world.mcpUrl, headersHelper: `printf '{"X-Helper": "%s"}' "$CLAUDE_CODE_MCP_SERVER_NAME"` },
      local: { command: "true" },
    },
  });
  // A repository's file: its headersHelper would run a command on the host.
  write(join(cwd, ".mcp.json"), {
    mcpServers: { sneaky: { type: "http", url: world.mcpUrl, headersHelper: `touch ${marker}; echo '{}'` } },
  });
  bridge = await startBridge(env(), { cwd });
}, 120_000);

afterAll(async () => {
  await bridge?.close();
  await world?.close();
});

describe("before signing in", () => {
  test("a proxied call raises McpToolError naming the login command; the bridge registers nothing on its own", async () => {
    expect(await call("prot", "whoami")).toBe(
      "('McpToolError', 'auth_required', 'server prot needs you to sign in (OAuth): you have not signed in to it yet; run `mcp-code-exec auth login prot` in a terminal, then call again')",
    );
    expect(world.registrations).toEqual([]);
    expect(world.refused).toBeGreaterThan(0);
  });

  test("`servers` and `auth status` say the server needs a sign-in and how", async () => {
    const s = await cli(["servers"]);
    expect(s.stdout).toContain("auth: needs sign-in (you have not signed in to it yet");
    expect(s.stdout).toContain(
      `headersHelper (runs on this computer at each connection): printf '{"X-Helper": "%s"}' "$CLAUDE_CODE_MCP_SERVER_NAME"`,
    );
    expect(s.stdout).toContain("run `mcp-code-exec auth login prot`");
    const j = JSON.parse((await cli(["servers", "--json"])).stdout) as { servers: Array<{ name: string; auth?: { state: string } }> };
    expect(j.servers.find((x) => x.name === "prot")?.auth?.state).toBe("needs-login");
    expect(j.servers.find((x) => x.name === "local")?.auth).toBeUndefined();
    const st = await cli(["auth", "status", "--json"]);
    expect(st.code).toBe(0);
    // The three share one URL, so one sign-in (records are keyed by URL).
    expect(
      (JSON.parse(st.stdout) as { servers: Array<{ name: string; state: string }> }).servers.map((x) => [x.name, x.state]).sort(),
    ).toEqual([
      ["helped", "needs-login"],
      ["prot", "needs-login"],
      ["sneaky", "needs-login"],
    ]);
  });

  test("auth login refuses a local server and an unknown name, listing the remote ones", async () => {
    const local = await cli(["auth", "login", "local"]);
    expect(local.code).toBe(2);
    expect(local.stderr).toContain(
      "server local is a local (stdio) server; OAuth sign-in is for remote http/sse servers: remote servers: ",
    );
    for (const name of ["prot", "helped", "sneaky"]) expect(local.stderr).toContain(name);
    const unknown = await cli(["auth", "login", "nope"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no MCP server named "nope" is configured');
  });
});

describe("signing in and calling", () => {
  test("auth login: discovery from the 401 challenge, dynamic registration, PKCE, consent in the browser, loopback redirect", async () => {
    const r = await cli(["auth", "login", "prot"]);
    expect(r.stderr).toContain("Sign in to prot");
    expect(r.code).toBe(0);
    const url = new URL(/visit:\s+(\S+)/.exec(r.stderr)![1]!);
    expect(url.origin).toBe(world.issuer);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("resource")).toBe(world.mcpUrl);
    expect(url.searchParams.get("scope")).toBe("mcp:tools");
    expect(url.searchParams.get("redirect_uri")).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(r.stdout).toContain(`Signed in to prot; the access token expires in ${TOKEN_TTL_SEC}s and is refreshed automatically.`);
    expect(r.stdout).toContain("prot answers: 3 tool(s).");
    expect(world.registrations).toHaveLength(1);
    expect(world.tokenGrants).toEqual(["authorization_code"]);
  });

  test("the sign-in is stored readable by the user only", () => {
    const { file, tokens } = record();
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(file)).mode & 0o777).toBe(0o700);
    expect(tokens.refresh_token).toBeString();
  });

  test("a bridge started before the sign-in uses it at the next call; the token never reaches the sandbox", async () => {
    expect(await call("prot", "whoami")).toBe("{'subject': 'alice'}");
    const r = await bridge.run("import os\nfrom mcp import runtime\n(runtime.describe_server('prot'), dict(os.environ))", {
      servers: ["prot"],
    });
    const { tokens } = record();
    expect(r.text).toContain("'url': 'http://127.0.0.1:");
    expect(r.text).not.toContain(tokens.access_token);
    expect(r.text).not.toContain(tokens.refresh_token!);
    const st = await cli(["auth", "status", "prot"]);
    expect(st.stdout).toMatch(
      /prot \(http:\/\/127\.0\.0\.1:\d+\/mcp\): signed in; access token expires in \d+s, refreshed automatically|the access token expired and is refreshed at the next call/,
    );
  });

  test("an expired access token is refreshed automatically, once for many parallel calls", async () => {
    const before = record();
    const expiresAt = before.tokensSavedAt + before.tokens.expires_in! * 1000;
    // Wait for the expiry the authorization server announced (a known instant, not a guess).
    await Bun.sleep(Math.max(0, expiresAt - Date.now()) + 250);
    const grants = world.tokenGrants.length;
    const r = await bridge.run(
      "import asyncio\nrs = await asyncio.gather(*[mcp_prot.whoami() for _ in range(6)])\n[x['subject'] for x in rs]",
      { servers: ["prot"] },
    );
    // The whole answer in the comparison, so a failure shows what the code met.
    expect({ value: r.structured.value, text: r.text }).toEqual({
      value: "['alice', 'alice', 'alice', 'alice', 'alice', 'alice']",
      text: expect.stringContaining("alice"),
    });
    expect(world.tokenGrants.slice(grants)).toEqual(["refresh_token"]);
    const after = record();
    expect(after.tokens.access_token).not.toBe(before.tokens.access_token);
    expect(after.tokens.refresh_token).not.toBe(before.tokens.refresh_token); // rotated
  });

  test("a revoked sign-in gives the login hint; signing in again fixes it without restarting the bridge", async () => {
    await world.revokeAll();
    expect(await call("prot", "whoami")).toBe(
      "('McpToolError', 'auth_required', 'server prot needs you to sign in (OAuth): the sign-in expired or was revoked and could not be refreshed; run `mcp-code-exec auth login prot` in a terminal, then call again')",
    );
    expect((await cli(["auth", "status", "prot"])).stdout).toContain(
      "needs sign-in (the sign-in expired or was revoked and could not be refreshed",
    );
    const again = await cli(["auth", "login", "prot"]);
    expect(again.code).toBe(0);
    expect(world.registrations).toHaveLength(1); // the registration is reused
    expect(await call("prot", "whoami")).toBe("{'subject': 'alice'}");
  });

  test("denying consent fails the login with the server's answer and keeps the working sign-in", async () => {
    const r = await cli(["auth", "login", "prot"], { FAKE_BROWSER_DENY: "1" });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("sign-in to prot failed: the authorization server answered access_denied");
    expect(await call("prot", "whoami")).toBe("{'subject': 'alice'}");
  });
});

describe("auth command line", () => {
  test("--no-browser prints the link only, and the wait ends at --timeout with what to do", async () => {
    const r = await cli(["auth", "login", "prot", "--no-browser", "--timeout", "1"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`visit:\n\n  ${world.issuer}/auth?`);
    expect(r.stderr).not.toContain("fake-browser");
    expect(r.stderr).toContain(
      "sign-in to prot failed: no answer from the browser within 1s: run `mcp-code-exec auth login prot` to try again",
    );
  });

  test("bad input is refused with the usage", async () => {
    const action = await cli(["auth", "frobnicate"]);
    expect(action.code).toBe(2);
    expect(action.stderr).toContain('unknown auth action "frobnicate": use `auth login NAME`, `auth status [NAME]` or `auth logout NAME`');
    const timeout = await cli(["auth", "login", "prot", "--timeout", "soon"]);
    expect(timeout.code).toBe(2);
    expect(timeout.stderr).toContain('--timeout must be a positive number of seconds; got "soon"');
  });
});

describe("headersHelper", () => {
  test("from the user's own config it runs at connection and its headers reach the server next to the sign-in", async () => {
    expect(await call("helped", "seen_headers")).toBe("{'x_helper': 'helped'}");
  });

  test("from a project file the user has not approved it never runs: not for a call, a tool count or a sign-in", async () => {
    const out = await call("sneaky", "seen_headers");
    expect(out).toContain("server sneaky needs your approval before it may start: defined in a project file");
    expect(out).toContain(
      `would run: ${world.mcpUrl}, and its headersHelper command on this computer. To approve it, run: mcp-code-exec servers trust sneaky`,
    );
    expect(out).not.toContain(marker); // the command is not quoted to sandbox code
    const listed = await cli(["servers", "--tools"]);
    expect(listed.stdout).toContain("sneaky (mcp_sneaky) NEEDS APPROVAL");
    expect(listed.stdout).toContain(`headersHelper (runs on this computer at each connection): touch ${marker}; echo '{}'`);
    const login = await cli(["auth", "login", "sneaky"]);
    expect(login.code).toBe(2);
    expect(login.stderr).toContain("not signing in: server sneaky needs your approval before it may start");
    expect(existsSync(marker)).toBe(false);
  });

  test("once the user approves the server (servers trust), its headersHelper runs; the running bridge still holds what it read", async () => {
    const trusted = await cli(["servers", "trust", "sneaky"]);
    expect(trusted.code).toBe(0);
    expect(trusted.stdout).toContain(`and, at each connection, its headersHelper on this computer: touch ${marker}; echo '{}'`);
    await cli(["servers", "--tools"]);
    expect(existsSync(marker)).toBe(true);
    rmSync(marker);
    // The bridge started before the approval read its files then: still refused, still not run.
    expect(await call("sneaky", "seen_headers")).toContain("needs your approval");
    expect(existsSync(marker)).toBe(false);
    await cli(["servers", "untrust", "sneaky"]);
  });
});

describe("signing out", () => {
  test("logout revokes at the authorization server and deletes the file; the next call names the login command", async () => {
    const { file, tokens } = record();
    const r = await cli(["auth", "logout", "prot"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Signed out of prot: deleted ${file}; the authorization server revoked the token.`);
    expect(existsSync(file)).toBe(false);
    // The token is dead at the server too, not only forgotten here.
    const res = await fetch(world.mcpUrl, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${tokens.access_token}`,
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
      },
      body: "{}",
    });
    expect(res.status).toBe(401);
    expect(await call("prot", "whoami")).toContain("run `mcp-code-exec auth login prot`");
  });
});

describe("a client registered ahead of time (Claude Code's oauth.clientId and callbackPort)", () => {
  test("login uses it and its fixed redirect, with no dynamic registration", async () => {
    const port = 30000 + Math.floor(Math.random() * 20000);
    const redirect = `http://localhost:${port}/callback`;
    const pre = await startOAuthWorld({ preregistered: { clientId: "claude-code-client", redirectUris: [redirect] } });
    try {
      write(join(home, ".claude.json"), {
        mcpServers: { pre: { type: "http", url: pre.mcpUrl, oauth: { clientId: "claude-code-client", callbackPort: port } } },
      });
      const r = await cli(["auth", "login", "pre"]);
      expect(r.stderr).toContain(`redirect_uri=${encodeURIComponent(redirect)}`);
      expect(r.stderr).toContain("client_id=claude-code-client");
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("pre answers: 3 tool(s).");
      expect(pre.registrations).toEqual([]);
      expect(pre.accepted.length).toBeGreaterThan(0);
    } finally {
      await pre.close();
    }
  });
});
