/**
 * JSON reading for MCP config files.
 *
 * Fast path: `JSON.parse`. If that fails we re-parse with a small JSONC parser
 * (comments and trailing commas allowed, as VS Code and Cursor write them) that
 * either succeeds or reports the exact line/column of the first syntax error —
 * engine `JSON.parse` messages differ between Bun, Node and Deno and often
 * carry no position at all.
 */
import * as fs from "node:fs";

export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
    this.name = "JsonSyntaxError";
  }
}

/** 1-based line and column (in UTF-16 code units) of `offset` in `text`. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

export type ReadResult =
  | { status: "missing" }
  | { status: "error"; message: string }
  | { status: "ok"; data: Record<string, unknown> };

/** Read a config file that must hold a JSON object. Missing = ENOENT/ENOTDIR. */
export function readJsonObject(file: string): ReadResult {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { status: "missing" };
    return { status: "error", message: `cannot read file: ${(e as Error).message}` };
  }
  let data: unknown;
  try {
    data = parseJsonText(text);
  } catch (e) {
    if (e instanceof JsonSyntaxError) {
      return { status: "error", message: `invalid JSON at line ${e.line}, column ${e.column}: ${e.message}` };
    }
    return { status: "error", message: `invalid JSON: ${(e as Error).message}` };
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    const got = data === null ? "null" : Array.isArray(data) ? "array" : typeof data;
    return { status: "error", message: `expected a JSON object at the top level, received ${got}` };
  }
  return { status: "ok", data: data as Record<string, unknown> };
}

/** Parse JSON (or JSONC). Throws JsonSyntaxError with a position on failure. */
export function parseJsonText(input: string): unknown {
  const text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
  try {
    return JSON.parse(text);
  } catch {
    return parseJsonc(text);
  }
}

const NUMBER_RE = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

function parseJsonc(text: string): unknown {
  let i = 0;
  const n = text.length;

  const fail = (message: string, at: number = i): never => {
    const { line, column } = lineColumn(text, at);
    throw new JsonSyntaxError(message, at, line, column);
  };
  const describe = (at: number): string => (at >= n ? "end of input" : `character ${JSON.stringify(text[at])}`);

  const skipWs = (): void => {
    while (i < n) {
      const c = text[i];
      if (c === " " || c === "\t" || c === "\n" || c === "\r") i++;
      else if (c === "/" && text[i + 1] === "/") {
        while (i < n && text[i] !== "\n") i++;
      } else if (c === "/" && text[i + 1] === "*") {
        const end = text.indexOf("*/", i + 2);
        if (end < 0) fail("unterminated /* comment");
        i = end + 2;
      } else break;
    }
  };

  const parseString = (): string => {
    const start = i;
    i++; // opening quote
    let out = "";
    let chunk = i;
    while (true) {
      if (i >= n) fail("unterminated string", start);
      const c = text.charCodeAt(i);
      if (c === 34 /* " */) {
        out += text.slice(chunk, i);
        i++;
        return out;
      }
      if (c === 92 /* \ */) {
        out += text.slice(chunk, i);
        const e = text[i + 1];
        if (e === "u") {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail("invalid \\u escape in string");
          out += String.fromCharCode(parseInt(hex, 16));
          i += 6;
        } else if (e !== undefined && e in ESCAPES) {
          out += ESCAPES[e];
          i += 2;
        } else fail(`invalid escape sequence in string`);
        chunk = i;
        continue;
      }
      if (c < 0x20) fail("unescaped control character (e.g. a newline) in string");
      i++;
    }
  };

  const parseValue = (): unknown => {
    skipWs();
    if (i >= n) fail("unexpected end of input, expected a value");
    const c = text[i]!;
    if (c === "{") return parseObject();
    if (c === "[") return parseArray();
    if (c === '"') return parseString();
    for (const [word, value] of [["true", true], ["false", false], ["null", null]] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return value;
      }
    }
    if (c === "-" || (c >= "0" && c <= "9")) {
      NUMBER_RE.lastIndex = i;
      const m = NUMBER_RE.exec(text);
      if (!m) fail("invalid number");
      i += m![0].length;
      return Number(m![0]);
    }
    if (c === "'") return fail("strings must use double quotes");
    return fail(`unexpected ${describe(i)}, expected a value`);
  };

  const parseObject = (): Record<string, unknown> => {
    const obj: Record<string, unknown> = {};
    i++; // {
    skipWs();
    if (text[i] === "}") {
      i++;
      return obj;
    }
    while (true) {
      skipWs();
      if (text[i] === "}") {
        i++; // trailing comma
        return obj;
      }
      if (text[i] !== '"') fail(`unexpected ${describe(i)}, expected a property name in double quotes`);
      const key = parseString();
      skipWs();
      if (text[i] !== ":") fail(`unexpected ${describe(i)}, expected ':' after property name`);
      i++;
      const value = parseValue();
      Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
      skipWs();
      if (text[i] === ",") {
        i++;
        continue;
      }
      if (text[i] === "}") {
        i++;
        return obj;
      }
      fail(`unexpected ${describe(i)}, expected ',' or '}' after property value`);
    }
  };

  const parseArray = (): unknown[] => {
    const arr: unknown[] = [];
    i++; // [
    skipWs();
    if (text[i] === "]") {
      i++;
      return arr;
    }
    while (true) {
      skipWs();
      if (text[i] === "]") {
        i++; // trailing comma
        return arr;
      }
      arr.push(parseValue());
      skipWs();
      if (text[i] === ",") {
        i++;
        continue;
      }
      if (text[i] === "]") {
        i++;
        return arr;
      }
      fail(`unexpected ${describe(i)}, expected ',' or ']' after array element`);
    }
  };

  const value = parseValue();
  skipWs();
  if (i < n) fail(`unexpected ${describe(i)} after the end of the JSON value`);
  return value;
}
