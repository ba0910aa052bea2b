/**
 * The pruned JSON reader (src/config/json-pruned.ts, json-scan.ts) against JSON.parse: for every
 * document and every chunk size down to one byte (so that every string, escape and key crosses a chunk
 * boundary somewhere), what it keeps equals JSON.parse's value with the same selection, and it gives
 * up on exactly the files JSON.parse refuses. The seeded fuzz of the same oracle is json-pruned-fuzz.test.ts.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pruneObject, readPrunedJson, selectKeys, type Select } from "../../src/config/json-pruned.ts";
import { PRUNED_READ_FROM_BYTES, readConfigObject } from "../../src/config/config-file.ts";

const dir = mkdtempSync(join(tmpdir(), "json-pruned-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = (text: string | Uint8Array) => {
  const f = join(dir, `f${n++}.json`);
  writeFileSync(f, text);
  return f;
};

/** As ~/.claude.json is read: mcpServers whole, of the projects wanted all but their history. */
const ENTRY: Select = (k) => (k === "history" ? undefined : true);
const SELECT = selectKeys({ mcpServers: true, projects: (k) => (k.startsWith("/keep") ? ENTRY : undefined) });

/** What the reader must give for a file: JSON.parse's value pruned, or undefined where JSON.parse refuses it. */
function oracle(f: string, select: Select): Record<string, unknown> | undefined {
  let text = readFileSync(f, "utf8");
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? pruneObject(value as Record<string, unknown>, select)
    : undefined;
}

const TRICKY = [
  'a "quoted" word',
  "ends with a backslash \\",
  "two backslashes \\\\",
  '\\"',
  '\\\\"\\\\',
  "ünïcødé 日本語 🎉",
  "{[not structure]}",
  "tab\tnew\nline\u0000nul\u001f",
  "//not a comment",
  "",
  "\ud800 lone surrogate",
];

function doc(seed: number): Record<string, unknown> {
  const s = (i: number) => TRICKY[(seed + i) % TRICKY.length]!;
  return {
    numStartups: seed,
    [s(0)]: { nested: [s(1), { [s(2)]: [s(3), null, true, false, -1.5e3, 0, -0, 1e-7, 123456789012345678901234567890] }] },
    mcpServers: { [s(4)]: { command: s(5), args: [s(6), s(7)], env: {} }, plain: { type: "http", url: "https://x.example/mcp" } },
    projects: {
      "/keep/a": { mcpServers: { [s(8)]: { command: "x" } }, history: [{ display: s(9) }], hasTrustDialogAccepted: true },
      // A path that is a prefix of another, and one the other is a prefix of: neither is the other.
      "/keep/a-b": { mcpServers: { ab: { command: "ab" } }, history: [] },
      [`/skip/${s(1)}`]: { history: [s(2), s(3), { [s(4)]: [[[]]] }] },
      '/keep/\u00e9\\"odd"': { n: 1e-7, deep: [{}, [], [[{ a: s(0) }]]], history: s(10) },
      "/keep/not-an-object": [1, { history: 2 }],
      [s(5)]: [],
    },
    tail: [s(6), 0, {}],
  };
}

/** Letters and slashes inside strings written as escapes (`\u0061`, `\/`): the same value to JSON.parse. */
function escapeNeedlessly(json: string): string {
  return json.replace(/"(?:[^"\\]|\\.)*"/g, (s) =>
    s.replace(
      /(\\u[0-9a-fA-F]{4}|\\.)|[a-z/]/g,
      (c, escape) => escape ?? (c === "/" ? "\\/" : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`),
    ),
  );
}

describe("readPrunedJson", () => {
  for (let seed = 0; seed < TRICKY.length; seed++) {
    const value = doc(seed);
    for (const [how, text] of [
      ["compact", JSON.stringify(value)],
      ["indented", JSON.stringify(value, null, 2)],
      ["CRLF and tabs", JSON.stringify(value, null, "\t").replace(/\n/g, "\r\n")],
      ["escaped where it need not be", escapeNeedlessly(JSON.stringify(value))],
    ] as const) {
      test(`document ${seed}, ${how}: equal to JSON.parse's, at every chunk size`, () => {
        const f = file(text);
        const expected = oracle(f, SELECT);
        expect(expected).toBeDefined();
        expect((expected!.projects as Record<string, unknown>)["/keep/a"]).not.toHaveProperty("history");
        for (const chunkBytes of [1, 2, 3, 5, 7, 16, 64, 1 << 18]) expect(readPrunedJson(f, SELECT, { chunkBytes })).toEqual(expected);
      });
    }
  }

  test("a byte-order mark is skipped", () => {
    const f = file(`\ufeff${JSON.stringify({ mcpServers: { a: { command: "a" } } })}`);
    expect(readPrunedJson(f, SELECT, { chunkBytes: 2 })).toEqual({ mcpServers: { a: { command: "a" } } });
  });

  test("keys that are not asked for, and projects that is not an object, are kept as JSON.parse has them", () => {
    const f = file(JSON.stringify({ projects: [1, 2], other: { mcpServers: 1 } }));
    expect(readPrunedJson(f, SELECT, { chunkBytes: 3 })).toEqual({ projects: [1, 2] });
  });

  test("a repeated key, at every level: the last one wins, in the first one's place, as in JSON.parse", () => {
    const text =
      '{"mcpServers": {"a": {"command": "1"}}, "projects": {"/keep/x": {"mcpServers": 1, "hasTrustDialogAccepted": false, "mcpServers": {"m": {}}, "hasTrustDialogAccepted": true}, "/keep/y": 1, "/keep/x": {"z": 2}, "/keep/y": {"history": [], "a": 1}}, "mcpServers": {"b": {"command": "2"}, "a": 3}, "projects": {"/keep/y": {"b": 2}, "/keep/x": {"c": 3}, "/keep/y": {"b": 4}}}';
    const f = file(text);
    const got = readPrunedJson(f, SELECT, { chunkBytes: 4 })!;
    expect(got).toEqual(oracle(f, SELECT)!);
    expect(Object.keys(got)).toEqual(["mcpServers", "projects"]);
    expect(Object.keys(got.mcpServers as object)).toEqual(["b", "a"]);
    expect(Object.keys(got.projects as object)).toEqual(["/keep/y", "/keep/x"]);
    expect(got.projects).toEqual({ "/keep/y": { b: 4 }, "/keep/x": { c: 3 } });
  });

  test("__proto__ is an own key, as JSON.parse makes it, and pollutes nothing", () => {
    const text =
      '{"projects": {"/keep/x": {"__proto__": {"polluted": true}}}, "mcpServers": {"__proto__": {"command": "p"}}, "__proto__": 1}';
    const got = readPrunedJson(file(text), SELECT, { chunkBytes: 5 })!;
    expect(Object.keys(got.mcpServers as object)).toEqual(["__proto__"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(got).toEqual(pruneObject(JSON.parse(text), SELECT));
  });

  test("a deep value (200,000 levels) is skipped as JSON.parse reads it, without a stack overflow", () => {
    const deep = `${"[".repeat(200_000)}${"]".repeat(200_000)}`;
    const f = file(`{"history": ${deep}, "mcpServers": {"a": ${'{"b": '.repeat(1000)}1${"}".repeat(1000)}}}`);
    expect(readPrunedJson(f, SELECT)).toEqual(oracle(f, SELECT)!);
  });

  test("a string of megabytes, skipped and kept, across chunks", () => {
    const big = `${'x\\\\\\"y'.repeat(300_000)}ünï`;
    const f = file(`{"other": "${big}", "mcpServers": {"s": "${big}"}, "projects": {"/keep/a": {"history": "${big}", "k": "${big}"}}}`);
    for (const chunkBytes of [7, 1 << 18]) expect(readPrunedJson(f, SELECT, { chunkBytes })).toEqual(oracle(f, SELECT)!);
  });

  // JSON.parse refuses these: so does the reader, wherever in the file the fault is (the caller then
  // parses the whole file and reports where, as it always did).
  test.each([
    ["a comment", '{"mcpServers": {} // mine\n}'],
    ["a block comment in a skipped value", '{"other": {/* x */}, "mcpServers": {}}'],
    ["a trailing comma", '{"mcpServers": {},}'],
    ["a trailing comma in a skipped array", '{"other": [1, 2,], "mcpServers": {}}'],
    ["a trailing comma in a kept value", '{"mcpServers": {"a": 1,}}'],
    ["a truncated file", '{"mcpServers": {"a": {"command": "x"}}, "projects": {"/skip": {"history": ["abc'],
    ["a truncated string at the end", '{"x": "abc\\"'],
    ["a file cut after the last member", '{"mcpServers": {}'],
    ["mismatched brackets in a skipped value", '{"other": [1, 2}, "mcpServers": {}}'],
    ["a missing comma in a skipped array", '{"other": [1 2], "mcpServers": {}}'],
    ["a missing colon in a skipped object", '{"other": {"a" 1}, "mcpServers": {}}'],
    ["a key that is not a string in a skipped object", '{"other": {a: 1}, "mcpServers": {}}'],
    ["something after the object", '{"mcpServers": {}} {}'],
    ["an empty file", ""],
    ["only whitespace", " \n\t"],
    ["an array at the top level", "[1, 2]"],
    ["a string at the top level", '"{}"'],
    ["a bad literal in a kept value", '{"mcpServers": tru}'],
    ["a bad literal in a skipped value", '{"other": [nul], "mcpServers": {}}'],
    ["a literal run into a word", '{"other": truex, "mcpServers": {}}'],
    ["a number with a leading zero", '{"other": 01, "mcpServers": {}}'],
    ["a number without digits after its point", '{"other": [1.], "mcpServers": {}}'],
    ["a number without exponent digits", '{"other": [1e+], "mcpServers": {}}'],
    ["a lone minus", '{"other": [-], "mcpServers": {}}'],
    ["a plus sign", '{"other": [+1], "mcpServers": {}}'],
    ["a raw newline in a skipped string", '{"other": ["a\nb"], "mcpServers": {}}'],
    ["a raw tab in a key", '{"projects": {"/skip\t": {}}, "mcpServers": {}}'],
    ["a NUL byte in a skipped string", '{"other": ["a\u0000b"], "mcpServers": {}}'],
    ["an unknown escape in a skipped string", '{"other": ["a\\xb"], "mcpServers": {}}'],
    ["a short \\u escape in a skipped string", '{"other": ["\\u12"], "mcpServers": {}}'],
    ["a \\u escape with a non-hex digit", '{"other": ["\\u12g4"], "mcpServers": {}}'],
    ["a non-JSON space (form feed)", '{"other":\f1, "mcpServers": {}}'],
    ["a single-quoted string", "{'mcpServers': {}}"],
    ["two byte-order marks", "\ufeff\ufeff{}"],
  ])("%s: not read here, as JSON.parse refuses it", (_what, text) => {
    const f = file(text);
    expect(oracle(f, SELECT)).toBeUndefined();
    for (const chunkBytes of [1, 3, 1 << 18]) expect(readPrunedJson(f, SELECT, { chunkBytes })).toBeUndefined();
  });

  test("a block of NUL bytes inside a long string (a crash's zero-filled page) is refused, as JSON.parse does", () => {
    const text = JSON.stringify({ projects: { "/skip": { history: [{ display: "z".repeat(20_000) }] } }, mcpServers: {} });
    const bytes = new TextEncoder().encode(text);
    bytes.fill(0, 8192, 12288);
    const f = file(bytes);
    expect(oracle(f, SELECT)).toBeUndefined();
    expect(readPrunedJson(f, SELECT)).toBeUndefined();
  });
});

describe("readConfigObject with a selection", () => {
  const big = (value: Record<string, unknown>) => {
    const projects = value.projects as Record<string, unknown>;
    for (let i = 0, size = 0; size < PRUNED_READ_FROM_BYTES * 1.5; i++) {
      const entry = { history: Array.from({ length: 50 }, (_, j) => ({ display: `${TRICKY[j % TRICKY.length]} ${i}` })) };
      projects[`/skip/${i}`] = entry;
      size += JSON.stringify(entry).length;
    }
    return value;
  };

  test("a large file gives what a small one with the same kept parts gives", () => {
    const value = big(doc(3));
    const f = file(JSON.stringify(value, null, 2));
    const small = file(JSON.stringify(pruneObject(value, SELECT)));
    const got = readConfigObject(f, "json", { select: SELECT });
    expect(got).toEqual({ status: "ok", data: oracle(f, SELECT)! });
    expect(got).toEqual(readConfigObject(small, "json", { select: SELECT }));
  });

  test("a large file with comments and trailing commas is still read (as a whole)", () => {
    const value = big(doc(4));
    const text = `// written by hand\n${JSON.stringify(value, null, 2).replace(/\n}$/, ",\n}")}`;
    expect(readConfigObject(file(text), "json", { select: SELECT })).toEqual({ status: "ok", data: pruneObject(value, SELECT) });
  });

  test("a large file cut short says where, as before", () => {
    const text = JSON.stringify(big(doc(5)), null, 2);
    const r = readConfigObject(file(text.slice(0, text.length - 100)), "json", { select: SELECT });
    expect(r.status).toBe("error");
    expect((r as { message: string }).message).toMatch(/^invalid JSON at line \d+, column \d+/);
  });

  test("a large file with a fault deep in a skipped string says where, as a small one does", () => {
    const text = JSON.stringify(big(doc(6)), null, 2);
    const at = text.lastIndexOf('"display": "') + 14;
    const broken = `${text.slice(0, at)}\\q${text.slice(at)}`;
    const r = readConfigObject(file(broken), "json", { select: SELECT });
    expect(r).toEqual(readConfigObject(file(broken), "json"));
    expect((r as { message: string }).message).toMatch(/^invalid JSON at line \d+, column \d+ \(in projects/);
  });
});
