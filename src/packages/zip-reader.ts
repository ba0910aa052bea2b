/**
 * Reading a wheel (a zip file) without trusting it: the central directory is parsed with bounds on
 * every count and size (zip64 included), each entry is inflated with the size it declares as a hard
 * cap, and an entry that is encrypted, a symlink, or in a compression we do not know is refused.
 * Names are returned as stored; wheel.ts decides which names may be written where.
 */
import { open, type FileHandle } from "node:fs/promises";
import { inflateRaw } from "node:zlib";

export interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  size: number;
  localOffset: number;
  /** Unix mode bits when the archive was made on Unix. */
  mode: number;
}

export class ZipError extends Error {}

const EOCD = 0x06054b50;
const EOCD64 = 0x06064b50;
const EOCD64_LOCATOR = 0x07064b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

export interface ZipLimits {
  maxEntries: number;
  /** Largest total of the entries' sizes once inflated. */
  maxTotalBytes: number;
}

export class ZipReader {
  readonly entries: ZipEntry[];
  #fh: FileHandle;

  private constructor(fh: FileHandle, entries: ZipEntry[]) {
    this.#fh = fh;
    this.entries = entries;
  }

  static async open(path: string, limits: ZipLimits): Promise<ZipReader> {
    const fh = await open(path, "r");
    try {
      return new ZipReader(fh, await readDirectory(fh, limits));
    } catch (err) {
      await fh.close();
      throw err;
    }
  }

  /** The entry's bytes, inflated; never more than it declared. */
  async read(e: ZipEntry): Promise<Buffer> {
    const head = await readAt(this.#fh, e.localOffset, 30);
    if (head.readUInt32LE(0) !== LOCAL) throw new ZipError(`${e.name}: no local header where the directory says`);
    const start = e.localOffset + 30 + head.readUInt16LE(26) + head.readUInt16LE(28);
    const raw = await readAt(this.#fh, start, e.compressedSize);
    if (e.method === 0) {
      if (raw.length !== e.size) throw new ZipError(`${e.name}: stored size does not match`);
      return raw;
    }
    const out = await new Promise<Buffer>((resolve, reject) =>
      inflateRaw(raw, { maxOutputLength: Math.max(e.size, 1) }, (err, buf) =>
        err ? reject(new ZipError(`${e.name}: cannot inflate (${err.message}); larger than it declares, or corrupt`)) : resolve(buf),
      ),
    );
    if (out.length !== e.size) throw new ZipError(`${e.name}: inflated to ${out.length} bytes, declared ${e.size}`);
    return out;
  }

  close(): Promise<void> {
    return this.#fh.close();
  }
}

async function readAt(fh: FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const { bytesRead } = await fh.read(buf, got, length - got, position + got);
    if (bytesRead === 0) throw new ZipError("the file ends early: truncated or not a zip");
    got += bytesRead;
  }
  return buf;
}

async function readDirectory(fh: FileHandle, limits: ZipLimits): Promise<ZipEntry[]> {
  const size = (await fh.stat()).size;
  const tailLen = Math.min(size, 22 + 65535);
  const tail = await readAt(fh, size - tailLen, tailLen);
  let at = -1;
  for (let i = tail.length - 22; i >= 0; i--)
    if (tail.readUInt32LE(i) === EOCD) {
      at = i;
      break;
    }
  if (at < 0) throw new ZipError("not a zip file (no end of central directory)");
  let count = tail.readUInt16LE(at + 10);
  let dirSize = tail.readUInt32LE(at + 12);
  let dirOffset = tail.readUInt32LE(at + 16);
  const locAt = at - 20;
  if (locAt >= 0 && tail.readUInt32LE(locAt) === EOCD64_LOCATOR) {
    const rec = await readAt(fh, Number(tail.readBigUInt64LE(locAt + 8)), 56);
    if (rec.readUInt32LE(0) !== EOCD64) throw new ZipError("broken zip64 end record");
    count = Number(rec.readBigUInt64LE(32));
    dirSize = Number(rec.readBigUInt64LE(40));
    dirOffset = Number(rec.readBigUInt64LE(48));
  }
  if (count > limits.maxEntries) throw new ZipError(`${count} entries, more than the ${limits.maxEntries} allowed`);
  if (dirOffset + dirSize > size) throw new ZipError("the central directory points past the end of the file");
  const dir = await readAt(fh, dirOffset, dirSize);
  const entries: ZipEntry[] = [];
  let total = 0;
  let p = 0;
  for (let i = 0; i < count; i++) {
    if (p + 46 > dir.length || dir.readUInt32LE(p) !== CENTRAL) throw new ZipError("broken central directory");
    const madeBy = dir.readUInt16LE(p + 4) >> 8;
    const flags = dir.readUInt16LE(p + 8);
    const method = dir.readUInt16LE(p + 10);
    let compressedSize = dir.readUInt32LE(p + 20);
    let entrySize = dir.readUInt32LE(p + 24);
    const nameLen = dir.readUInt16LE(p + 28);
    const extraLen = dir.readUInt16LE(p + 30);
    const commentLen = dir.readUInt16LE(p + 32);
    const external = dir.readUInt32LE(p + 38);
    let localOffset = dir.readUInt32LE(p + 42);
    const name = dir.toString("utf8", p + 46, p + 46 + nameLen);
    // zip64: the sizes and offset that were 0xffffffff come from the extra field, in this order.
    let x = p + 46 + nameLen;
    const xEnd = x + extraLen;
    while (x + 4 <= xEnd) {
      const id = dir.readUInt16LE(x);
      const len = dir.readUInt16LE(x + 2);
      if (id === 1) {
        let q = x + 4;
        if (entrySize === 0xffffffff) (entrySize = Number(dir.readBigUInt64LE(q))), (q += 8);
        if (compressedSize === 0xffffffff) (compressedSize = Number(dir.readBigUInt64LE(q))), (q += 8);
        if (localOffset === 0xffffffff) localOffset = Number(dir.readBigUInt64LE(q));
      }
      x += 4 + len;
    }
    p = xEnd + commentLen;
    const mode = madeBy === 3 ? external >>> 16 : 0;
    if (flags & 1) throw new ZipError(`${name}: encrypted entries are not accepted`);
    if ((mode & S_IFMT) === S_IFLNK) throw new ZipError(`${name}: symbolic links are not accepted in a wheel`);
    if (method !== 0 && method !== 8) throw new ZipError(`${name}: compression method ${method} is not accepted`);
    if (localOffset + compressedSize > size) throw new ZipError(`${name}: points past the end of the file`);
    total += entrySize;
    if (total > limits.maxTotalBytes)
      throw new ZipError(`unpacks to more than ${Math.round(limits.maxTotalBytes / 1048576)} MiB (MCP_BRIDGE_PACKAGE_MAX_SIZE)`);
    entries.push({ name, method, compressedSize, size: entrySize, localOffset, mode });
  }
  return entries;
}
