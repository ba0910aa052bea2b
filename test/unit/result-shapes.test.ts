import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { renderSignature } from "../../src/docs/signature.ts";
import { ResultShapes, shapeOfResult, shapeOfValue } from "../../src/upstream/result-shapes.ts";

describe("observed result shapes", () => {
  test("keys and types, never values; nesting and long objects are cut", () => {
    expect(
      shapeOfValue({ id: 7, name: "secret-name", tags: ["a"], owner: { login: "x", site_admin: false }, score: 0.5, none: null }),
    ).toBe("{id: int, name: str, tags: [str], owner: {login: str, site_admin: bool}, score: float, none: None}");
    expect(shapeOfValue(Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i])))).toEndWith(", …}");
    expect(shapeOfValue({ a: { b: { c: { d: 1 } } } })).toBe("{a: {b: {c: dict}}}");
  });

  test("what a proxied call returns: structured content, JSON text, plain text, errors", () => {
    expect(shapeOfResult({ content: [], structuredContent: { n: 1 } })).toBe("{n: int}");
    expect(shapeOfResult({ content: [{ type: "text", text: '[{"id": 1}]' }] })).toBe("[{id: int}]");
    expect(shapeOfResult({ content: [{ type: "text", text: "hello" }] })).toBe("str");
    expect(shapeOfResult({ content: [{ type: "text", text: "nope" }], isError: true })).toBeUndefined();
  });

  test("kept in the state dir, read back by a new instance, forgotten after a month", () => {
    const dir = mkdtempSync(join(tmpdir(), "shapes-"));
    let now = 1_000_000;
    const a = new ResultShapes(dir, () => now);
    a.record("github", "get_me", shapeOfValue({ login: "octocat", id: 583231 }));
    expect(readFileSync(join(dir, "result-shapes.json"), "utf8")).not.toContain("octocat");
    const b = new ResultShapes(dir, () => now);
    expect(b.get("github", "get_me")).toBe("{login: str, id: int}");
    now += 31 * 24 * 3600 * 1000;
    expect(b.get("github", "get_me")).toBeUndefined();
  });

  test("signatures show the observed shape only when no outputSchema is declared", () => {
    const tool = { name: "get_me", description: "The signed-in user." };
    expect(renderSignature(tool, { observedReturns: "{login: str}" })).toContain("Returns (observed, not declared): {login: str}");
    const declared = { ...tool, outputSchema: { type: "object", properties: { id: { type: "integer" } } } };
    expect(renderSignature(declared, { observedReturns: "{login: str}" })).not.toContain("observed");
    expect(renderSignature(declared)).toContain("Returns: {id?: int}");
  });
});
