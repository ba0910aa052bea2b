/**
 * The bridge's package store in the state dir, content-addressed by each wheel's SHA-256:
 *   packages/wheels/<file>.whl       wheels downloaded after approval (a find-links folder for the resolver)
 *   packages/site/<name>-<version>-<sha256[:16]>/   each wheel unpacked on its own, mounted read-only
 *                                    into every sandbox at CONTAINER_PACKAGES; a session puts the
 *                                    folders it installed on sys.path
 *   packages/store.json              every wheel: file, name, version, SHA-256, size, source, when
 * A wheelhouse (MCP_BRIDGE_WHEELHOUSE) is the user's folder of wheels; `packages add` keeps its
 * `wheelhouse.json` (file -> SHA-256), which installs and `packages verify` check files against.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as z from "zod";

/** Where the store's site folder appears inside the sandbox (read-only). */
export const CONTAINER_PACKAGES = "/opt/mcp-code-exec/packages";
export const WHEELHOUSE_MANIFEST = "wheelhouse.json";

export const StoredWheelSchema = z.object({
  file: z.string(),
  name: z.string(),
  version: z.string(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  size: z.number().int().nonnegative(),
  /** Where it came from: the index URL, the wheelhouse folder, or the bridge's cache. */
  source: z.string(),
  /** The folder it was unpacked into, under packages/site. */
  site: z.string(),
  added: z.string(),
});
export type StoredWheel = z.infer<typeof StoredWheelSchema>;

const StoreFileSchema = z.object({ wheels: z.record(z.string(), StoredWheelSchema) });
const WheelhouseSchema = z.object({ files: z.record(z.string(), z.object({ sha256: z.string(), size: z.number() })) });

export function storeDirs(stateDir: string) {
  const root = join(stateDir, "packages");
  return {
    root,
    wheels: join(root, "wheels"),
    site: join(root, "site"),
    tmp: join(root, "tmp"),
    uvCache: join(root, "uv-cache"),
    manifest: join(root, "store.json"),
  };
}

/** The folder name a wheel unpacks into: readable in tracebacks, addressed by its hash. */
export function siteName(name: string, version: string, sha256: string): string {
  return `${name.toLowerCase().replace(/[^a-z0-9.]+/g, "_")}-${version.replace(/[^A-Za-z0-9.+!]+/g, "_")}-${sha256.slice(0, 16)}`;
}

export class PackageStore {
  readonly dirs: ReturnType<typeof storeDirs>;

  constructor(stateDir: string) {
    this.dirs = storeDirs(stateDir);
  }

  /** Make the folders (the site folder must exist before a sandbox mounts it). */
  ensure(): void {
    for (const d of [this.dirs.wheels, this.dirs.site, this.dirs.tmp]) mkdirSync(d, { recursive: true, mode: 0o755 });
  }

  read(): Record<string, StoredWheel> {
    if (!existsSync(this.dirs.manifest)) return {};
    const parsed = StoreFileSchema.safeParse(JSON.parse(readFileSync(this.dirs.manifest, "utf8")));
    return parsed.success ? parsed.data.wheels : {};
  }

  bySha(sha256: string): StoredWheel | undefined {
    return this.read()[sha256];
  }

  /** Record wheels (several bridges may write: each write is whole, by rename). */
  record(wheels: StoredWheel[]): void {
    const all = this.read();
    for (const w of wheels) all[w.sha256] = w;
    this.write(all);
  }

  write(all: Record<string, StoredWheel>): void {
    this.ensure();
    const tmp = `${this.dirs.manifest}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ wheels: all }, null, 1)}\n`);
    renameSync(tmp, this.dirs.manifest);
  }
}

/** A wheelhouse's manifest (file -> sha256, size), or undefined when it has none. */
export function readWheelhouse(dir: string): Record<string, { sha256: string; size: number }> | undefined {
  const path = join(dir, WHEELHOUSE_MANIFEST);
  if (!existsSync(path)) return undefined;
  const parsed = WheelhouseSchema.safeParse(JSON.parse(readFileSync(path, "utf8")));
  if (!parsed.success) throw new Error(`${path} is not a wheelhouse manifest: delete it and run \`mcp-code-exec packages add\` again`);
  return parsed.data.files;
}

export function writeWheelhouse(dir: string, files: Record<string, { sha256: string; size: number }>): void {
  const tmp = join(dir, `${WHEELHOUSE_MANIFEST}.${process.pid}.tmp`);
  writeFileSync(tmp, `${JSON.stringify({ files }, null, 1)}\n`);
  renameSync(tmp, join(dir, WHEELHOUSE_MANIFEST));
}
