/**
 * Reading only the parts of a large JSON file that we use. Claude Code's ~/.claude.json keeps every
 * project's history and grows to hundreds of megabytes for heavy users; parsing it whole costs seconds
 * and a gigabyte at peak, for the few entries the bridge reads. This walks the file's bytes
 * (json-scan.ts), checking all of it as JSON.parse would but building only the values kept. A file
 * JSON.parse would refuse (a comment, a trailing comma, a truncated file) makes it give up, and the
 * caller parses the whole file as before, with its error messages.
 */
import * as fs from "node:fs";
import { CLOSE_BRACE, COLON, COMMA, JsonScanner, NotStrict, OPEN_BRACE, QUOTE } from "./json-scan.ts";

/**
 * What to keep of an object, member by member: undefined skips the member unread; `true` keeps its
 * value whole; a further selection keeps, of its value, what that selection keeps (when the value is
 * an object: a value of another type is kept whole).
 */
export type Select = (key: string) => Select | true | undefined;

/** A selection from a table: each key named keeps what its rule says, any other key nothing. */
export function selectKeys(rules: Record<string, Select | true>): Select {
  return (key) => (Object.hasOwn(rules, key) ? rules[key] : undefined);
}

/** The same selection applied to an object already parsed, so that both ways give the same data. */
export function pruneObject(data: Record<string, unknown>, select: Select): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    const rule = select(key);
    if (rule === undefined) continue;
    define(out, key, rule === true || !isObject(value) ? value : pruneObject(value, rule));
  }
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** As JSON.parse does: an own property whatever the key (`__proto__` included); a repeated key keeps its place. */
function define(o: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Bytes read at a time: small enough to stay in the CPU's cache, large enough that reads are few. */
const CHUNK = 1 << 18;

/**
 * Read `file`'s top-level object keeping only what `select` names: what JSON.parse would give, with
 * pruneObject applied. Undefined when JSON.parse would refuse the file or its top level is not an
 * object (the caller then parses it whole, and says why). Throws what fs throws (ENOENT...).
 */
export function readPrunedJson(file: string, select: Select, opts: { chunkBytes?: number } = {}): Record<string, unknown> | undefined {
  const fd = fs.openSync(file, "r");
  try {
    const scan = new JsonScanner(fd, opts.chunkBytes ?? CHUNK);
    if (scan.peek() !== OPEN_BRACE) return undefined;
    const out = object(scan, select);
    if (scan.peek() !== -1) return undefined; // something after the object
    return out;
  } catch (err) {
    if (err instanceof NotStrict || err instanceof SyntaxError) return undefined;
    throw err;
  } finally {
    fs.closeSync(fd);
  }
}

/** The object starting here, its members read or skipped as `select` says. */
function object(scan: JsonScanner, select: Select): Record<string, unknown> {
  scan.expect(OPEN_BRACE);
  const out: Record<string, unknown> = {};
  if (scan.peek() === CLOSE_BRACE) {
    scan.next();
    return out;
  }
  for (;;) {
    if (scan.peek() !== QUOTE) throw new NotStrict();
    const key = scan.value() as string;
    scan.expect(COLON);
    const rule = select(key);
    if (rule === undefined) scan.skip();
    else if (rule === true || scan.peek() !== OPEN_BRACE) define(out, key, scan.value());
    else define(out, key, object(scan, rule));
    const b = scan.peek();
    scan.next();
    if (b === CLOSE_BRACE) return out;
    if (b !== COMMA) throw new NotStrict();
  }
}
