/**
 * Reading only the parts of a large JSON file that we use. Claude Code's ~/.claude.json keeps every
 * project's history and grows to hundreds of megabytes for heavy users; parsing it whole costs seconds
 * and a gigabyte at peak, for the few entries the bridge reads. This walks the file's bytes in chunks,
 * skipping what is not wanted without decoding it (strings are jumped over quote to quote), and parses
 * only the values kept. Anything it does not expect of strict JSON (a comment, a trailing comma, a
 * truncated file) makes it give up, and the caller parses the whole file as before, with its error
 * messages. Pure node:fs, so it runs under Bun, Node and Deno alike.
 */
import * as fs from "node:fs";

/**
 * What to keep of the top-level object: a key mapped to `true` keeps its whole value; to a test keeps,
 * of its value (an object), only the entries whose keys pass. A value of another type is kept whole.
 */
export type Keep = Record<string, true | ((key: string) => boolean)>;

/** The same selection applied to an object already parsed, so that both ways give the same data. */
export function pruneObject(data: Record<string, unknown>, keep: Keep): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, rule] of Object.entries(keep)) {
    if (!Object.hasOwn(data, key)) continue;
    const value = data[key];
    if (rule === true || value === null || typeof value !== "object" || Array.isArray(value)) {
      define(out, key, value);
      continue;
    }
    const kept: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) if (rule(k)) define(kept, k, v);
    define(out, key, kept);
  }
  return out;
}

/** As JSON.parse does: an own property whatever the key (`__proto__` included). */
function define(o: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

const CHUNK = 1 << 20;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The file did not read as strict JSON here: the caller parses it whole. */
class NotStrict extends Error {}

/**
 * Read `file`'s top-level object keeping only what `keep` names; undefined when the file is not the
 * strict JSON this reads (the caller then parses it whole). Throws what fs throws (ENOENT...).
 */
export function readPrunedJson(file: string, keep: Keep, opts: { chunkBytes?: number } = {}): Record<string, unknown> | undefined {
  const fd = fs.openSync(file, "r");
  try {
    return new Walker(fd, opts.chunkBytes ?? CHUNK).object(keep);
  } catch (err) {
    if (err instanceof NotStrict || err instanceof SyntaxError) return undefined;
    throw err;
  } finally {
    fs.closeSync(fd);
  }
}

class Walker {
  #fd: number;
  #chunk: number;
  #buf: Uint8Array = new Uint8Array(0);
  #pos = 0;
  #eof = false;
  /** Chunks of the value being kept, from the one it starts in; undefined while skipping. */
  #keeping: Uint8Array[] | undefined;
  #keepFrom = 0;
  #decoder = new TextDecoder();

  constructor(fd: number, chunk: number) {
    this.#fd = fd;
    this.#chunk = chunk;
    this.#fill();
    if (this.#byte() === 0xef) {
      for (const b of [0xef, 0xbb, 0xbf]) {
        if (this.#byte() !== b) throw new NotStrict();
        this.#pos++;
      }
    }
  }

  object(keep: Keep): Record<string, unknown> {
    if (this.#nonSpace() !== 0x7b) throw new NotStrict();
    this.#pos++;
    const out: Record<string, unknown> = {};
    this.#members((key) => {
      const rule = Object.hasOwn(keep, key) ? keep[key] : undefined;
      if (rule === undefined) return this.#skipValue();
      if (rule === true || this.#nonSpace() !== 0x7b) return define(out, key, this.#keptValue());
      this.#pos++;
      const kept: Record<string, unknown> = {};
      this.#members((k) => (rule(k) ? define(kept, k, this.#keptValue()) : this.#skipValue()));
      define(out, key, kept);
    });
    if (this.#nonSpace() !== -1) throw new NotStrict(); // something after the object
    return out;
  }

  /** The members of an object whose `{` was read, up to and with its `}`; `member` reads each value. */
  #members(member: (key: string) => void): void {
    if (this.#nonSpace() === 0x7d) {
      this.#pos++;
      return;
    }
    for (;;) {
      if (this.#nonSpace() !== QUOTE) throw new NotStrict();
      const key = this.#keptString();
      if (this.#nonSpace() !== 0x3a) throw new NotStrict();
      this.#pos++;
      this.#nonSpace();
      member(key);
      const c = this.#nonSpace();
      this.#pos++;
      if (c === 0x7d) return;
      if (c !== 0x2c) throw new NotStrict();
    }
  }

  #keptString(): string {
    this.#startKeeping();
    this.#skipString();
    return JSON.parse(this.#stopKeeping()) as string;
  }

  #keptValue(): unknown {
    this.#startKeeping();
    this.#skipValue();
    return JSON.parse(this.#stopKeeping());
  }

  #startKeeping(): void {
    this.#keeping = [];
    this.#keepFrom = this.#pos;
  }

  #stopKeeping(): string {
    const parts = this.#keeping!;
    parts.push(this.#buf.subarray(this.#keepFrom, this.#pos));
    this.#keeping = undefined;
    if (parts.length === 1) return this.#decoder.decode(parts[0]);
    const whole = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      whole.set(p, at);
      at += p.length;
    }
    return this.#decoder.decode(whole);
  }

  /** Skip one value starting at the current byte (not whitespace). */
  #skipValue(): void {
    const c = this.#byte();
    if (c === QUOTE) return this.#skipString();
    if (c === 0x7b || c === 0x5b) return this.#skipNested();
    // A number, true, false or null: up to the next delimiter (checked when kept: JSON.parse).
    let length = 0;
    for (;;) {
      const b = this.#byte();
      if (b === -1 || b === 0x2c || b === 0x7d || b === 0x5d || b <= 0x20) break;
      if (b === 0x2f || b === QUOTE || b === 0x7b || b === 0x5b) throw new NotStrict();
      this.#pos++;
      length++;
    }
    if (length === 0) throw new NotStrict();
  }

  /** Skip an object or array, brackets matched (its scalars are not checked unless kept). */
  #skipNested(): void {
    const closers: number[] = [];
    for (;;) {
      if (this.#pos >= this.#buf.length && !this.#more()) throw new NotStrict(); // truncated
      const b = this.#buf[this.#pos]!;
      if (b === QUOTE) {
        this.#skipString();
        continue;
      }
      this.#pos++;
      if (b === 0x7b) closers.push(0x7d);
      else if (b === 0x5b) closers.push(0x5d);
      else if (b === 0x7d || b === 0x5d) {
        if (closers.pop() !== b) throw new NotStrict();
        if (closers.length === 0) return;
      } else if (b === 0x2f) throw new NotStrict(); // a comment: not strict JSON
    }
  }

  /** Skip a string starting at its opening quote: quote to quote, counting the backslashes before each. */
  #skipString(): void {
    this.#pos++;
    let carried = 0; // backslashes ending the previous chunk's part of this string
    for (;;) {
      const q = this.#buf.indexOf(QUOTE, this.#pos);
      if (q === -1) {
        const from = this.#pos;
        let n = 0;
        for (let i = this.#buf.length - 1; i >= from && this.#buf[i] === BACKSLASH; i--) n++;
        carried = n === this.#buf.length - from ? carried + n : n;
        this.#pos = this.#buf.length;
        if (!this.#more()) throw new NotStrict(); // an unterminated string
        continue;
      }
      let n = 0;
      for (let i = q - 1; i >= this.#pos && this.#buf[i] === BACKSLASH; i--) n++;
      if (n === q - this.#pos) n += carried;
      this.#pos = q + 1;
      if (n % 2 === 0) return;
      carried = 0;
    }
  }

  /** The first byte at or after the current position that is not whitespace (-1 at the end). */
  #nonSpace(): number {
    for (;;) {
      const b = this.#byte();
      if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) return b;
      this.#pos++;
    }
  }

  #byte(): number {
    if (this.#pos < this.#buf.length) return this.#buf[this.#pos]!;
    return this.#more() ? this.#buf[this.#pos]! : -1;
  }

  /** Read the next chunk (the current one is kept by the value being kept, if any); false at the end. */
  #more(): boolean {
    if (this.#eof) return false;
    if (this.#keeping) {
      this.#keeping.push(this.#buf.subarray(this.#keepFrom));
      this.#keepFrom = 0;
    }
    this.#pos -= this.#buf.length;
    this.#fill();
    return this.#buf.length > 0;
  }

  #fill(): void {
    const buf = new Uint8Array(this.#chunk);
    const n = fs.readSync(this.#fd, buf, 0, this.#chunk, null);
    if (n === 0) this.#eof = true;
    this.#buf = n === this.#chunk ? buf : buf.subarray(0, n);
  }
}
