/**
 * Getting one resolved wheel onto this host, checked: downloaded from the index into the store (size
 * capped while it streams, SHA-256 compared with the one the index listed before it is kept), or read
 * from a local folder and hashed (compared with the wheelhouse's manifest, or with what the store
 * recorded when the file is one of its own). A wheel that does not match is refused: tampered.
 */
import { createReadStream, existsSync } from "node:fs";
import { mkdir, open, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createSha256 } from "../host/hash.ts";
import type { LockedWheel } from "./uv.ts";
import { WheelError } from "./wheel.ts";

export interface Fetched {
  path: string;
  sha256: string;
  size: number;
  /** Whether bytes came over the network. */
  downloaded: boolean;
}

export async function hashFile(path: string): Promise<{ sha256: string; size: number }> {
  const h = createSha256();
  let size = 0;
  for await (const chunk of createReadStream(path)) {
    h.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: h.digest("hex"), size };
}

/** A wheel already on disk (wheelhouse or store): hashed and compared with what is known of it. */
export async function localWheel(w: LockedWheel, expected: { sha256: string; from: string } | undefined): Promise<Fetched> {
  const path = fileURLToPath(w.url);
  const got = await hashFile(path);
  if (got.sha256 !== w.sha256)
    throw new WheelError(`${basename(path)} changed while it was being resolved (SHA-256 ${got.sha256.slice(0, 16)}…): refused`);
  if (expected && expected.sha256 !== got.sha256)
    throw new WheelError(
      `${basename(path)} does not match ${expected.from} (SHA-256 ${got.sha256.slice(0, 16)}…, recorded ${expected.sha256.slice(0, 16)}…): the file was tampered with; refused. \`mcp-code-exec packages verify\` lists every such file`,
    );
  return { path, sha256: got.sha256, size: got.size, downloaded: false };
}

/** Download `w` into `wheelsDir`, at most `maxBytes`; the file is kept only when its SHA-256 matches. */
export async function downloadWheel(
  w: LockedWheel,
  wheelsDir: string,
  maxBytes: number,
  doFetch: typeof fetch = fetch,
  signal?: AbortSignal,
): Promise<Fetched> {
  const url = new URL(w.url);
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new WheelError(`${w.name}: the index gave a ${url.protocol} URL; only http(s) downloads are made`);
  const file = decodeURIComponent(url.pathname.split("/").pop() ?? "");
  if (!/^[A-Za-z0-9._+!-]+\.whl$/.test(file)) throw new WheelError(`${w.name}: ${JSON.stringify(file)} is not a wheel file name`);
  const final = join(wheelsDir, file);
  if (existsSync(final)) {
    const got = await hashFile(final);
    if (got.sha256 === w.sha256) return { path: final, ...got, downloaded: false };
  }
  await mkdir(wheelsDir, { recursive: true });
  const tmp = `${final}.part-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const res = await doFetch(url, { redirect: "follow", signal });
  if (!res.ok || !res.body) throw new WheelError(`${w.name}: downloading ${file} failed: HTTP ${res.status}`);
  const declared = Number(res.headers.get("content-length") ?? Number.NaN);
  if (declared > maxBytes) throw new WheelError(`${file} is ${declared} bytes, over MCP_BRIDGE_PACKAGE_MAX_SIZE`);
  const h = createSha256();
  let size = 0;
  const fh = await open(tmp, "w", 0o644);
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.length;
      if (size > maxBytes) throw new WheelError(`${file} is larger than MCP_BRIDGE_PACKAGE_MAX_SIZE: download stopped`);
      h.update(chunk);
      await fh.write(chunk);
    }
  } catch (err) {
    await fh.close();
    await rm(tmp, { force: true });
    throw err;
  }
  await fh.close();
  const sha256 = h.digest("hex");
  if (sha256 !== w.sha256 || (w.size !== undefined && w.size !== size)) {
    await rm(tmp, { force: true });
    throw new WheelError(
      `${file} from the index has SHA-256 ${sha256.slice(0, 16)}… (${size} bytes), but the index listed ${w.sha256.slice(0, 16)}…${w.size !== undefined ? ` (${w.size} bytes)` : ""}: refused, nothing was installed`,
    );
  }
  await mkdir(dirname(final), { recursive: true });
  await rename(tmp, final);
  return { path: final, sha256, size: (await stat(final)).size, downloaded: true };
}
