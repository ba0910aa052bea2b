/**
 * What an engine probe learned, kept across bridge runs so a new bridge's first call does not wait for
 * `podman info` (hundreds of milliseconds) to learn what it learned last time. An entry is keyed by the
 * engine, its binary's path and identity (device, inode, size, mtime, ctime: an upgrade or a
 * replaced binary changes them), our uid and the engine's environment (DOCKER_HOST, CONTAINER_HOST,
 * PATH, ...), and the file by the bridge's version. A hit is only a head start: when a sandbox fails to
 * start on what a cached probe said, the session drops the entry, probes the engine afresh and tries
 * once more (session.ts), so a daemon that moved or stopped is still noticed and explained.
 */
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as z from "zod";
import type { ProbeCache } from "../../adapters/types.ts";
import { sha256Hex } from "../host/hash.ts";

/** Entries older than this are probed again whatever their key says. */
export const PROBE_CACHE_MAX_AGE_MS = 7 * 24 * 3600 * 1000;
export const PROBE_CACHE_FILE = "engine-probes.json";

const EntrySchema = z.object({
  savedAt: z.number().describe("When the probe ran (epoch ms)"),
  info: z.object({
    engine: z.string().max(200),
    binary: z.string().max(4096),
    version: z.string().max(200),
    details: z.record(z.string().max(200), z.string().max(2000)),
  }),
  // Only what a probe can find (docker's `--host unix://SOCKET`): a cache file is never a way to slip
  // other flags onto the engine's command line.
  connectFlags: z
    .array(
      z
        .string()
        .max(4096)
        .regex(/^(--host|unix:\/\/\S+)$/),
    )
    .max(2)
    .optional(),
});
const FileSchema = z.object({ bridge: z.string(), entries: z.record(z.string().max(200), EntrySchema) });
type CacheFile = z.infer<typeof FileSchema>;

/**
 * The key of an engine's probe: undefined when the binary cannot be inspected (then nothing is
 * cached). The environment and binary identity are hashed so the file holds no paths of the user's.
 */
export function probeKey(engine: string, binary: string, env: Record<string, string>): string | undefined {
  let id: string;
  try {
    const st = statSync(binary);
    id = [st.dev, st.ino, st.size, st.mtimeMs, st.ctimeMs].join(":");
  } catch {
    return undefined;
  }
  const envText = Object.keys(env)
    .sort()
    .map((k) => `${k}=${env[k]}`)
    .join("\0");
  const digest = sha256Hex([binary, id, process.getuid?.() ?? "", envText].join("\0")).slice(0, 32);
  return `${engine}:${digest}`;
}

/** A cache in `stateDir`; a missing, unreadable or foreign file is an empty cache, never an error. */
export function fileProbeCache(stateDir: string, bridgeVersion: string, now: () => number = Date.now): ProbeCache {
  const path = join(stateDir, PROBE_CACHE_FILE);
  let data: CacheFile | undefined;
  const load = (): CacheFile => {
    if (data) return data;
    try {
      const parsed = FileSchema.safeParse(JSON.parse(readFileSync(path, "utf8")));
      data = parsed.success && parsed.data.bridge === bridgeVersion ? parsed.data : undefined;
    } catch {
      data = undefined;
    }
    data ??= { bridge: bridgeVersion, entries: {} };
    return data;
  };
  const save = () => {
    try {
      mkdirSync(stateDir, { recursive: true, mode: 0o700 });
      const tmp = `${path}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(data), { mode: 0o600 });
      renameSync(tmp, path);
    } catch {
      // a cache that cannot be written only costs the next bridge a probe
    }
  };
  return {
    get(key) {
      const entry = load().entries[key];
      if (!entry || now() - entry.savedAt > PROBE_CACHE_MAX_AGE_MS || entry.savedAt > now()) return undefined;
      return { info: entry.info, connectFlags: entry.connectFlags };
    },
    set(key, value) {
      data = undefined; // another bridge may have written since we read: merge into the latest
      load().entries[key] = { savedAt: now(), info: value.info, connectFlags: value.connectFlags };
      save();
    },
    delete(key) {
      data = undefined;
      if (!(key in load().entries)) return;
      delete load().entries[key];
      save();
    },
  };
}
