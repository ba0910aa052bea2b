import { describe, expect, test } from "bun:test";
import { decodeFrame, LineSplitter } from "../../src/sandbox/frames.ts";

describe("frames from the sandbox", () => {
  test("valid frames decode", () => {
    const r = decodeFrame('{"t":"result","id":3,"stdout":"hi\\n","value":"1"}');
    expect(r).toEqual({ ok: true, frame: { t: "result", id: 3, stdout: "hi\n", value: "1" } });
    expect(decodeFrame('{"t":"ready","protocol":1,"python":"3.11.2"}').ok).toBe(true);
  });

  test("malformed frames are errors with context, never throws", () => {
    const notJson = decodeFrame("{nope");
    expect(notJson.ok).toBe(false);
    if (!notJson.ok) expect(notJson.error).toContain("not JSON");
    const wrongType = decodeFrame('{"t":"result","id":"1"}');
    expect(wrongType.ok).toBe(false);
    if (!wrongType.ok) expect(wrongType.error).toContain("id");
    const unknown = decodeFrame('{"t":"launch_missiles"}');
    expect(unknown.ok).toBe(false);
    const negative = decodeFrame('{"t":"result","id":-1}');
    expect(negative.ok).toBe(false);
    expect(decodeFrame("[]").ok).toBe(false);
    expect(decodeFrame("null").ok).toBe(false);
  });
});

describe("LineSplitter", () => {
  const enc = (s: string) => new TextEncoder().encode(s);

  test("splits across chunk boundaries, including inside a UTF-8 character", () => {
    const lines: string[] = [];
    const s = new LineSplitter(1024, (l) => lines.push(l), () => {});
    const bytes = enc("héllo\nwörld\n");
    for (const b of bytes) s.push(new Uint8Array([b]));
    expect(lines).toEqual(["héllo", "wörld"]);
  });

  test("an oversized line is dropped whole and reported; the next line still arrives", () => {
    const lines: string[] = [];
    const oversize: number[] = [];
    const s = new LineSplitter(10, (l) => lines.push(l), (n) => oversize.push(n));
    s.push(enc("x".repeat(25)));
    s.push(enc("y".repeat(5) + "\nok\n"));
    expect(oversize).toEqual([30]);
    expect(lines).toEqual(["ok"]);
  });

  test("blank lines are ignored", () => {
    const lines: string[] = [];
    const s = new LineSplitter(100, (l) => lines.push(l), () => {});
    s.push(enc("\n\n a\n"));
    expect(lines).toEqual([" a"]);
  });
});
