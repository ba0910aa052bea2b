/**
 * A strict JSON scanner over a file's bytes, for json-pruned.ts: it reads the file in chunks into one
 * buffer it reuses, checks the grammar as JSON.parse does (strings, escapes, numbers, literals, commas,
 * colons, brackets), and either skips a value without building it or hands back its bytes to be parsed.
 * Strings, nearly all of a large ~/.claude.json, are crossed byte by byte against a table, without
 * decoding; nothing but the kept bytes is ever held. Anything JSON.parse would refuse throws NotStrict.
 * Pure node:fs, so it runs under Bun, Node and Deno alike.
 */
import * as fs from "node:fs";

export const QUOTE = 0x22;
const BACKSLASH = 0x5c;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
export const COMMA = 0x2c;
export const COLON = 0x3a;

/** Bytes that end a run of plain string content: the closing quote, an escape, a raw control character. */
const STRING_STOP = new Uint8Array(256);
for (let b = 0; b < 0x20; b++) STRING_STOP[b] = 1;
STRING_STOP[QUOTE] = 1;
STRING_STOP[BACKSLASH] = 1;

/** The character after a backslash that JSON allows, `u` (four hex digits follow) apart. */
const SIMPLE_ESCAPE = new Uint8Array(256);
for (const c of '"\\/bfnrt') SIMPLE_ESCAPE[c.charCodeAt(0)] = 1;

/** The file is not what JSON.parse reads (or it ended early). */
export class NotStrict extends Error {}

export class JsonScanner {
  #fd: number;
  #buf: Uint8Array;
  #pos = 0;
  #end = 0;
  #eof = false;
  /** Where in the buffer the bytes being kept start (-1: none are); earlier chunks' part in #kept. */
  #keepFrom = -1;
  #kept: Uint8Array[] = [];
  #decoder = new TextDecoder();

  constructor(fd: number, chunkBytes: number) {
    this.#fd = fd;
    this.#buf = new Uint8Array(chunkBytes + 1);
    this.#fill();
    // A UTF-8 byte-order mark, as parseConfigText drops U+FEFF.
    if (this.#end >= 1 && this.#buf[0] === 0xef) for (const b of [0xef, 0xbb, 0xbf]) if (this.next() !== b) throw new NotStrict();
  }

  /** The next byte that is not JSON whitespace, not consumed; -1 at the end of the file. */
  peek(): number {
    for (;;) {
      const buf = this.#buf;
      const end = this.#end;
      let pos = this.#pos;
      // Indentation runs long in a file written with JSON.stringify(..., 2): locals, not fields.
      while (pos < end) {
        const b = buf[pos]!;
        if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) {
          this.#pos = pos;
          return b;
        }
        pos++;
      }
      this.#pos = pos;
      if (!this.#fill()) return -1;
    }
  }

  /** Consume the next byte after whitespace, which must be `b`. */
  expect(b: number): void {
    if (this.peek() !== b) throw new NotStrict();
    this.#pos++;
  }

  /** Parse the value that starts here (after whitespace) from its bytes: only these are decoded. */
  value(): unknown {
    this.peek();
    this.#keepFrom = this.#pos;
    this.skip();
    const parts = this.#kept;
    parts.push(this.#buf.subarray(this.#keepFrom, this.#pos));
    this.#kept = [];
    this.#keepFrom = -1;
    return JSON.parse(this.#decoder.decode(parts.length === 1 ? parts[0] : concat(parts)));
  }

  /** Skip the value that starts here (after whitespace), checking it as JSON.parse would. */
  skip(): void {
    // Open containers, innermost last: 1 an object, 2 an array. Iterative, as JSON.parse is: no depth limit.
    const open: number[] = [];
    for (;;) {
      let b = this.peek();
      if (b === QUOTE) this.#string();
      else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
        this.#pos++;
        const close = b === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET;
        if (this.peek() === close) this.#pos++;
        else {
          open.push(b === OPEN_BRACE ? 1 : 2);
          if (b === OPEN_BRACE) this.#key();
          continue;
        }
      } else this.#scalar(b);
      // After a value: a comma and the next member, or the end of its container.
      for (;;) {
        const inside = open.length === 0 ? 0 : open[open.length - 1];
        if (inside === 0) return;
        b = this.peek();
        this.#pos++;
        if (b === COMMA) {
          if (inside === 1) this.#key();
          break;
        }
        if (b !== (inside === 1 ? CLOSE_BRACE : CLOSE_BRACKET)) throw new NotStrict();
        open.pop();
      }
    }
  }

  /** An object member's key and its colon, skipped. */
  #key(): void {
    if (this.peek() !== QUOTE) throw new NotStrict();
    this.#string();
    this.expect(COLON);
  }

  /** Skip a string from its opening quote. The hot loop: locals only, a table lookup per byte. */
  #string(): void {
    let buf = this.#buf;
    let pos = this.#pos + 1;
    let end = this.#end;
    for (;;) {
      // The chunk ends in a stop byte (#fill puts one past its end): no bound to check per byte.
      for (;;) {
        if (STRING_STOP[buf[pos]!] !== 0) break;
        if (STRING_STOP[buf[pos + 1]!] !== 0) {
          pos += 1;
          break;
        }
        if (STRING_STOP[buf[pos + 2]!] !== 0) {
          pos += 2;
          break;
        }
        if (STRING_STOP[buf[pos + 3]!] !== 0) {
          pos += 3;
          break;
        }
        pos += 4;
      }
      if (pos >= end) {
        this.#pos = pos;
        if (!this.#fill()) throw new NotStrict(); // unterminated
        buf = this.#buf;
        pos = this.#pos;
        end = this.#end;
        continue;
      }
      const c = buf[pos++]!;
      if (c === QUOTE) break;
      if (c !== BACKSLASH) throw new NotStrict(); // a raw control character
      // An escape: one in every few dozen bytes of pasted code, so checked here when it is whole.
      if (pos < end && SIMPLE_ESCAPE[buf[pos]!] === 1) {
        pos++;
        continue;
      }
      this.#pos = pos;
      const e = this.next();
      if (e === 0x75) {
        for (let i = 0; i < 4; i++) if (!isHex(this.next())) throw new NotStrict();
      } else if (e < 0 || SIMPLE_ESCAPE[e] === 0) throw new NotStrict();
      buf = this.#buf;
      pos = this.#pos;
      end = this.#end;
    }
    this.#pos = pos;
  }

  /** true, false, null or a number, in JSON's grammar (no leading zeros, digits after a point...). */
  #scalar(b: number): void {
    if (b === 0x74) return this.#word("true");
    if (b === 0x66) return this.#word("false");
    if (b === 0x6e) return this.#word("null");
    if (b === 0x2d) {
      this.#pos++;
      b = this.#byte();
    }
    if (b === 0x30) this.#pos++;
    else if (b >= 0x31 && b <= 0x39) this.#digits();
    else throw new NotStrict();
    if (this.#byte() === 0x2e) {
      this.#pos++;
      if (!isDigit(this.#byte())) throw new NotStrict();
      this.#digits();
    }
    b = this.#byte();
    if (b === 0x65 || b === 0x45) {
      this.#pos++;
      b = this.#byte();
      if (b === 0x2b || b === 0x2d) this.#pos++;
      if (!isDigit(this.#byte())) throw new NotStrict();
      this.#digits();
    }
  }

  #digits(): void {
    while (isDigit(this.#byte())) this.#pos++;
  }

  #word(w: string): void {
    for (let i = 0; i < w.length; i++) if (this.next() !== w.charCodeAt(i)) throw new NotStrict();
  }

  /** The byte here, not consumed (-1 at the end). */
  #byte(): number {
    if (this.#pos >= this.#end && !this.#fill()) return -1;
    return this.#buf[this.#pos]!;
  }

  /** The byte here, consumed (-1 at the end). */
  next(): number {
    if (this.#pos >= this.#end && !this.#fill()) return -1;
    return this.#buf[this.#pos++]!;
  }

  /** Read the next chunk into the buffer, first copying out the part of a kept value it holds. */
  #fill(): boolean {
    if (this.#eof) return false;
    if (this.#keepFrom >= 0) {
      this.#kept.push(this.#buf.slice(this.#keepFrom, this.#end));
      this.#keepFrom = 0;
    }
    const n = fs.readSync(this.#fd, this.#buf, 0, this.#buf.length - 1, null);
    this.#buf[n] = QUOTE; // the string loop's stop
    this.#pos = 0;
    this.#end = n;
    if (n === 0) this.#eof = true;
    return n > 0;
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  const whole = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    whole.set(p, at);
    at += p.length;
  }
  return whole;
}

const isDigit = (b: number) => b >= 0x30 && b <= 0x39;
const isHex = (b: number) => isDigit(b) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
