/**
 * Python sessions by handle through the bridge's MCP server (a real SDK client, the real entrypoint on
 * the local-python engine): a call without `session` uses the default session, `session="new"` makes
 * another with its own interpreter, a handle picks one, and an unknown handle is a typed error.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { localBridge, type LocalBridge } from "../support/local-bridge.ts";

let b: LocalBridge;
beforeAll(async () => {
  b = await localBridge({}, {});
});
afterAll(() => b?.close());

describe("sessions by handle", () => {
  test("the default session keeps state; a new session has its own; each result names its session", async () => {
    // A caller that names no session (over stdio) is not told about handles: its results are as before.
    const first = await b.run("x = 41");
    expect(first.structured.session).toBeUndefined();
    expect(first.text).not.toContain("[session]");
    const other = await b.run("x = 1\nx", { session: "new" });
    const handle = other.structured.session as string;
    expect(handle).toMatch(/^s_[A-Za-z0-9_-]{22}$/);
    expect(other.text).toContain(handle);
    expect((await b.run("x + 1")).structured.value).toBe("42");
    expect((await b.run("x + 1", { session: handle })).structured).toMatchObject({ value: "2", session: handle });
    expect((await b.run("x")).structured.value).toBe("41");
  });

  test("an unknown handle is a typed error that says how to go on; the bridge keeps serving", async () => {
    const r = await b.run("1", { session: "s_AAAAAAAAAAAAAAAAAAAAAA" });
    expect(r.isError).toBe(true);
    expect(r.structured.error).toMatchObject({ type: "SessionNotFound" });
    expect(r.text).toContain('pass session="new"');
    expect((await b.run("2 + 2")).structured.value).toBe("4");
  });
});
