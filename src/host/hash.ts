/**
 * SHA-256 for both runtimes. Under Bun it never loads node:crypto, whose import alone costs tens of
 * milliseconds at start-up; under Deno node:crypto is loaded on first use.
 */
import type * as NodeCrypto from "node:crypto";

/** Hex SHA-256 of `text` (UTF-8 when a string). */
export function sha256Hex(text: string | Uint8Array): string {
  if (typeof Bun !== "undefined") return new Bun.CryptoHasher("sha256").update(text).digest("hex");
  const { createHash } = (process as unknown as { getBuiltinModule(id: string): typeof NodeCrypto }).getBuiltinModule("node:crypto");
  return createHash("sha256").update(text).digest("hex");
}
