/**
 * Finds the top-level `id` (and `method`) of a JSON-RPC message without keeping the message: bytes are
 * fed as they arrive and only a few hundred are ever held. Used for messages too large to parse, so the
 * sender still gets an error answering its own request. Tolerates text that is not valid JSON.
 */
const MAX_CAPTURE = 256;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export class RequestIdScanner {
  #depth = 0;
  #inString = false;
  #escape = false;
  #expectKey = false;
  #key: number[] | undefined;
  #lastKey = "";
  /** Capturing the raw value of `id` or `method` (at depth 1), or undefined. */
  #value: number[] | undefined;
  #valueFor = "";
  #valueDepth = 0;
  #found: Record<string, string> = {};

  push(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length; i++) this.#byte(bytes[i]!);
  }

  /** The id as it appeared (number or string), when one was seen at the top level. */
  get id(): string | number | undefined {
    return this.#parsed("id", (v) => typeof v === "string" || (typeof v === "number" && Number.isFinite(v)));
  }

  get method(): string | undefined {
    return this.#parsed("method", (v) => typeof v === "string") as string | undefined;
  }

  #parsed(key: string, ok: (v: unknown) => boolean): string | number | undefined {
    const raw = this.#found[key];
    if (raw === undefined) return undefined;
    try {
      const v = JSON.parse(raw) as unknown;
      return ok(v) ? (v as string | number) : undefined;
    } catch {
      return undefined;
    }
  }

  #byte(b: number): void {
    if (this.#value) this.#captureValue(b);
    if (this.#inString) {
      if (this.#escape) this.#escape = false;
      else if (b === BACKSLASH) this.#escape = true;
      else if (b === QUOTE) {
        this.#inString = false;
        if (this.#key) {
          this.#lastKey = String.fromCharCode(...this.#key);
          this.#key = undefined;
        }
        return;
      }
      if (this.#key && this.#key.length < 16) this.#key.push(b);
      return;
    }
    switch (b) {
      case QUOTE:
        this.#inString = true;
        if (this.#depth === 1 && this.#expectKey) {
          this.#key = [];
          this.#expectKey = false;
        }
        return;
      case 0x7b: // {
      case 0x5b: // [
        this.#depth++;
        if (this.#depth === 1) this.#expectKey = b === 0x7b;
        return;
      case 0x7d: // }
      case 0x5d: // ]
        this.#depth--;
        return;
      case 0x2c: // ,
        if (this.#depth === 1) this.#expectKey = true;
        return;
      case 0x3a: // :
        if (this.#depth === 1 && (this.#lastKey === "id" || this.#lastKey === "method")) {
          this.#value = [];
          this.#valueFor = this.#lastKey;
          this.#valueDepth = this.#depth;
        }
        this.#lastKey = "";
        return;
    }
  }

  /** Called before the byte is interpreted: ends the value at a top-level `,` or `}`. */
  #captureValue(b: number): void {
    const v = this.#value!;
    const atTop = !this.#inString && this.#depth === this.#valueDepth;
    if (atTop && (b === 0x2c || b === 0x7d)) {
      this.#found[this.#valueFor] = new TextDecoder().decode(Uint8Array.from(v)).trim();
      this.#value = undefined;
      return;
    }
    if (v.length < MAX_CAPTURE) v.push(b);
    else this.#value = undefined; // too long to be an id or a method name
  }
}
