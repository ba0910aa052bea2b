/**
 * Small wheels built by the tests (a stored, uncompressed zip with METADATA, WHEEL and RECORD): a package
 * whose name is one letter from a popular one, and hostile wheels (an entry that climbs out with `..`,
 * a symlink, a file its RECORD does not match). Real wheels come from PyPI (scripts/test-wheels.sh).
 */
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(data: Buffer): number {
  let c = 0xffffffff;
  for (const b of data) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

export interface ZipFile {
  name: string;
  data: string | Buffer;
  /** Unix mode, e.g. 0o120777 for a symlink. */
  mode?: number;
}

export function zipBytes(files: ZipFile[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const f of files) {
    const data = Buffer.isBuffer(f.data) ? f.data : Buffer.from(f.data);
    const name = Buffer.from(f.name);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, data);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((f.mode ?? 0o100644) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += 30 + name.length + data.length;
  }
  const dir = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dir, end]);
}

function recordHash(data: string | Buffer): string {
  return `sha256=${createHash("sha256").update(data).digest("base64url").replace(/=+$/, "")}`;
}

/**
 * A pure-Python wheel `name`-`version` with `modules` (path -> source) and a correct RECORD, unless
 * `extra` adds entries RECORD does not list or lists wrongly (`recordLies`). Returns the file's path.
 */
export function makeWheel(
  dir: string,
  name: string,
  version: string,
  modules: Record<string, string>,
  opts: { extra?: ZipFile[]; recordLies?: Record<string, string>; requires?: string[] } = {},
): string {
  const dist = name.replace(/-/g, "_");
  const info = `${dist}-${version}.dist-info`;
  const files: ZipFile[] = [
    ...Object.entries(modules).map(([p, src]) => ({ name: p, data: src })),
    {
      name: `${info}/METADATA`,
      data: `Metadata-Version: 2.1\nName: ${name}\nVersion: ${version}\n${(opts.requires ?? []).map((r) => `Requires-Dist: ${r}\n`).join("")}`,
    },
    { name: `${info}/WHEEL`, data: "Wheel-Version: 1.0\nGenerator: mcp-code-exec-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n" },
  ];
  const record = files.map((f) => `${f.name},${opts.recordLies?.[f.name] ?? recordHash(f.data)},${Buffer.byteLength(f.data)}`);
  record.push(`${info}/RECORD,,`);
  const all = [...files, ...(opts.extra ?? []), { name: `${info}/RECORD`, data: `${record.join("\n")}\n` }];
  const path = join(dir, `${dist}-${version}-py3-none-any.whl`);
  writeFileSync(path, zipBytes(all));
  return path;
}
