/**
 * The pruned JSON reader (src/config/json-pruned.ts) against JSON.parse: for every document and every
 * chunk size down to one byte (so that every string, escape and key crosses a chunk boundary somewhere),
 * what it keeps equals JSON.parse's value with the same selection; what is not strict JSON it leaves to
 * the full parser.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pruneObject, readPrunedJson, type Keep } from "../../src/config/json-pruned.ts";
import { PRUNED_READ_FROM_BYTES, readConfigObject } from "../../src/config/config-file.ts";

const dir = mkdtempSync(join(tmpdir(), "json-pruned-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = (text: string | Uint8Array) => {
  const f = join(dir, `f${n++}.json`);
  writeFileSync(f, text);
  return f;
};

const KEEP: Keep = { mcpServers: true, projects: (k) => k.startsWith("/keep") };

const TRICKY = [
  'a "quoted" word',
  "ends with a backslash \\",
  "two backslashes \\\\",
  '\\"',
  '\\\\"\\\\',
  "ünïcødé 日本語 🎉",
  "{[not structure]}",
  "tab\tnew\nline",
  "//not a comment",
  "",
];

function doc(seed: number): Record<string, unknown> {
  const s = (i: number) => TRICKY[(seed + i) % TRICKY.length]!;
  return {
    numStartups: seed,
    [s(0)]: { nested: [s(1), { [s(2)]: [s(3), null, true, false, -1.5e3] }] },
    mcpServers: { [s(4)]: { command: s(5), args: [s(6), s(7)], env: {} }, plain: { type: "http", url: "https://x.example/mcp" } },
    projects: {
      "/keep/a": { mcpServers: { [s(8)]: { command: "x" } }, history: [{ display: s(9) }], hasTrustDialogAccepted: true },
      [`/skip/${s(1)}`]: { history: [s(2), s(3), { [s(4)]: [[[]]] }] },
      '/keep/\u00e9\\"odd"': { n: 1e-7, deep: [{}, [], [[{ a: s(0) }]]] },
      [s(5)]: [],
    },
    tail: [s(6), 0, {}],
  };
}

describe("readPrunedJson", () => {
  for (let seed = 0; seed < 10; seed++) {
    const value = doc(seed);
    const expected = pruneObject(value, KEEP);
    for (const [how, text] of [
      ["compact", JSON.stringify(value)],
      ["indented", JSON.stringify(value, null, 2)],
      ["CRLF and tabs", JSON.stringify(value, null, "\t").replace(/\n/g, "\r\n")],
    ] as const) {
      test(`document ${seed}, ${how}: equal to JSON.parse's, at every chunk size`, () => {
        const f = file(text);
        for (const chunkBytes of [1, 2, 3, 5, 7, 16, 64, 1 << 20]) expect(readPrunedJson(f, KEEP, { chunkBytes })).toEqual(expected);
      });
    }
  }

  test("a byte-order mark is skipped", () => {
    const f = file(`\ufeff${JSON.stringify({ mcpServers: { a: { command: "a" } } })}`);
    expect(readPrunedJson(f, KEEP, { chunkBytes: 2 })).toEqual({ mcpServers: { a: { command: "a" } } });
  });

  test("keys that are not asked for, and projects that is not an object, are kept as JSON.parse has them", () => {
    const f = file(JSON.stringify({ projects: [1, 2], other: { mcpServers: 1 } }));
    expect(readPrunedJson(f, KEEP, { chunkBytes: 3 })).toEqual({ projects: [1, 2] });
  });

  test("a repeated key: the last one wins, as in JSON.parse", () => {
    const f = file('{"mcpServers": {"a": {"command": "1"}}, "mcpServers": {"b": {"command": "2"}}}');
    expect(readPrunedJson(f, KEEP, { chunkBytes: 4 })).toEqual(
      pruneObject(JSON.parse('{"mcpServers": {"a": 1}, "mcpServers": {"b": {"command": "2"}}}'), KEEP),
    );
  });

  test("__proto__ is an own key, as JSON.parse makes it, and pollutes nothing", () => {
    const f = file('{"projects": {"/keep/x": {"__proto__": {"polluted": true}}}, "mcpServers": {"__proto__": {"command": "p"}}}');
    const got = readPrunedJson(f, KEEP, { chunkBytes: 5 })!;
    expect(Object.keys(got.mcpServers as object)).toEqual(["__proto__"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(got).toEqual(
      pruneObject(
        JSON.parse('{"projects": {"/keep/x": {"__proto__": {"polluted": true}}}, "mcpServers": {"__proto__": {"command": "p"}}}'),
        KEEP,
      ),
    );
  });

  test.each([
    ["a comment", '{"mcpServers": {} // mine\n}'],
    ["a block comment in a skipped value", '{"other": {/* x */}, "mcpServers": {}}'],
    ["a trailing comma", '{"mcpServers": {},}'],
    ["a trailing comma in a kept value", '{"mcpServers": {"a": 1,}}'],
    ["a truncated file", '{"mcpServers": {"a": {"command": "x"}}, "projects": {"/skip": {"history": ["abc'],
    ["a truncated string at the end", '{"x": "abc\\"'],
    ["mismatched brackets in a skipped value", '{"other": [1, 2}, "mcpServers": {}}'],
    ["something after the object", '{"mcpServers": {}} {}'],
    ["an empty file", ""],
    ["an array at the top level", "[1, 2]"],
    ["a bad scalar in a kept value", '{"mcpServers": tru}'],
  ])("%s: not read here (the whole file is parsed, and says what is wrong)", (_what, text) => {
    const f = file(text);
    for (const chunkBytes of [1, 3, 1 << 20]) expect(readPrunedJson(f, KEEP, { chunkBytes })).toBeUndefined();
  });
});

describe("readConfigObject with a selection", () => {
  const big = (value: Record<string, unknown>) => {
    const projects = value.projects as Record<string, unknown>;
    for (let i = 0; JSON.stringify(projects).length < PRUNED_READ_FROM_BYTES * 1.5; i++)
      projects[`/skip/${i}`] = { history: Array.from({ length: 50 }, (_, j) => ({ display: `${TRICKY[j % TRICKY.length]} ${i}` })) };
    return value;
  };

  test("a large file gives what a small one with the same kept parts gives", () => {
    const value = big(doc(3));
    const f = file(JSON.stringify(value, null, 2));
    const small = file(JSON.stringify(pruneObject(value, KEEP)));
    const got = readConfigObject(f, "json", { keep: KEEP });
    expect(got).toEqual({ status: "ok", data: pruneObject(value, KEEP) });
    expect(got).toEqual(readConfigObject(small, "json", { keep: KEEP }));
  });

  test("a large file with comments and trailing commas is still read (as a whole)", () => {
    const value = big(doc(4));
    const text = `// written by hand\n${JSON.stringify(value, null, 2).replace(/\n}$/, ",\n}")}`;
    expect(readConfigObject(file(text), "json", { keep: KEEP })).toEqual({ status: "ok", data: pruneObject(value, KEEP) });
  });

  test("a large file cut short says where, as before", () => {
    const text = JSON.stringify(big(doc(5)), null, 2);
    const r = readConfigObject(file(text.slice(0, text.length - 100)), "json", { keep: KEEP });
    expect(r.status).toBe("error");
    expect((r as { message: string }).message).toMatch(/^invalid JSON at line \d+, column \d+/);
  });
});
