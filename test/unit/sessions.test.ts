/** Sessions by handle (src/session/sessions.ts): minting, binding to a principal, expiry, limits. */
import { describe, expect, test } from "bun:test";
import { silentLogger } from "../../src/log.ts";
import type { Session } from "../../src/session/session.ts";
import { SessionError, Sessions } from "../../src/session/sessions.ts";

/** Sessions whose sessions are plain records of being closed (the map's logic is what is tested here). */
function sessions(opts: { ttlMs?: number; max?: number; reclaim?: ConstructorParameters<typeof Sessions>[0]["reclaim"] } = {}) {
  const made: Array<{ principal: string; closed: boolean; warmed?: boolean }> = [];
  const s = new Sessions({
    make: (principal) => {
      const rec: (typeof made)[number] = { principal, closed: false };
      made.push(rec);
      return { close: async () => void (rec.closed = true), warm: () => void (rec.warmed = true) } as unknown as Session;
    },
    ttlMs: opts.ttlMs ?? 0,
    maxPerPrincipal: opts.max ?? 8,
    reclaim: opts.reclaim,
    log: silentLogger,
  });
  return { s, made };
}
const problem = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return e instanceof SessionError ? { problem: e.problem, message: e.message } : { problem: "other", message: String(e) };
  }
  return undefined;
};

describe("sessions by handle", () => {
  test("a connection's default session is made once and kept; 'new' makes another; handles are 128-bit and opaque", () => {
    const { s, made } = sessions();
    const a = s.resolve("alice", "c1");
    expect(a.created).toBe(true);
    expect(a.handle).toMatch(/^s_[A-Za-z0-9_-]{22}$/);
    a.release();
    expect(s.resolve("alice", "c1").handle).toBe(a.handle);
    const b = s.resolve("alice", "c1", "new");
    expect(b.handle).not.toBe(a.handle);
    expect(s.resolve("alice", "c2", b.handle).session).toBe(b.session);
    expect(made).toHaveLength(2);
    // Another connection of the same principal has its own default.
    expect(s.resolve("alice", "c2").handle).not.toBe(a.handle);
  });

  test("a prewarmed default session goes to the first call: without session it stays the default, with 'new' it becomes that session", () => {
    const plain = sessions();
    plain.s.prewarm("local", "stdio");
    expect(plain.made).toEqual([{ principal: "local", closed: false, warmed: true }]);
    const own = plain.s.resolve("local", "stdio");
    expect(own.created).toBe(false);
    own.release();
    // Once used, it is the connection's session: a new one is made for "new".
    const other = plain.s.resolve("local", "stdio", "new");
    expect(other.handle).not.toBe(own.handle);
    expect(plain.made).toHaveLength(2);

    // A model that opens a session per conversation gets the warm one for its first, and the default is made later.
    const many = sessions();
    many.s.prewarm("local", "stdio");
    const first = many.s.resolve("local", "stdio", "new");
    expect(first.created).toBe(true);
    expect(many.made).toHaveLength(1);
    const second = many.s.resolve("local", "stdio", "new");
    expect(second.handle).not.toBe(first.handle);
    const fallback = many.s.resolve("local", "stdio");
    expect(new Set([first.handle, second.handle, fallback.handle]).size).toBe(3);
    expect(many.s.resolve("local", "stdio", first.handle).session).toBe(first.session);
    expect(many.made).toHaveLength(3);
  });

  test("another principal's handle, an unknown one and a malformed one are refused alike, telling how to go on", () => {
    const { s } = sessions();
    const a = s.resolve("alice", "c1");
    const stolen = problem(() => s.resolve("bob", "c9", a.handle));
    const never = problem(() => s.resolve("bob", "c9", "s_AAAAAAAAAAAAAAAAAAAAAA"));
    expect(stolen).toEqual({ problem: "unknown", message: never!.message.replace("s_AAAAAAAAAAAAAAAAAAAAAA", a.handle) });
    expect(stolen!.message).toContain('pass session="new"');
    expect(problem(() => s.resolve("bob", "c9", "../etc"))!.message).toContain('a handle from an earlier result (s_…) or "new"');
    // Bob's own default is not Alice's, even on a connection name Alice used, and hers stays.
    expect(s.resolve("bob", "c1").handle).not.toBe(a.handle);
    expect(s.resolve("alice", "c1").handle).toBe(a.handle);
  });

  test("idle past the time to live: closed, its handle answered as expired, and the default's next call carries the lost-state note", async () => {
    const { s, made } = sessions({ ttlMs: 1000 });
    const d = s.resolve("alice", "c1");
    d.release();
    const n = s.resolve("alice", "c1", "new");
    n.release();
    const busy = s.resolve("alice", "c1", "new"); // not released: a run in progress
    await s.sweep(performance.now() + 5000);
    expect(made.map((m) => m.closed)).toEqual([true, true, false]);
    expect(problem(() => s.resolve("alice", "c1", n.handle))).toMatchObject({
      problem: "expired",
      message: expect.stringContaining("idle for more than"),
    });
    const next = s.resolve("alice", "c1");
    expect(next.created).toBe(true);
    expect(next.lost).toContain("the session ended: idle");
    expect(s.resolve("alice", "c1").lost).toBeUndefined();
    busy.release();
    await s.close();
  });

  test("one principal holds at most maxPerPrincipal sessions; others are not affected", () => {
    const { s } = sessions({ max: 2 });
    s.resolve("alice", "c1");
    s.resolve("alice", "c1", "new");
    expect(problem(() => s.resolve("alice", "c1", "new"))).toMatchObject({ problem: "limit" });
    expect(s.resolve("bob", "c2").created).toBe(true);
  });

  test("a connection that ends takes its default session with it", async () => {
    const { s, made } = sessions();
    s.resolve("alice", "c1").release();
    await s.endConnection("alice", "c1");
    expect(made[0]!.closed).toBe(true);
    expect(s.count("alice")).toBe(0);
  });

  test("at the limit, a connection whose idle default session may go is ended to make room; a busy or shared one is not", async () => {
    // The connections of alice a client left open without ending them, as serve --http's reclaim sees them.
    const open = new Set(["c1", "c2", "c3"]);
    const asked: string[][] = [];
    let s!: Sessions;
    ({ s } = sessions({
      max: 2,
      reclaim: (principal, canEnd) => {
        const candidates = [...open].filter(canEnd);
        asked.push(candidates);
        const c = candidates[0];
        if (c === undefined) return false;
        open.delete(c);
        void s.endConnection(principal, c);
        return true;
      },
    }));
    const busy = s.resolve("alice", "c1"); // a run in progress: not released
    s.resolve("alice", "c2").release();
    const third = s.resolve("alice", "c3");
    expect(third.created).toBe(true);
    expect(asked[0]).toEqual(["c2"]);
    expect(s.count("alice")).toBe(2);
    third.release();
    // c3's default is now also called by its handle from c1: ending c3 would not free it.
    s.resolve("alice", "c1", third.handle).release();
    expect(problem(() => s.resolve("alice", "c9"))).toMatchObject({ problem: "limit" });
    expect(asked.at(-1)).toEqual([]);
    busy.release();
  });

  test("a default session also called by its handle from another connection outlives its own connection", async () => {
    const { s, made } = sessions();
    const d = s.resolve("alice", "c1");
    d.release();
    s.resolve("alice", "c2", d.handle).release();
    await s.endConnection("alice", "c1");
    expect(made[0]!.closed).toBe(false);
    expect(s.resolve("alice", "c2", d.handle).session).toBe(d.session);
    // c1's next default is a new one.
    expect(s.resolve("alice", "c1").handle).not.toBe(d.handle);
  });
});

describe("adopting a session another bridge started (resolveAdopting)", () => {
  /** Sessions whose adopt() says whether the engine had the handle's sandbox: a stand-in for the engine's answer. */
  function adopting(has: (principal: string, handle: string) => boolean) {
    const asked: string[] = [];
    const closed: string[] = [];
    const s = new Sessions({
      make: (principal, handle) =>
        ({
          adopt: async () => {
            asked.push(handle);
            await Promise.resolve();
            return has(principal, handle);
          },
          close: async () => void closed.push(handle),
          lost: undefined,
        }) as unknown as Session,
      ttlMs: 0,
      maxPerPrincipal: 8,
      log: silentLogger,
    });
    return { s, asked, closed };
  }
  const H = "s_AAAAAAAAAAAAAAAAAAAAAA";

  test("a handle the engine still runs a sandbox for is adopted under that handle, once for calls at the same time", async () => {
    const { s, asked } = adopting(() => true);
    const [a, b] = await Promise.all([s.resolveAdopting("alice", "c1", H), s.resolveAdopting("alice", "c2", H)]);
    expect(a.handle).toBe(H);
    expect(b.handle).toBe(H);
    expect(a.session).toBe(b.session);
    expect(asked).toEqual([H]);
    expect(s.count("alice")).toBe(1);
  });

  test("a handle with no sandbox (or another principal's) is SessionNotFound, and nothing is kept", async () => {
    const { s, closed } = adopting((principal) => principal === "bob");
    const err = await s.resolveAdopting("alice", "c1", H).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SessionError);
    expect((err as SessionError).problem).toBe("unknown");
    expect(s.count()).toBe(0);
    expect(closed).toEqual([H]);
  });

  test("'new', no session and malformed handles never ask the engine", async () => {
    const { s, asked } = adopting(() => true);
    await s.resolveAdopting("alice", "c1");
    await s.resolveAdopting("alice", "c1", "new");
    await s.resolveAdopting("alice", "c1", "s_short").catch(() => undefined);
    expect(asked).toEqual([]);
  });
});
