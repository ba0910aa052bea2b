/**
 * Reading one client config file into an object, whatever its format. Parsers are the maintained ones
 * the clients' own ecosystems use: jsonc-parser (VS Code's) for JSON and JSONC, smol-toml for Codex's
 * TOML, yaml (eemeli) for Continue and Goose. Every syntax error says where: line, column and, for
 * JSON, the path of the value being read.
 */
import * as fs from "node:fs";
import { getLocation, parse as parseJsonc, printParseErrorCode, type ParseError } from "jsonc-parser";
import { parse as parseToml, TomlError } from "smol-toml";
import { parseDocument } from "yaml";
import { pruneObject, readPrunedJson, type Select } from "./json-pruned.ts";
import { formatJsonPath } from "./server-schemas.ts";

export type FileFormat = "json" | "toml" | "yaml";

export type ReadResult =
  | { status: "missing" }
  | { status: "error"; message: string; unreadable?: boolean }
  | { status: "ok"; data: Record<string, unknown> };

/** Where `file` really is when it is a symbolic link (followed to the end); `file` itself otherwise. */
export function linkTarget(file: string): string {
  try {
    if (!fs.lstatSync(file).isSymbolicLink()) return file;
    return fs.realpathSync(file);
  } catch {
    return file; // absent, or a dangling link: written as a new file in its place
  }
}

/**
 * Replace a user's config file with `text` at once (a temp file beside it, then renamed). A file that is
 * a link (dotfiles kept in a repository with stow, chezmoi, yadm, home-manager) is written where it
 * points: replacing the link with a file would cut it loose from the user's dotfiles. Throws fs's error,
 * leaving no temp file behind.
 */
export function writeConfigText(file: string, text: string, mode: number): void {
  const target = linkTarget(file);
  const tmp = `${target}.tmp-${process.pid}`;
  try {
    fs.writeFileSync(tmp, text, { mode });
    fs.renameSync(tmp, target);
  } catch (e) {
    try {
      fs.rmSync(tmp, { force: true });
    } catch {
      // nothing was written there (a read-only place)
    }
    throw e;
  }
}

/**
 * From this size on, a JSON file read with `select` is walked for the kept parts instead of parsed
 * whole. Below it JSON.parse is faster at a start (the walk's loops still run unoptimised then): in
 * fresh processes, 5.8 against 9.6 ms at 1.5 MB, even at 2.6 MB, 32 against 16 ms at 3.7 MB.
 */
export const PRUNED_READ_FROM_BYTES = 1 << 21;

/**
 * Read a file holding one object (or mapping/table) at the top level. Missing = ENOENT/ENOTDIR.
 * `select` (JSON only): the data holds only those parts of the object (json-pruned.ts), and a large
 * file is not parsed whole.
 */
export function readConfigObject(file: string, format: FileFormat, opts: { select?: Select } = {}): ReadResult {
  let text: string;
  try {
    // One look at it says whether it can be read at all and how large it is.
    const st = fs.statSync(file);
    const special = specialKind(st);
    if (special)
      return {
        status: "error",
        message: `is ${special}, not a file: not read (a read would wait for whatever writes to it)`,
        unreadable: true,
      };
    if (opts.select && format === "json" && st.size >= PRUNED_READ_FROM_BYTES) {
      const data = readPrunedJson(file, opts.select);
      if (data) return { status: "ok", data };
    }
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { status: "missing" };
    if (code === "EISDIR") return { status: "error", message: "is a folder, expected a file", unreadable: true };
    return { status: "error", message: `cannot read file: ${(e as Error).message}`, unreadable: true };
  }
  const r = parseConfigText(text, format);
  return r.status === "ok" && opts.select ? { status: "ok", data: pruneObject(r.data, opts.select) } : r;
}

/**
 * What `file` is when it is not a regular file or a folder: "a named pipe" (1Password, for one, mounts
 * .env files as named pipes and asks the user before each read), "a socket", "a device"; undefined
 * otherwise, or when it cannot be looked at (the read that follows says why). Reading one of these
 * could block the bridge's start until something writes to it, which may be never.
 */
export function specialFile(file: string): string | undefined {
  try {
    return specialKind(fs.statSync(file));
  } catch {
    return undefined;
  }
}

function specialKind(st: fs.Stats): string | undefined {
  if (st.isFile() || st.isDirectory()) return undefined;
  if (st.isFIFO()) return "a named pipe";
  if (st.isSocket()) return "a socket";
  return "a device";
}

const NOT_STRICT = Symbol("not strict JSON");

function strictJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return NOT_STRICT;
  }
}

/** Parse text of the given format; the top level must be an object. */
export function parseConfigText(input: string, format: FileFormat): ReadResult {
  const text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
  let data: unknown;
  if (format === "json") {
    if (text.trim() === "") return { status: "error", message: "the file is empty; expected a JSON object" };
    const errors: ParseError[] = [];
    // Most files are strict JSON: the engine's parser is several times faster than jsonc-parser (and
    // makes `__proto__` an own key, as everywhere else). Comments, trailing commas and errors go to
    // jsonc-parser, which reads the former and says where the latter are.
    data = strictJson(text);
    if (data === NOT_STRICT) data = parseJsonc(text, errors, { allowTrailingComma: true, disallowComments: false });
    if (errors.length) {
      const e = errors[0]!;
      const { line, column } = lineColumn(text, e.offset);
      const at = formatJsonPath(getLocation(text, e.offset).path.filter((p) => p !== ""));
      return {
        status: "error",
        message: `invalid JSON at line ${line}, column ${column}${at ? ` (in ${at})` : ""}: ${describeJsonError(e, text)}`,
      };
    }
  } else if (format === "toml") {
    try {
      data = parseToml(text);
    } catch (e) {
      if (e instanceof TomlError)
        return {
          status: "error",
          message: `invalid TOML at line ${e.line}, column ${e.column}: ${e.message.split("\n")[0]!.replace(/^Invalid TOML document: /, "")}`,
        };
      return { status: "error", message: `invalid TOML: ${(e as Error).message}` };
    }
  } else {
    const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: true });
    const e = doc.errors[0];
    if (e) {
      const { line, column } = lineColumn(text, e.pos[0]);
      return {
        status: "error",
        message: `invalid YAML at line ${line}, column ${column}: ${e.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "")}`,
      };
    }
    data = doc.toJS({ maxAliasCount: 100 });
    if (data === null || data === undefined) data = {};
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    const got = data === null ? "null" : Array.isArray(data) ? "array" : typeof data;
    return { status: "error", message: `expected an object at the top level, received ${got}` };
  }
  return { status: "ok", data: data as Record<string, unknown> };
}

const JSON_ERROR_TEXT: Record<string, string> = {
  InvalidSymbol: "unexpected character",
  InvalidNumberFormat: "invalid number",
  PropertyNameExpected: "expected a property name in double quotes",
  ValueExpected: "expected a value",
  ColonExpected: "expected ':' after the property name",
  CommaExpected: "expected ',' between values (or a closing bracket)",
  CloseBraceExpected: "expected '}' (the object is not closed)",
  CloseBracketExpected: "expected ']' (the array is not closed)",
  EndOfFileExpected: "unexpected text after the end of the JSON value",
  InvalidCommentToken: "invalid comment",
  UnexpectedEndOfComment: "unterminated /* comment",
  UnexpectedEndOfString: "unterminated string",
  UnexpectedEndOfNumber: "unterminated number",
  InvalidUnicode: "invalid \\u escape in string",
  InvalidEscapeCharacter: "invalid escape sequence in string",
  InvalidCharacter: "unescaped control character (e.g. a newline) in string",
};

function describeJsonError(e: ParseError, text: string): string {
  const name = printParseErrorCode(e.error);
  const base = JSON_ERROR_TEXT[name] ?? name;
  const found =
    e.offset >= text.length
      ? "end of input"
      : `'${text.slice(e.offset, e.offset + Math.max(1, Math.min(e.length, 20))).replace(/\s+/g, " ")}'`;
  if (name === "InvalidSymbol" && text[e.offset] === "'") return "strings must use double quotes";
  return `${base}, found ${found}`;
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
