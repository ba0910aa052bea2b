/**
 * General word knowledge for the search index: static word vectors distilled from a sentence encoder
 * (see scripts/build-word-vectors.ts for origin, licence and size), decoded on first use and kept.
 */
import { decodeWordVectors, fromBase64, type WordVectors } from "./word-vectors-format.ts";

let cached: WordVectors | undefined;

/** The built-in word vectors (decoded once, ~150 ms, on first use). */
export async function loadWordVectors(): Promise<WordVectors> {
  if (!cached) {
    // A literal specifier: bundled into the compiled binary, evaluated only here.
    const { WORD_VECTORS_BASE64 } = await import("./word-vectors.data.ts");
    cached ??= decodeWordVectors(fromBase64(WORD_VECTORS_BASE64));
  }
  return cached;
}

/** The word vectors if already loaded (the search index works without them, lexically only). */
export function loadedWordVectors(): WordVectors | undefined {
  return cached;
}
