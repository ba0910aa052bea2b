/**
 * General word knowledge for the search index: static word vectors distilled from a sentence encoder
 * (see scripts/build-word-vectors.ts for origin, licence and size), read and decoded on first use and kept.
 *
 * The vectors are a file beside this module (word-vectors.bin, 18 MB), not a JS literal: a compiled
 * binary embeds it as a file, untouched until the first search, so starting the bridge neither loads
 * nor parses it (a base64 literal cost ~9 ms of every start and was held twice, as source and bytecode).
 */
import { readFile } from "node:fs/promises";
import { JS_HOST } from "../../host/process.ts";
import { decodeWordVectors, type WordVectors } from "./word-vectors-format.ts";

let cached: WordVectors | undefined;

/** The built-in word vectors (decoded once, on first use). */
export async function loadWordVectors(): Promise<WordVectors> {
  cached ??= decodeWordVectors(await vectorBytes());
  return cached;
}

/** The word vectors if already loaded (the search index works without them, lexically only). */
export function loadedWordVectors(): WordVectors | undefined {
  return cached;
}

async function vectorBytes(): Promise<Uint8Array> {
  // Deno has no file imports; from source the file sits beside this module. Under Bun a literal
  // specifier with type "file" makes `bun build --compile` embed the file, and gives its path.
  const file =
    JS_HOST === "deno"
      ? new URL("./word-vectors.bin", import.meta.url)
      : (await import("./word-vectors.bin", { with: { type: "file" } })).default;
  return new Uint8Array(await readFile(file));
}
