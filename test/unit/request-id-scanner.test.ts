/** The id of a message too large to parse is found as the bytes stream past, wherever it sits. */
import { describe, expect, test } from "bun:test";
import { RequestIdScanner } from "../../src/server/request-id-scanner.ts";

function scanInPieces(text: string, piece = 7): RequestIdScanner {
  const s = new RequestIdScanner();
  const bytes = new TextEncoder().encode(text);
  for (let i = 0; i < bytes.length; i += piece) s.push(bytes.subarray(i, i + piece));
  return s;
}

describe("RequestIdScanner", () => {
  test("the id after a huge params object (the SDK puts id last), in pieces of any size", () => {
    const code = `x = "}{,:\\"id\\": 999" + '${"a".repeat(10_000)}'\n{"id": 5}`;
    const msg = JSON.stringify({
      method: "tools/call",
      params: { name: "run_python", arguments: { code, id: 7 } },
      jsonrpc: "2.0",
      id: 42,
    });
    for (const piece of [1, 3, 64, 65536]) {
      const s = scanInPieces(msg, piece);
      expect(s.id).toBe(42);
      expect(s.method).toBe("tools/call");
    }
  });

  test("string ids, ids first, unicode", () => {
    expect(scanInPieces(JSON.stringify({ jsonrpc: "2.0", id: "req-ü-1", method: "x", params: { id: 3 } })).id).toBe("req-ü-1");
    expect(scanInPieces(`{"id" : 17 , "method":"ping"}`).id).toBe(17);
  });

  test("no id (a notification), nested ids only, or garbage: nothing is made up", () => {
    expect(scanInPieces(JSON.stringify({ jsonrpc: "2.0", method: "notifications/x", params: { id: 1 } })).id).toBeUndefined();
    expect(scanInPieces(`[{"id": 1}]`).id).toBeUndefined();
    expect(scanInPieces(`not json at all "id": 3`).id).toBeUndefined();
    expect(scanInPieces(`{"id": {"nested": 1}, "method": "x"}`).id).toBeUndefined();
    expect(scanInPieces(`{"id": ${"1".repeat(400)}}`).id).toBeUndefined();
  });

  test("a truncated message still yields an id seen before the cut", () => {
    expect(scanInPieces(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"code":"aaaa`).id).toBe(9);
  });
});
