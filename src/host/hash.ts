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

/** An incremental SHA-256 (files hashed as they stream in). */
export interface Sha256 {
  update(data: Uint8Array): Sha256;
  /** The digest as hex, or as bytes. */
  digest(encoding: "hex"): string;
  digest(): Uint8Array;
}

export function createSha256(): Sha256 {
  if (typeof Bun !== "undefined") {
    const h = new Bun.CryptoHasher("sha256");
    const api: Sha256 = {
      update: (d) => (h.update(d), api),
      digest: ((enc?: "hex") => (enc === "hex" ? h.digest("hex") : new Uint8Array(h.digest()))) as Sha256["digest"],
    };
    return api;
  }
  const { createHash } = (process as unknown as { getBuiltinModule(id: string): typeof NodeCrypto }).getBuiltinModule("node:crypto");
  const h = createHash("sha256");
  const api: Sha256 = {
    update: (d) => (h.update(d), api),
    digest: ((enc?: "hex") => (enc === "hex" ? h.digest("hex") : new Uint8Array(h.digest()))) as Sha256["digest"],
  };
  return api;
}
