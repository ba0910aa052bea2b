import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { argsDigest, AuditLog, auditPath, decisionsPath, type AuditRecord } from "../../src/audit/audit-log.ts";
import { audit, humanLine } from "../../src/cli/audit.ts";
import { Arrivals } from "../support/events.ts";

const record = (i: number, extra: Partial<AuditRecord> = {}): Omit<AuditRecord, "args_sha256"> => ({
  ts: "2026-01-02T03:04:05.678Z",
  run: "run-1-1",
  call: `call-${i}`,
  server: "gh",
  tool: "create_issue",
  decision: "allow",
  by: "annotation",
  outcome: "ok",
  ms: 12.5,
  ...extra,
});

const lines = (f: string) => (existsSync(f) ? readFileSync(f, "utf8").split("\n").filter(Boolean) : []);

describe("audit log", () => {
  test("lines written in one turn go out together, as JSON lines, in a file only the user can read", async () => {
    const state = mkdtempSync(join(tmpdir(), "audit-"));
    const log = new AuditLog({ path: auditPath(state), maxBytes: 1 << 20 });
    for (let i = 0; i < 3; i++) log.write(record(i), { i });
    expect(lines(auditPath(state))).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(lines(auditPath(state)).map((l) => JSON.parse(l).call)).toEqual(["call-0", "call-1", "call-2"]);
    expect(statSync(auditPath(state)).mode & 0o777).toBe(0o600);
    log.close();
  });

  test("rotated at maxBytes: three older files kept, nothing lost in between, two writers sharing the file", () => {
    const state = mkdtempSync(join(tmpdir(), "audit-"));
    const path = auditPath(state);
    const a = new AuditLog({ path, maxBytes: 2_000 });
    const b = new AuditLog({ path, maxBytes: 2_000 });
    const lineBytes = JSON.stringify({ ...record(100), args_sha256: argsDigest({ i: 100 }) }).length + 1;
    const n = Math.floor((4 * 2_000) / lineBytes) - 4; // fits in the current file and the three kept
    for (let i = 0; i < n; i++) {
      (i % 2 ? a : b).write(record(100 + i), { i: 100 + i });
      (i % 2 ? a : b).flush();
    }
    a.close();
    b.close();
    const all = [path, `${path}.1`, `${path}.2`, `${path}.3`].flatMap(lines);
    expect(existsSync(`${path}.4`)).toBe(false);
    for (const f of [path, `${path}.1`, `${path}.2`]) expect(statSync(f).size).toBeLessThanOrEqual(2_000);
    expect(new Set(all.map((l) => JSON.parse(l).call)).size).toBe(n);
  });

  test("calls that reached no server: the first of each kind in a run is written, its repeats become one counted line at the run's end", () => {
    const state = mkdtempSync(join(tmpdir(), "audit-"));
    const log = new AuditLog({ path: auditPath(state), maxBytes: 1 << 20 });
    const run = new AbortController();
    const unknown = (i: number) =>
      record(i, {
        server: "nope",
        decision: undefined,
        by: undefined,
        outcome: "unknown_server",
        ts: `2026-01-02T03:04:${String(i % 60).padStart(2, "0")}.000Z`,
      });
    for (let i = 0; i < 5000; i++) log.writeUnsent(unknown(i), { i }, run.signal);
    log.writeUnsent(record(9, { outcome: "refused", decision: "deny", by: "policy" }), {}, run.signal);
    log.flush();
    expect(lines(auditPath(state))).toHaveLength(2);
    run.abort();
    log.flush();
    const all = lines(auditPath(state)).map((l) => JSON.parse(l));
    expect(all).toHaveLength(3);
    expect(all[2]).toMatchObject({
      server: "nope",
      outcome: "unknown_server",
      call: "call-0+",
      repeated: 4999,
      last_ts: "2026-01-02T03:04:19.000Z",
    });
    expect(humanLine(JSON.stringify(all[2]))).toContain("and 4999 more like it until 2026-01-02T03:04:19.000Z");
    log.close();
  });

  test("a person's decisions outlive rotation: before the oldest file is dropped, its decision lines move to the decisions file", async () => {
    const state = mkdtempSync(join(tmpdir(), "audit-"));
    const path = auditPath(state);
    const log = new AuditLog({ path, maxBytes: 2_000 });
    log.write(record(0, { by: "user", answer: "once", tool: "delete_repo" }), {});
    log.write(record(1, { by: "user", answer: "remembered", tool: "delete_repo" }), {});
    log.flush();
    for (let i = 2; i < 400; i++) {
      log.write(record(i), { i });
      log.flush();
    }
    log.close();
    expect(existsSync(decisionsPath(path))).toBe(true);
    expect(lines(decisionsPath(path)).map((l) => JSON.parse(l).call)).toEqual(["call-0"]);
    expect(statSync(decisionsPath(path)).mode & 0o777).toBe(0o600);
    const out: string[] = [];
    await audit({ json: true }, { HOME: state, MCP_BRIDGE_STATE_DIR: state }, (l) => out.push(l));
    expect(JSON.parse(out[0]!).call).toBe("call-0");
    expect(out.some((l) => JSON.parse(l).call === "call-399")).toBe(true);
  });

  test("the arguments' digest ignores key order", () => {
    expect(argsDigest({ a: 1, b: [1, { c: 2, d: 3 }] })).toBe(argsDigest({ b: [1, { d: 3, c: 2 }], a: 1 }));
    expect(argsDigest({ a: 1 })).not.toBe(argsDigest({ a: 2 }));
    expect(argsDigest({})).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe("mcp-code-exec audit", () => {
  test("oldest first across rotated files; --lines keeps the last N; --json prints the stored lines", async () => {
    const state = mkdtempSync(join(tmpdir(), "audit-"));
    const log = new AuditLog({ path: auditPath(state), maxBytes: 600 });
    for (let i = 0; i < 6; i++) {
      log.write(record(i), { i });
      log.flush();
    }
    log.close();
    expect(existsSync(`${auditPath(state)}.1`)).toBe(true);
    const out: string[] = [];
    await audit({ json: true }, { HOME: state, MCP_BRIDGE_STATE_DIR: state }, (s) => out.push(s));
    expect(out.map((l) => JSON.parse(l).call)).toEqual(["call-0", "call-1", "call-2", "call-3", "call-4", "call-5"]);
    const last: string[] = [];
    await audit({ lines: 2 }, { HOME: state, MCP_BRIDGE_STATE_DIR: state }, (s) => last.push(s));
    expect(last).toHaveLength(2);
    expect(last[1]).toContain("call-5");
  });

  test("--follow prints what is appended, across a rotation, until stopped", async () => {
    const state = mkdtempSync(join(tmpdir(), "audit-"));
    const log = new AuditLog({ path: auditPath(state), maxBytes: 700 });
    log.write(record(0), { i: 0 });
    log.flush();
    const out = new Arrivals<string>();
    const stop = new AbortController();
    const following = audit({ follow: true, json: true }, { HOME: state, MCP_BRIDGE_STATE_DIR: state }, out.push, stop.signal);
    const seen = async (n: number) => (await out.count(n)).map((l) => JSON.parse(l).call);
    expect(await seen(1)).toEqual(["call-0"]);
    for (let i = 1; i <= 5; i++) {
      log.write(record(i), { i });
      log.flush();
    }
    expect(existsSync(`${auditPath(state)}.1`)).toBe(true);
    expect(await seen(6)).toEqual(["call-0", "call-1", "call-2", "call-3", "call-4", "call-5"]);
    stop.abort();
    await following;
    log.close();
  });

  test("a line as a person reads it", () => {
    expect(
      humanLine(
        JSON.stringify({ ...record(7, { by: "user", answer: "session", wait_ms: 2140, ms: 2301 }), args_sha256: argsDigest({ i: 7 }) }),
      ),
    ).toBe(
      `2026-01-02T03:04:05.678Z  run-1-1 call-7  gh/create_issue  allow by user (session, waited 2.1 s)  ok  2.3 s  args ${argsDigest({ i: 7 }).slice(0, 12)}`,
    );
    expect(humanLine(JSON.stringify({ ...record(8), decision: undefined, by: undefined, outcome: "unknown_tool" }))).toContain(
      "gh/create_issue  no decision  unknown_tool  13 ms",
    );
    expect(humanLine("not json")).toBe("not json");
  });
});
