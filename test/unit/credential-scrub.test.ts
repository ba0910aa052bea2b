import { describe, expect, test } from "bun:test";
import { maskUrl, secretPathSegments } from "../../src/config/mask.ts";
import { CredentialScrubber, REMOVED } from "../../src/upstream/credential-scrub.ts";

describe("credentials sent to an upstream are removed from what it sends back", () => {
  test("a stdio server's secret env values and arguments; not ordinary values, not short ones", () => {
    const s = new CredentialScrubber();
    s.addTransport({
      type: "stdio",
      command: "srv",
      args: ["--token", "sekrit-value-123", "--mode", "production", "--api-key=other-secret-456"],
      env: { API_TOKEN: "env-secret-789", NODE_ENV: "production", PIN: "1234", GH: "ghp_abcdefghijklmnopqrstuvwx" },
    });
    expect(s.text("a sekrit-value-123 b other-secret-456 c env-secret-789 d ghp_abcdefghijklmnopqrstuvwx")).toBe(
      `a ${REMOVED} b ${REMOVED} c ${REMOVED} d ${REMOVED}`,
    );
    expect(s.text("production mode, pin 1234")).toBe("production mode, pin 1234");
  });

  test("headers sent (Authorization whole and its token alone), JSON-escaped forms, keys and values at any depth", () => {
    const s = new CredentialScrubber();
    s.addHeaders(new Headers({ authorization: "Bearer a/b+c=d-token-1", "x-team": "blue-team-name" }));
    expect(s.text('{"auth":"Bearer a\\/b+c=d-token-1"}')).toBe(`{"auth":"${REMOVED}"}`);
    expect(s.text("token a/b+c=d-token-1 only")).toBe(`token ${REMOVED} only`);
    expect(s.text("blue-team-name")).toBe("blue-team-name");
    const v = { ok: 1, nested: [{ "a/b+c=d-token-1": "Bearer a/b+c=d-token-1" }] };
    expect(s.deep(v) as unknown).toEqual({ ok: 1, nested: [{ [REMOVED]: REMOVED }] });
    const clean = { a: ["x"] };
    expect(s.deep(clean)).toBe(clean);
  });

  test("a result nested too deep to read is refused, not passed on unread", () => {
    const s = new CredentialScrubber();
    s.add("some-long-secret");
    let deep: unknown = "some-long-secret";
    for (let i = 0; i < 2000; i++) deep = [deep];
    expect(() => s.deep(deep)).toThrow(/nested more than/);
  });

  test("a key in the URL's path is masked for display and scrubbed from answers", () => {
    const url = "https://actions.example.com/mcp/sk-ak-9f8e7d6c5b4a3f2e1d0c/sse?workspace=acme&key=zzz";
    expect(maskUrl(url)).toBe("https://actions.example.com/mcp/***/sse?workspace=acme&key=***");
    expect(secretPathSegments("/v1/mcp/2025-06-18/server-everything/sse")).toEqual([]);
    expect(secretPathSegments("/x/3f2a9c1e-8b7d-4e6f-9a0b-1c2d3e4f5a6b/mcp")).toEqual(["3f2a9c1e-8b7d-4e6f-9a0b-1c2d3e4f5a6b"]);
    const s = new CredentialScrubber();
    s.addTransport({ type: "http", url, headers: {} });
    expect(s.text("404 for /mcp/sk-ak-9f8e7d6c5b4a3f2e1d0c/sse")).toBe(`404 for /mcp/${REMOVED}/sse`);
  });
});
