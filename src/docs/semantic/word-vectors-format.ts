/**
 * The packed form of the built-in word vectors:
 *   "WVE3", u16 dims, u32 count, u32 byte length of the key list,
 *   the keys (UTF-8, one per line), padding to 4 bytes,
 *   float32 scale[count], float32 weight[count], float32 logp[count], int8 components[count * dims].
 * A key is a whole word or a token of the model's WordPiece vocabulary ("file", "screen", "kube"),
 * or a continuation piece ("##shot"); pieces let any word be spelled from known parts (pieces.ts).
 * A vector is scale * components; `weight` is the entry's smooth-inverse-frequency weight; `logp` is
 * NaN for the words of the frequency list (whose rank gave their weight), a number for the model's
 * other tokens. ("WVE2", the earlier form, spelled words from SentencePiece pieces.)
 */

const MAGIC = 0x33455657; // "WVE3" little-endian
const HEADER = 14;

export interface WordVectors {
  dims: number;
  keys: string[];
  index: Map<string, number>;
  scales: Float32Array;
  weights: Float32Array;
  logp: Float32Array;
  components: Int8Array;
}

export interface WordVectorsInput {
  dims: number;
  keys: string[];
  vectors: Float32Array[];
  weights: number[];
  logp: number[];
}

export function encodeWordVectors(input: WordVectorsInput): Uint8Array {
  const { dims, keys, vectors, weights, logp } = input;
  const keyBytes = new TextEncoder().encode(keys.join("\n"));
  const floatsAt = HEADER + keyBytes.length + ((4 - ((HEADER + keyBytes.length) % 4)) % 4);
  const count = keys.length;
  const compsAt = floatsAt + 12 * count;
  const out = new Uint8Array(compsAt + dims * count);
  const view = new DataView(out.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint16(4, dims, true);
  view.setUint32(6, count, true);
  view.setUint32(10, keyBytes.length, true);
  out.set(keyBytes, HEADER);
  for (let i = 0; i < count; i++) {
    const v = vectors[i]!;
    let max = 0;
    for (const x of v) max = Math.max(max, Math.abs(x));
    const scale = max / 127 || 1;
    view.setFloat32(floatsAt + 4 * i, scale, true);
    view.setFloat32(floatsAt + 4 * (count + i), weights[i]!, true);
    view.setFloat32(floatsAt + 4 * (2 * count + i), logp[i]!, true);
    for (let d = 0; d < dims; d++) view.setInt8(compsAt + i * dims + d, Math.round(v[d]! / scale));
  }
  return out;
}

export function decodeWordVectors(bytes: Uint8Array): WordVectors {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, true) !== MAGIC) throw new Error("word vectors: bad magic (regenerate with scripts/build-word-vectors.ts)");
  const dims = view.getUint16(4, true);
  const count = view.getUint32(6, true);
  const keyLen = view.getUint32(10, true);
  const keys = new TextDecoder().decode(bytes.subarray(HEADER, HEADER + keyLen)).split("\n");
  if (keys.length !== count) throw new Error(`word vectors: ${keys.length} keys, header says ${count}`);
  const floatsAt = HEADER + keyLen + ((4 - ((HEADER + keyLen) % 4)) % 4);
  const column = (k: number) => {
    const out = new Float32Array(count);
    for (let i = 0; i < count; i++) out[i] = view.getFloat32(floatsAt + 4 * (k * count + i), true);
    return out;
  };
  const components = new Int8Array(bytes.buffer, bytes.byteOffset + floatsAt + 12 * count, dims * count);
  const index = new Map<string, number>();
  for (let i = 0; i < count; i++) index.set(keys[i]!, i);
  return { dims, keys, index, scales: column(0), weights: column(1), logp: column(2), components };
}
