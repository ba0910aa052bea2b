/**
 * Seeded fuzz of the pruned JSON reader (src/config/json-pruned.ts) against its oracle: JSON.parse of
 * the whole file with the same selection applied, or undefined where JSON.parse refuses the file.
 * Documents of random shapes (deep nesting, long strings, every escape, unicode, repeated keys, project
 * paths that are prefixes of one another), written with random whitespace and needless escapes, half
 * of them then damaged (cut, bytes dropped, added or changed, a slice doubled), read at random chunk
 * sizes. Reproducible: JSON_FUZZ_SEED=<n> picks the run, and a failure names the round's seed.
 *   JSON_FUZZ_SEED=7 JSON_FUZZ_ROUNDS=20000 bun test test/unit/json-pruned-fuzz.test.ts
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pruneObject, readPrunedJson, selectKeys, type Select } from "../../src/config/json-pruned.ts";

const SEED = Number(process.env.JSON_FUZZ_SEED ?? 20261128);
const ROUNDS = Number(process.env.JSON_FUZZ_ROUNDS ?? 1500);

const dir = mkdtempSync(join(tmpdir(), "json-pruned-fuzz-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Paths as ~/.claude.json keys projects: the wanted ones, and others that differ by a suffix, a case, an escape. */
const WANTED = ["/w", "/w/a", "/w/a/b"];
const PATHS = [...WANTED, "/w/a-b", "/w/ab", "/w/a/", "/w/a/b/c", "/W/A", "/w/é", '/w/"q"', "/w\\a", "/x", ""];
const ENTRY: Select = (k) => (k === "history" ? undefined : true);
const SELECT = selectKeys({ mcpServers: true, projects: (k) => (WANTED.includes(k) ? ENTRY : undefined) });

/** mulberry32: small, seedable, good enough to pick shapes. */
function random(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return { next, int, pick: <T>(xs: readonly T[]): T => xs[int(xs.length)]!, chance: (p: number) => next() < p };
}
type Random = ReturnType<typeof random>;

const PIECES = [
  "a",
  "word ",
  '"',
  "\\",
  "/",
  "\n",
  "\t",
  "\u0000",
  "\u001f",
  "\u007f",
  "\u2028",
  "é",
  "日本語",
  "🎉",
  "\ud800",
  "\udc00",
  "{",
  "}",
  "[",
  "]",
  ",",
  ":",
  "history",
  "mcpServers",
];
const KEYS = [
  "mcpServers",
  "projects",
  "history",
  "hasTrustDialogAccepted",
  "disabledMcpServers",
  "command",
  "args",
  "__proto__",
  "1",
  "",
  "a",
];

function str(r: Random): string {
  if (r.chance(0.005)) return r.pick(PIECES).repeat(5_000 + r.int(30_000)); // a long paste
  let s = "";
  for (let i = r.int(8); i > 0; i--) s += r.pick(PIECES);
  return s;
}

function num(r: Random): number {
  return r.pick([0, -0, 1, -1, 7, 1e21, 1e-7, -2.5e-300, 123456789.125, Number.MAX_SAFE_INTEGER, r.next() * 1e6, -r.int(1000)]);
}

function value(r: Random, depth: number): unknown {
  if (depth > 0 && r.chance(0.005)) {
    // A deep chain.
    let v: unknown = str(r);
    for (let i = 500 + r.int(3000); i > 0; i--) v = r.chance(0.5) ? [v] : { [r.pick(KEYS)]: v };
    return v;
  }
  const kind = depth <= 0 ? r.int(4) : r.int(7);
  if (kind === 0) return str(r);
  if (kind === 1) return num(r);
  if (kind === 2) return r.pick([true, false, null]);
  if (kind === 3) return r.chance(0.5) ? [] : {};
  if (kind === 4) return Array.from({ length: r.int(5) }, () => value(r, depth - 1));
  return members(r, depth - 1, () => (r.chance(0.7) ? r.pick(KEYS) : str(r)));
}

/** An object as [key, value] pairs: repeated keys are possible (written as such: JSON.parse keeps the last). */
type Pairs = { pairs: Array<[string, unknown]> };
function members(r: Random, depth: number, key: () => string): Pairs {
  return { pairs: Array.from({ length: r.int(6) }, () => [key(), value(r, depth)] as [string, unknown]) };
}

function document(r: Random): Pairs {
  const pairs: Array<[string, unknown]> = [];
  for (let i = 1 + r.int(6); i > 0; i--) {
    const k = r.pick(["mcpServers", "projects", "projects", "numStartups", "tipsHistory", r.pick(KEYS), str(r)]);
    if (k === "projects" && r.chance(0.9)) {
      const entries: Array<[string, unknown]> = Array.from({ length: r.int(8) }, () => [
        r.pick(PATHS),
        r.chance(0.9)
          ? members(r, 3, () => r.pick(["history", "mcpServers", "hasTrustDialogAccepted", "disabledMcpServers", ...KEYS]))
          : value(r, 2),
      ]);
      pairs.push([k, { pairs: entries }]);
    } else pairs.push([k, value(r, 3)]);
  }
  return { pairs };
}

/** Tokens near JSON's grammar, on both sides of it. */
const RAW = [
  "01",
  "00",
  "-",
  "-01",
  "1.",
  ".5",
  "1e",
  "1e+",
  "+1",
  "-0.0e-0",
  "0.5E+10",
  "1E-0",
  "tru",
  "nul",
  "falsey",
  "NaN",
  "Infinity",
  "0x1",
  "1_0",
];

const SPACE = ["", "", " ", "\n", "\r\n", "\t", "\n    ", "  "];

function write(r: Random, v: unknown): string {
  const ws = () => r.pick(SPACE);
  if (v && typeof v === "object" && "pairs" in v) {
    const body = (v as Pairs).pairs.map(([k, x]) => `${ws()}${quote(r, k)}${ws()}:${ws()}${write(r, x)}${ws()}`);
    return `{${body.join(",") || ws()}}`;
  }
  if (Array.isArray(v)) return `[${v.map((x) => `${ws()}${write(r, x)}${ws()}`).join(",") || ws()}]`;
  if (v && typeof v === "object") return write(r, { pairs: Object.entries(v) });
  if (typeof v === "string") return quote(r, v);
  if (typeof v === "number" && r.chance(0.05)) return r.pick(RAW); // maybe not JSON at all
  if (typeof v === "number" && r.chance(0.2)) return v.toExponential().replace("e+", r.pick(["e+", "E", "e"]));
  return JSON.stringify(v);
}

/** A string as JSON.stringify writes it, some characters then escaped where they need not be. */
function quote(r: Random, s: string): string {
  const json = JSON.stringify(s);
  if (!r.chance(0.3)) return json;
  return json.replace(
    /(\\u[0-9a-fA-F]{4}|\\.)|[a-zé/]/g,
    (c, escape) =>
      escape ??
      (c === "/"
        ? "\\/"
        : r.chance(0.5)
          ? c
          : `\\u${c
              .charCodeAt(0)
              .toString(16)
              .padStart(4, r.pick(["0", "0"]))}`),
  );
}

const INTERESTING = [...'"{}[],:\\ \n\t0-.eE+tfnu'].map((c) => c.charCodeAt(0)).concat([0x00, 0x1f, 0x80, 0xc3, 0xef, 0xff]);

function damage(r: Random, bytes: Uint8Array): Uint8Array {
  let b = bytes;
  for (let i = 1 + r.int(3); i > 0; i--) {
    const at = r.int(b.length + 1);
    const kind = r.int(6);
    if (kind === 0)
      b = b.slice(0, at); // cut short
    else if (kind === 1)
      b = concat(b.slice(0, at), b.slice(at + 1)); // a byte dropped
    else if (kind === 2)
      b = concat(b.slice(0, at), Uint8Array.of(r.pick(INTERESTING)), b.slice(at)); // a byte added
    else if (kind === 3 && at < b.length)
      b[at] = r.pick(INTERESTING); // a byte changed
    else if (kind === 4)
      b = concat(b.slice(0, at), b.slice(r.int(at + 1), at), b.slice(at)); // a slice doubled
    else b = concat(Uint8Array.of(0xef, 0xbb, 0xbf), b); // a byte-order mark
  }
  return b;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function oracle(f: string): Record<string, unknown> | undefined {
  let text = readFileSync(f, "utf8");
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  return v !== null && typeof v === "object" && !Array.isArray(v) ? pruneObject(v as Record<string, unknown>, SELECT) : undefined;
}

test(`${ROUNDS} random documents, half of them damaged (seed ${SEED}): the reader gives what JSON.parse gives`, () => {
  let valid = 0;
  let kept = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const seed = SEED + round;
    const r = random(seed);
    let bytes: Uint8Array = new TextEncoder().encode(write(r, document(r)));
    if (r.chance(0.5)) bytes = damage(r, bytes);
    const f = join(dir, `r${round % 8}.json`);
    writeFileSync(f, bytes);
    const expected = oracle(f);
    // Byte-sized chunks cost a read each: only for small files.
    const chunkBytes = r.pick(bytes.length < 8192 ? [1, 2, 3, 7, 64, 4096, 1 << 18] : [64, 4096, 1 << 18]);
    let got: unknown;
    try {
      got = readPrunedJson(f, SELECT, { chunkBytes });
    } catch (err) {
      got = `threw ${String(err)}`;
    }
    const what = `round seed ${seed} (JSON_FUZZ_SEED=${seed} JSON_FUZZ_ROUNDS=1), chunk ${chunkBytes}, file: ${new TextDecoder().decode(bytes.subarray(0, 400))}`;
    expect({ what, got }).toEqual({ what, got: expected });
    if (expected) {
      valid++;
      if (Object.keys((expected.projects as object) ?? {}).length) kept++;
    }
  }
  // The oracle said yes often enough, and some of those kept projects: the fuzz reached both sides.
  expect(valid).toBeGreaterThan(ROUNDS / 4);
  expect(kept).toBeGreaterThan(ROUNDS / 20);
}, 120_000);
