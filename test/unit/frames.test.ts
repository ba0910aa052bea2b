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

describe("result parts are bounded one by one", () => {
  test("a forged table (too wide, huge cells) is refused with a note; the rest of the result arrives", () => {
    const table = {
      columns: Array.from({ length: 500 }, (_, i) => `c${i}`),
      rows: [Array.from({ length: 500 }, () => "x".repeat(10_000))],
      total_rows: 1,
      total_columns: 500,
    };
    const r = decodeFrame(JSON.stringify({ t: "result", id: 1, value: "df", table }));
    expect(r.ok).toBe(true);
    if (!r.ok || r.frame.t !== "result") throw new Error("expected a result frame");
    expect(r.frame.value).toBe("df");
    expect(r.frame.table).toBeUndefined();
    expect(r.frame.display_notes?.[0]).toStartWith("the bridge refused this result's table: columns:");
  });

  test("nested cells and too many files are refused the same way", () => {
    const r = decodeFrame(
      JSON.stringify({
        t: "result",
        id: 2,
        table: { columns: ["a"], rows: [[{ deep: [1, 2] }]], total_rows: 1, total_columns: 1 },
        files: Array.from({ length: 40 }, (_, i) => ({ name: `f${i}`, mime_type: "text/plain", size: 1, text: "x" })),
      }),
    );
    if (!r.ok || r.frame.t !== "result") throw new Error("expected a result");
    expect(r.frame.table).toBeUndefined();
    expect(r.frame.files).toBeUndefined();
    expect(r.frame.display_notes).toHaveLength(2);
  });
});

describe("LineSplitter", () => {
  const enc = (s: string) => new TextEncoder().encode(s);

  test("splits across chunk boundaries, including inside a UTF-8 character", () => {
    const lines: string[] = [];
    const s = new LineSplitter(
      1024,
      (l) => lines.push(l),
      () => {},
    );
    const bytes = enc("{héllo\n{wörld\n");
    for (const b of bytes) s.push(new Uint8Array([b]));
    expect(lines).toEqual(["{héllo", "{wörld"]);
  });

  test("an oversized line is dropped whole and reported; the next line still arrives", () => {
    const lines: string[] = [];
    const bad: Array<[string, number]> = [];
    const s = new LineSplitter(
      10,
      (l) => lines.push(l),
      (p, n) => bad.push([p, n]),
    );
    s.push(enc("{" + "x".repeat(24)));
    s.push(enc("y".repeat(5) + "\n{ok}\n"));
    expect(bad).toEqual([["frame of 30 bytes exceeds the 10-byte cap", 30]]);
    expect(lines).toEqual(["{ok}"]);
  });

  test("empty lines and lines that cannot be frames are reported without being decoded", () => {
    const lines: string[] = [];
    const bad: string[] = [];
    const s = new LineSplitter(
      100,
      (l) => lines.push(l),
      (p) => bad.push(p),
    );
    s.push(enc("\nx\n{a}\n"));
    expect(bad).toEqual(["empty line", "not a frame: does not start with {"]);
    expect(lines).toEqual(["{a}"]);
  });

  test("stop() drops the rest of the chunk at once", () => {
    const lines: string[] = [];
    const s = new LineSplitter(
      100,
      (l) => {
        lines.push(l);
        s.stop();
      },
      () => {},
    );
    s.push(enc("{1}\n{2}\n{3}\n"));
    expect(lines).toEqual(["{1}"]);
  });
});
