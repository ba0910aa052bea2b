import { describe, expect, test } from "bun:test";
import { CALL_TOOL_RESULT, callToolResultProblem, LineBuffer } from "../../src/upstream/wire-reading.ts";

const msg = (id: number, extra = "") => `{"jsonrpc":"2.0","id":${id},"result":{"x":"${extra}"}}\n`;

function readAll(b: LineBuffer): unknown[] {
  const out: unknown[] = [];
  for (let m = b.readMessage(); m !== null; m = b.readMessage()) out.push(m);
  return out;
}

describe("LineBuffer (the upstream stdio reader)", () => {
  test("messages split anywhere across chunks, and several in one chunk, come out whole and in order", () => {
    const text = msg(1, "é".repeat(50)) + msg(2) + msg(3, "z".repeat(300));
    const bytes = Buffer.from(text);
    for (const size of [1, 2, 7, 64, bytes.length]) {
      const b = new LineBuffer(1 << 20);
      const got: unknown[] = [];
      for (let o = 0; o < bytes.length; o += size) {
        b.append(bytes.subarray(o, o + size));
        got.push(...readAll(b));
      }
      expect(got.map((m) => (m as { id: number }).id)).toEqual([1, 2, 3]);
      expect((got[0] as { result: { x: string } }).result.x).toBe("é".repeat(50));
    }
  });

  test("CRLF line ends are accepted; nothing comes out before the newline", () => {
    const b = new LineBuffer(1 << 20);
    b.append(Buffer.from(msg(1).replace("\n", "")));
    expect(b.readMessage()).toBeNull();
    b.append(Buffer.from("\r\n"));
    expect((b.readMessage() as { id: number }).id).toBe(1);
  });

  test("a line that is not JSON, or not JSON-RPC, is an error for that line only; one that names an answer's id fails that request now", () => {
    const b = new LineBuffer(1 << 20);
    b.append(
      Buffer.from(
        `this is not JSON\n[1,2]\n{"jsonrpc":"1.0","id":1}\n{"jsonrpc":"2.0","id":"r7","result":{"content":[{"type":"text","text":"cut\n{"jsonrpc":"2.0","id":9,"method":"x","params":\n${msg(4)}`,
      ),
    );
    expect(() => b.readMessage()).toThrow();
    expect(() => b.readMessage()).toThrow(/not a JSON-RPC 2.0 message/);
    expect(b.readMessage()).toMatchObject({
      id: 1,
      error: { code: -32700, message: expect.stringContaining("not a JSON-RPC 2.0 message") },
    });
    expect(b.readMessage()).toMatchObject({ id: "r7", error: { code: -32700, message: expect.stringContaining("could not be read") } });
    // A request from the server that cannot be read is not answered for it.
    expect(() => b.readMessage()).toThrow();
    expect((b.readMessage() as { id: number }).id).toBe(4);
  });

  test("more buffered than the limit: the SDK's own overflow message, and the buffer starts over", () => {
    const b = new LineBuffer(100);
    b.append(Buffer.from("x".repeat(60)));
    expect(() => b.append(Buffer.from("y".repeat(60)))).toThrow("ReadBuffer exceeded maximum size of 100 bytes");
    b.append(Buffer.from(msg(5)));
    expect((b.readMessage() as { id: number }).id).toBe(5);
  });
});

describe("CALL_TOOL_RESULT (the upstream result check)", () => {
  test("results of every content kind pass; content defaults to []", () => {
    const ok = {
      content: [
        { type: "text", text: "a", annotations: { audience: ["user"] } },
        { type: "image", data: "AAAA", mimeType: "image/png" },
        { type: "audio", data: "AAAA", mimeType: "audio/wav" },
        { type: "resource_link", uri: "file:///a", name: "a" },
        { type: "resource", resource: { uri: "file:///a", text: "t" } },
        { type: "resource", resource: { uri: "file:///b", blob: "AAAA" } },
      ],
      structuredContent: { a: 1 },
      isError: false,
      _meta: { k: 1 },
    };
    expect(callToolResultProblem(ok)).toBeUndefined();
    const r = CALL_TOOL_RESULT.safeParse({ structuredContent: { n: 1 } });
    expect(r.success && r.data.content).toEqual([]);
  });

  test("each kind of lie is named", () => {
    const cases: [unknown, string][] = [
      [42, "the result is not an object"],
      [[], "the result is not an object"],
      [{ content: {} }, "`content` is not a list"],
      [{ content: [null] }, "content[0] is not an object"],
      [{ content: [{ type: "image", data: "x" }] }, "content[0] is an image block without string `data` and `mimeType`"],
      [{ content: [{ type: "resource_link", uri: "u" }] }, "content[0] is a resource_link without string `uri` and `name`"],
      [
        { content: [{ type: "resource", resource: { uri: "u" } }] },
        "content[0] is a resource block whose resource has neither `text` nor `blob`",
      ],
      [{ content: [{ type: "resource", resource: "u" }] }, "content[0] is a resource block without a `resource` that has a string `uri`"],
      [{ content: [{}] }, "content[0] has an unknown type undefined"],
      [{ isError: "yes" }, "`isError` is not true or false"],
      [{ _meta: 1 }, "`_meta` is not an object"],
    ];
    for (const [value, problem] of cases) {
      expect(callToolResultProblem(value)).toBe(problem);
      const r = CALL_TOOL_RESULT.safeParse(value);
      expect(r.success).toBe(false);
      if (!r.success) expect(r.error.message).toContain(problem);
    }
  });
});
