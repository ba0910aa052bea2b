/**
 * Every configured upstream server, their tool lists (memory, then a disk cache keyed by the server's
 * config, then the live server) and one search index over all of them.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { type Discovery, type ServerEntry, startsUnasked } from "../config/servers.ts";
import { createHash } from "node:crypto";
import { displayTransport } from "../config/mask.ts";
import {
  createSearchIndex,
  hasHan,
  loadHanLexicon,
  loadWordVectors,
  restoreSearchIndex,
  type SearchIndex,
  type ToolDoc,
} from "../docs/search.ts";
import type { Logger } from "../log.ts";
import type { UpstreamAuth } from "../auth/upstream-auth.ts";
import type { LoginStart } from "../auth/login.ts";
import { SkillStore } from "../skills/store.ts";
import { ResultShapes } from "./result-shapes.ts";
import { UpstreamError, UpstreamServer } from "./upstream-server.ts";
import type { EarlyUpstreams } from "./early-upstreams.ts";
import type { UpstreamProcesses } from "./processes.ts";

const LIVE_REFRESH_MS = 5_000;
/** Search hits for saved skills carry this as their server. */
export const SKILLS_SERVER = "skills";
const FAILED_RETRY_MS = 60_000;

/** Which servers an index covers, so a different filter builds a different index. */
function indexKey(entries: ServerEntry[], include: (name: string) => boolean): string {
  return entries
    .filter((e) => include(e.name))
    .map((e) => e.name)
    .join("\0");
}

export interface PoolOptions {
  discovery: Discovery;
  stateDir: string;
  log: Logger;
  version: string;
  connectTimeoutMs: number;
  /** Headers, headersHelper and OAuth of remote servers. */
  auth?: UpstreamAuth;
  /** Every server process started, so none outlives the bridge. */
  processes?: UpstreamProcesses;
  /** Servers started as the first call arrived (early-upstreams.ts): a first start takes its process. */
  early?: EarlyUpstreams;
  /** Servers whose process or connection is another pool's (an admin said they keep no per-user state). */
  shared?: { names: ReadonlySet<string>; pool: UpstreamPool };
  /** Start a sign-in to a remote server, stored with this pool's sign-ins (src/auth/login.ts). */
  signIn?: (server: string) => Promise<LoginStart>;
}

interface CacheFile {
  server: string;
  configHash: string;
  fetchedAt: string;
  tools: Tool[];
}

export class UpstreamPool {
  readonly discovery: Discovery;
  /** Observed result shapes of tools without an outputSchema (state dir, expiring). */
  readonly resultShapes: ResultShapes;
  /** The user's saved skills (state dir), searched along with the tools. */
  readonly skills: SkillStore;
  #opts: PoolOptions;
  #servers = new Map<string, UpstreamServer>();
  #tools = new Map<string, Tool[]>();
  #index: SearchIndex | undefined;
  #indexFor: string | undefined;
  #listing = new Map<string, Promise<Tool[]>>();
  #liveAt = new Map<string, number>();
  #failedAt = new Map<string, number>();

  constructor(opts: PoolOptions) {
    this.#opts = opts;
    this.discovery = opts.discovery;
    this.resultShapes = new ResultShapes(opts.stateDir);
    this.skills = new SkillStore(opts.stateDir);
  }

  entries(): ServerEntry[] {
    return this.discovery.servers;
  }

  entry(name: string): ServerEntry | undefined {
    return this.discovery.servers.find((s) => s.name === name);
  }

  /**
   * Why this server may not start, or undefined. A server the user has not approved never starts,
   * whoever asks (sandbox code loading it, searching, reading docs, `servers --tools`).
   */
  blocked(name: string): UpstreamError | undefined {
    const entry = this.entry(name);
    if (!entry || startsUnasked(entry)) return undefined;
    if (entry.trust.state === "trusted") {
      const n = entry.needs.map((x) => `${x.what} (${x.why}; ${x.supply})`).join("; ");
      return new UpstreamError("policy", `server ${name} needs values only its client can supply: ${n}`, { server: name });
    }
    const what = displayTransport(entry.transport);
    return new UpstreamError(
      "policy",
      `server ${name} needs your approval before it may start: ${entry.trust.reason}. It is defined in ${entry.source} and would run: ${what}. To approve it, run: ${entry.trust.approve}`,
      { server: name },
    );
  }

  /** The server's client if one was made (never starts anything). */
  peek(name: string): UpstreamServer | undefined {
    return this.#servers.get(name);
  }

  /** A sign-in to a remote server, kept with this pool's (per user) sign-ins. */
  signIn(name: string): Promise<LoginStart> {
    const shared = this.#opts.shared;
    if (shared?.names.has(name)) return shared.pool.signIn(name);
    if (!this.#opts.signIn) return Promise.reject(new Error("sign-ins are not offered here"));
    return this.#opts.signIn(name);
  }

  /** The live client of a server; throws if the server may not start. */
  server(name: string): UpstreamServer | undefined {
    const shared = this.#opts.shared;
    if (shared?.names.has(name)) return shared.pool.server(name);
    const entry = this.entry(name);
    if (!entry) return undefined;
    const blocked = this.blocked(name);
    if (blocked) throw blocked;
    let s = this.#servers.get(name);
    if (!s) {
      s = new UpstreamServer(entry, {
        log: this.#opts.log,
        version: this.#opts.version,
        connectTimeoutMs: this.#opts.connectTimeoutMs,
        onTools: (tools) => this.#remember(entry, tools),
        auth: this.#opts.auth,
        processes: this.#opts.processes,
        early: this.#opts.early,
      });
      this.#servers.set(name, s);
    }
    return s;
  }

  /**
   * Start these servers now, ahead of the run that named them: their start overlaps its sandbox's.
   * One whose tool list is not known lists it too (what the run's proxies ask first). Servers that may
   * not start are left alone (the run was refused already); failures are heard by the run's first use.
   */
  warm(names: readonly string[]): void {
    for (const name of names) {
      const shared = this.#opts.shared;
      if (shared?.names.has(name)) {
        shared.pool.warm([name]);
        continue;
      }
      if (!this.entry(name) || this.blocked(name)) continue;
      void this.server(name)!.warm({ listTools: !this.knownTools(name) });
    }
  }

  /** Tool list of one server: memory, disk cache, or the live server (started if needed). */
  async tools(name: string, opts: { live?: boolean } = {}): Promise<Tool[]> {
    const entry = this.entry(name);
    if (!entry) throw new Error(`unknown server ${name}`);
    const known = this.#tools.get(name) ?? this.#readCache(entry);
    // A live refresh (asked for when a tool is not in the known list) happens at most every few
    // seconds per server, and concurrent askers share one request.
    if (known && (!opts.live || Date.now() - (this.#liveAt.get(name) ?? 0) < LIVE_REFRESH_MS)) return known;
    // Not approved: what the cache knows, or the reason it cannot be asked.
    const blocked = this.blocked(name);
    if (blocked) {
      if (known) return known;
      throw blocked;
    }
    let pending = this.#listing.get(name);
    if (!pending) {
      this.#liveAt.set(name, Date.now());
      pending = this.server(name)!
        .listTools()
        .then(
          (tools) => {
            this.#failedAt.delete(name);
            return tools;
          },
          (err: unknown) => {
            this.#failedAt.set(name, Date.now());
            throw err;
          },
        )
        .finally(() => this.#listing.delete(name));
      this.#listing.set(name, pending);
    }
    return pending;
  }

  /** Tool list if known without starting anything. */
  knownTools(name: string): Tool[] | undefined {
    const entry = this.entry(name);
    return entry ? (this.#tools.get(name) ?? this.#readCache(entry)) : undefined;
  }

  /**
   * One index over every server's tools; servers with no cached list are started once, concurrently.
   * A server that failed to start is not retried for a minute; `include` leaves servers out entirely.
   */
  async searchIndex(
    include: (name: string) => boolean = () => true,
  ): Promise<{ index: SearchIndex; errors: Array<{ server: string; error: string }> }> {
    const errors: Array<{ server: string; error: string }> = [];
    const now = Date.now();
    const unknown = this.entries().filter((e) => include(e.name) && !this.knownTools(e.name));
    // Servers the user has not approved are searched from the cache only: they are never started here.
    for (const e of unknown) {
      const blocked = this.blocked(e.name);
      if (blocked) errors.push({ server: e.name, error: `not searched (never started): ${blocked.message}` });
    }
    const missing = unknown.filter((e) => !this.blocked(e.name));
    const retry = missing.filter((e) => now - (this.#failedAt.get(e.name) ?? 0) >= FAILED_RETRY_MS);
    for (const e of missing) {
      if (!retry.includes(e))
        errors.push({
          server: e.name,
          error: `failed to start ${Math.round((now - this.#failedAt.get(e.name)!) / 1000)}s ago; retried after a minute (runtime.describe_server(${JSON.stringify(e.name)}) says why)`,
        });
    }
    if (retry.length) {
      await Promise.all(
        retry.map((e) =>
          this.tools(e.name).catch((err: Error) => {
            errors.push({ server: e.name, error: err.message });
          }),
        ),
      );
    }
    const skills = this.skills.list();
    const key = `${indexKey(this.entries(), include)}\u0001${skills.map((s) => `${s.name}@${s.modified}`).join("\0")}`;
    if (!this.#index || this.#indexFor !== key) {
      this.#indexFor = key;
      const docs: ToolDoc[] = this.entries()
        .filter((e) => include(e.name))
        .flatMap((e) =>
          (this.knownTools(e.name) ?? []).map((t) => ({
            server: e.name,
            name: t.name,
            title: t.title,
            description: t.description,
            inputSchema: t.inputSchema,
          })),
        );
      // Saved skills rank with the tools, under the server name SKILLS_SERVER.
      for (const s of skills) docs.push({ server: SKILLS_SERVER, name: s.name, description: s.description });
      // General word knowledge: decoded once per process; without it the index matches words only.
      const wordVectors = await loadWordVectors().catch((err: unknown) => {
        this.#opts.log.info("search: word vectors unavailable, matching words only", { error: String(err) });
        return null;
      });
      // Tools described in Chinese are indexed with the English of their words too: the
      // Chinese-English word list is read when some tool has Chinese text (han-lexicon.ts).
      // The docs' JSON is also the cache key's text: serialized once.
      const docsJson = JSON.stringify(docs);
      const han = hasHan(docsJson)
        ? await loadHanLexicon().catch((err: unknown) => {
            this.#opts.log.info("search: Chinese word list unavailable, indexing Chinese descriptions as characters only", {
              error: String(err),
            });
            return null;
          })
        : null;
      this.#index = this.#cachedIndex(docs, docsJson, wordVectors, han);
    }
    return { index: this.#index, errors };
  }

  /**
   * The index for these docs from the disk cache (keyed by a hash of the docs and the bridge
   * version), else built and written there; a new bridge with unchanged tool lists skips the build.
   */
  #cachedIndex(
    docs: ToolDoc[],
    docsJson: string,
    wordVectors: Awaited<ReturnType<typeof loadWordVectors>> | null,
    han: Awaited<ReturnType<typeof loadHanLexicon>> | null,
  ): SearchIndex {
    const key = createHash("sha256")
      .update(`${this.#opts.version}\0${wordVectors ? wordVectors.keys.length : 0}\0${han ? han.size : 0}\0${docsJson}`)
      .digest("hex")
      .slice(0, 32);
    const dir = join(this.#opts.stateDir, "search-index");
    const file = join(dir, `${key}.json`);
    try {
      const restored = restoreSearchIndex(docs, readFileSync(file, "utf8"), { wordVectors });
      if (restored) return restored;
    } catch {
      // not cached yet
    }
    const index = createSearchIndex(docs, { wordVectors, han });
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      // One index per tool-list state is enough: older snapshots go.
      for (const old of readdirSync(dir)) if (old !== `${key}.json`) rmSync(join(dir, old), { force: true });
      writeFileSync(`${file}.tmp`, index.snapshot(), { mode: 0o600 });
      renameSync(`${file}.tmp`, file);
    } catch (err) {
      this.#opts.log.debug("search index cache write failed", { error: String(err) });
    }
    return index;
  }

  /** Restarts after crashes, summed over every server. */
  restarts(): number {
    let n = 0;
    for (const s of this.#servers.values()) n += s.restarts;
    return n;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#servers.values()].map((s) => s.close()));
  }

  #remember(entry: ServerEntry, tools: Tool[]): void {
    const before = this.#tools.get(entry.name);
    this.#tools.set(entry.name, tools);
    if (before && JSON.stringify(before) === JSON.stringify(tools)) return; // unchanged: keep index and cache file
    this.#index = undefined;
    const file: CacheFile = { server: entry.name, configHash: entry.configHash, fetchedAt: new Date().toISOString(), tools };
    try {
      const dir = this.#cacheDir();
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const path = join(dir, `${entry.configHash}.json`);
      writeFileSync(`${path}.tmp`, JSON.stringify(file), { mode: 0o600 });
      renameSync(`${path}.tmp`, path);
    } catch (err) {
      this.#opts.log.debug("tool cache write failed", { server: entry.name, error: String(err) });
    }
  }

  #readCache(entry: ServerEntry): Tool[] | undefined {
    try {
      const raw = JSON.parse(readFileSync(join(this.#cacheDir(), `${entry.configHash}.json`), "utf8")) as CacheFile;
      if (raw.configHash !== entry.configHash || !Array.isArray(raw.tools)) return undefined;
      this.#tools.set(entry.name, raw.tools);
      return raw.tools;
    } catch {
      return undefined;
    }
  }

  #cacheDir(): string {
    return join(this.#opts.stateDir, "tool-cache");
  }
}
