/**
 * Unpacking one wheel into a folder of its own, as an installer would lay out site-packages, without
 * trusting the wheel: every name must stay inside the folder (no absolute path, no `..`, no backslash,
 * no NUL, no symlink), every file must be listed in the wheel's RECORD with the SHA-256 it has, sizes
 * and counts are capped, and the folder appears whole (renamed into place) or not at all. Only what
 * imports need is written: purelib and platlib; scripts, headers and data are left out.
 */
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import { createSha256 } from "../host/hash.ts";
import { ZipError, ZipReader, type ZipLimits } from "./zip-reader.ts";

export class WheelError extends Error {
  readonly kind = "bad_wheel";
}

/** name, version and tags from a wheel's file name (PEP 427). */
export function parseWheelName(file: string): { name: string; version: string; tags: string } | undefined {
  const m =
    /^([A-Za-z0-9](?:[A-Za-z0-9._]*[A-Za-z0-9])?)-([0-9][A-Za-z0-9.!+_]*)(?:-[0-9][A-Za-z0-9_.]*)?-([^-/\\]+-[^-/\\]+-[^-/\\]+)\.whl$/.exec(
      file,
    );
  return m ? { name: m[1]!, version: m[2]!, tags: m[3]! } : undefined;
}

const SIGNATURES = /\/RECORD(\.jws|\.p7s)?$/;

/** A stored name that can be written under a folder: relative, plain parts, nothing that climbs out. */
export function safeRelative(name: string): string[] | undefined {
  if (!name || name.length > 1024 || name.includes("\0") || name.includes("\\") || name.startsWith("/")) return undefined;
  if (/^[A-Za-z]:/.test(name)) return undefined;
  const parts = name.replace(/\/$/, "").split("/");
  if (parts.some((p) => p === "" || p === "." || p === "..")) return undefined;
  return parts;
}

/** RECORD lines: path,hash,size (CSV; a path with a comma is quoted). */
function parseRecord(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    if (!line) continue;
    const cells: string[] = [];
    let cur = "";
    let quoted = false;
    for (let i = 0; i < line.length; i++) {
      const c = line[i]!;
      if (quoted) {
        if (c === '"' && line[i + 1] === '"') (cur += '"'), i++;
        else if (c === '"') quoted = false;
        else cur += c;
      } else if (c === '"') quoted = true;
      else if (c === ",") cells.push(cur), (cur = "");
      else cur += c;
    }
    cells.push(cur);
    out.set(cells[0]!, cells[1] ?? "");
  }
  return out;
}

function b64url(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64url").replace(/=+$/, "");
}

export interface Unpacked {
  /** The folder the wheel was unpacked into. */
  dir: string;
  files: number;
  bytes: number;
  /** Parts left out (console scripts, headers, data files), for the notes. */
  skipped: string[];
}

/** Unpack `wheelPath` into `dest` (which must not exist yet); `tmpParent` is on the same filesystem. */
export async function unpackWheel(wheelPath: string, dest: string, limits: ZipLimits): Promise<Unpacked> {
  const file = wheelPath.split(/[\\/]/).pop()!;
  const parsed = parseWheelName(file);
  if (!parsed) throw new WheelError(`${file} is not a wheel file name (name-version-python-abi-platform.whl)`);
  let zip: ZipReader;
  try {
    zip = await ZipReader.open(wheelPath, limits);
  } catch (err) {
    throw new WheelError(`${file}: ${(err as Error).message}`);
  }
  const tmp = `${dest}.part-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  try {
    const infos = new Set(zip.entries.map((e) => e.name.split("/")[0]!).filter((t) => t.endsWith(".dist-info")));
    if (infos.size !== 1) throw new WheelError(`${file}: expected one .dist-info folder, found ${infos.size}`);
    const info = [...infos][0]!;
    const dataDir = `${info.slice(0, -".dist-info".length)}.data`;
    const recordEntry = zip.entries.find((e) => e.name === `${info}/RECORD`);
    if (!recordEntry) throw new WheelError(`${file}: no RECORD: cannot check its files`);
    const record = parseRecord((await zip.read(recordEntry)).toString("utf8"));
    const root = resolve(tmp);
    const written = new Set<string>();
    const skipped = new Set<string>();
    let files = 0;
    let bytes = 0;
    for (const e of zip.entries) {
      if (e.name.endsWith("/")) continue;
      const parts = safeRelative(e.name);
      if (!parts) throw new WheelError(`${file}: entry ${JSON.stringify(e.name)} would be written outside its folder`);
      let target = parts;
      if (parts[0] === dataDir) {
        if (parts[1] !== "purelib" && parts[1] !== "platlib") {
          skipped.add(parts[1] ?? "data");
          continue;
        }
        target = parts.slice(2);
        if (!target.length) continue;
      }
      const out = resolve(root, ...target);
      if (!out.startsWith(root + sep)) throw new WheelError(`${file}: entry ${JSON.stringify(e.name)} would be written outside its folder`);
      if (written.has(out)) throw new WheelError(`${file}: two entries write ${target.join("/")}`);
      written.add(out);
      const data = await zip.read(e);
      if (!SIGNATURES.test(`/${e.name}`)) {
        const want = record.get(e.name);
        if (want === undefined) throw new WheelError(`${file}: ${e.name} is not listed in its RECORD`);
        const got = `sha256=${b64url(createSha256().update(data).digest())}`;
        if (want !== got) throw new WheelError(`${file}: ${e.name} does not match the hash its RECORD lists: the wheel was altered`);
      }
      await mkdir(dirname(out), { recursive: true, mode: 0o755 });
      await writeFile(out, data, { mode: 0o644 });
      files++;
      bytes += data.length;
    }
    await mkdir(dirname(dest), { recursive: true });
    try {
      await rename(tmp, dest);
    } catch (err) {
      // Another bridge unpacked the same wheel meanwhile: same hash, same files.
      if ((err as NodeJS.ErrnoException).code !== "ENOTEMPTY" && (err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      await rm(tmp, { recursive: true, force: true });
    }
    return { dir: dest, files, bytes, skipped: [...skipped] };
  } catch (err) {
    await rm(tmp, { recursive: true, force: true }).catch(() => {});
    if (err instanceof ZipError) throw new WheelError(`${file}: ${err.message}`);
    throw err;
  } finally {
    await zip.close();
  }
}

/** Re-check an unpacked folder against the RECORD it carries: the files an install wrote, unchanged. */
export async function verifyUnpacked(dir: string): Promise<string[]> {
  const { readdir, readFile } = await import("node:fs/promises");
  const problems: string[] = [];
  const infos = (await readdir(dir)).filter((n) => n.endsWith(".dist-info"));
  for (const info of infos) {
    const record = parseRecord(await readFile(join(dir, info, "RECORD"), "utf8"));
    const dataDir = `${info.slice(0, -".dist-info".length)}.data`;
    for (const [name, want] of record) {
      if (!want || SIGNATURES.test(`/${name}`)) continue;
      const parts = safeRelative(name);
      if (!parts) continue;
      if (parts[0] === dataDir && parts[1] !== "purelib" && parts[1] !== "platlib") continue;
      const path = parts[0] === dataDir ? join(dir, ...parts.slice(2)) : join(dir, ...parts);
      try {
        const got = `sha256=${b64url(
          createSha256()
            .update(await readFile(path))
            .digest(),
        )}`;
        if (got !== want) problems.push(`${path}: changed since it was installed`);
      } catch {
        problems.push(`${path}: missing`);
      }
    }
  }
  return problems;
}
