/**
 * Python sessions by handle. A session is named by a handle the bridge mints (128 random bits,
 * opaque) and belongs to the principal that made it: over stdio the one local user; over HTTP the
 * signed-in caller. `run_python` takes an optional `session`: none means the caller's default session
 * for this connection (one per stdio bridge, per legacy `Mcp-Session-Id`, per principal otherwise),
 * `"new"` makes another, and a handle picks one. A handle used by another principal, unknown or
 * expired is refused with a typed error that says how to go on; no answer tells another principal's
 * handle from one that never existed.
 *
 * A session idle for `ttlMs` is closed (its sandbox removed) and remembered for a day as expired, so
 * the next call with its handle is told its state is gone, and why.
 */
import type { Logger } from "../log.ts";
import type { Session } from "./session.ts";

/** The principal of a bridge that serves one user (stdio, `exec`). */
export const LOCAL_PRINCIPAL = "local";

/** What `run_python`'s `session` argument may say besides a handle. */
export const NEW_SESSION = "new";
const HANDLE = /^s_[A-Za-z0-9_-]{22}$/;
/** How long an expired handle is still recognised as one. */
const REMEMBER_EXPIRED_MS = 24 * 3600_000;

export type SessionProblem = "unknown" | "expired" | "lost" | "limit" | "full";

export class SessionError extends Error {
  constructor(
    readonly problem: SessionProblem,
    message: string,
  ) {
    super(message);
    this.name = "SessionError";
  }
}

export interface SessionsOptions {
  /** A new session for `principal` named `handle` (its sandbox starts at its first run). */
  make: (principal: string, handle: string) => Session;
  /** Idle this long, a session ends (its state with it); 0: never. */
  ttlMs: number;
  /** Sessions one principal may hold at once (their sandboxes may all be running). */
  maxPerPrincipal: number;
  /** Sessions on this node, every principal's together (the node's limit); none when absent. */
  maxTotal?: { count: number; why: string };
  /**
   * At the principal's limit: end one of its connections that nothing uses now (no stream open, no
   * request in flight) and whose default session `canEnd` says may go with it; true when one was ended.
   * A client that leaves without ending its protocol session (many one-shot CLIs) would otherwise hold
   * a session slot, and its sandbox, for the whole idle time.
   */
  reclaim?: (principal: string, canEnd: (connection: string) => boolean) => boolean;
  log: Logger;
}

interface Entry {
  handle: string;
  principal: string;
  session: Session;
  lastUsed: number;
  /** The connection whose default session this is, if it is one. */
  defaultFor?: string;
  /** Runs in progress: a session is not expired under a run. */
  busy: number;
  /** A default session also called by its handle from another connection: it outlives its own. */
  shared?: boolean;
  /** Made ahead of any call (prewarm) and not used yet: its sandbox holds nothing. */
  spare?: boolean;
}

export interface Resolved {
  handle: string;
  session: Session;
  /** Made by this call (the caller had none, or asked for a new one). */
  created: boolean;
  /** Leave it with this, so its idle time counts from the end of the run. */
  release(): void;
  /** The caller's default session ended since its last call: why, for the lost-state note. */
  lost?: string;
}

export class Sessions {
  readonly #opts: SessionsOptions;
  readonly #byHandle = new Map<string, Entry>();
  /** connection -> handle of its default session. */
  readonly #defaults = new Map<string, string>();
  /** handle -> when and why it ended, for handles that expired. */
  readonly #expired = new Map<string, { at: number; principal: string; why: string }>();
  /** connection -> why its default session ended (told once, by the next call's new default session). */
  readonly #lostDefault = new Map<string, string>();
  /** handle -> its adoption under way (two calls with one handle adopt it once). */
  readonly #adopting = new Map<string, Promise<void>>();
  #sweeper: ReturnType<typeof setInterval> | undefined;

  constructor(opts: SessionsOptions) {
    this.#opts = opts;
    if (opts.ttlMs > 0) {
      this.#sweeper = setInterval(() => void this.sweep(), Math.min(60_000, Math.max(1_000, opts.ttlMs / 4)));
      (this.#sweeper as { unref?: () => void }).unref?.();
    }
  }

  /**
   * The session a call addresses. `connection` names the caller's connection (its default session);
   * `requested` is the call's `session` argument.
   */
  resolve(principal: string, connection: string, requested?: string): Resolved {
    if (requested === undefined || requested === "") {
      // A connection's default is its principal's: another principal on a connection of the same name has its own.
      connection = `${principal}\0${connection}`;
      const handle = this.#defaults.get(connection);
      const entry = handle ? this.#byHandle.get(handle) : undefined;
      if (entry && entry.principal === principal) {
        entry.spare = false;
        return this.#use(entry, false);
      }
      const fresh = this.#use(this.#create(principal, connection), true);
      const lost = this.#lostDefault.get(connection);
      this.#lostDefault.delete(connection);
      return lost ? { ...fresh, lost } : fresh;
    }
    if (requested === NEW_SESSION) return this.#use(this.#spare(principal, connection) ?? this.#create(principal), true);
    const entry = this.#byHandle.get(requested);
    if (entry && entry.principal === principal) {
      const lost = entry.busy === 0 ? entry.session.lost : undefined;
      if (lost !== undefined) {
        void this.#end(entry, `its sandbox was lost: ${lost}`);
        throw new SessionError(
          "lost",
          `session ${requested} was lost (its sandbox was lost: ${lost}); its variables, imports and files are gone. Start a new one: omit \`session\` for your default session, or pass session="${NEW_SESSION}"`,
        );
      }
      if (entry.defaultFor !== undefined && entry.defaultFor !== `${principal}\0${connection}`) entry.shared = true;
      return this.#use(entry, false);
    }
    const gone = this.#expired.get(requested);
    if (gone && gone.principal === principal)
      throw new SessionError(
        "expired",
        `session ${requested} has ended (${gone.why}); its variables, imports and files are gone. Start a new one: omit \`session\` for your default session, or pass session="${NEW_SESSION}"`,
      );
    throw new SessionError(
      "unknown",
      HANDLE.test(requested)
        ? `no session ${requested} is open for you (it may belong to a bridge that restarted, or have ended long ago). Start a new one: omit \`session\` for your default session, or pass session="${NEW_SESSION}"`
        : `session must be a handle from an earlier result (s_…) or "${NEW_SESSION}"; got ${JSON.stringify(requested.slice(0, 40))}`,
    );
  }

  /**
   * resolve(), after adopting the session a handle names when this bridge does not hold it but the
   * engine still runs its sandbox (kubernetes: a replica that died, or this bridge before a restart,
   * started it; its pod is labelled with the handle and the principal). The session goes on here with
   * its state. A handle another principal's sandbox carries is not adopted: the answer is the same as
   * for a handle that never existed.
   */
  async resolveAdopting(principal: string, connection: string, requested?: string): Promise<Resolved> {
    if (requested && HANDLE.test(requested) && !this.#byHandle.has(requested) && !this.#expired.has(requested)) {
      let adopting = this.#adopting.get(requested);
      if (!adopting) {
        adopting = this.#adopt(principal, requested).finally(() => this.#adopting.delete(requested));
        this.#adopting.set(requested, adopting);
      }
      await adopting;
    }
    return this.resolve(principal, connection, requested);
  }

  async #adopt(principal: string, handle: string): Promise<void> {
    let entry: Entry;
    try {
      entry = this.#create(principal, undefined, handle);
    } catch (err) {
      if (err instanceof SessionError) return; // at a limit: resolve() says which
      throw err;
    }
    const adopted = await entry.session.adopt().catch((err: unknown) => {
      this.#opts.log.warn("could not adopt a session's sandbox", { session: handle, error: String(err) });
      return false;
    });
    if (adopted) {
      this.#opts.log.info("session adopted", { session: handle, principal });
      return;
    }
    this.#byHandle.delete(handle);
    await entry.session.close().catch(() => {});
  }

  /**
   * Make the connection's default session before its first call and start its sandbox, so that call does
   * not wait for it. Until some call uses it, a call asking for a new session takes it instead: a client
   * whose model opens a session per conversation (opencode, told so) still gets the warm sandbox.
   */
  prewarm(principal: string, connection: string): void {
    const key = `${principal}\0${connection}`;
    if (this.#defaults.has(key)) return;
    try {
      const entry = this.#create(principal, key);
      entry.spare = true;
      entry.session.warm();
    } catch (err) {
      if (!(err instanceof SessionError)) throw err;
    }
  }

  /** The connection ended (a legacy HTTP session's DELETE): its default session ends with it. */
  async endConnection(principal: string, connection: string): Promise<void> {
    connection = `${principal}\0${connection}`;
    const handle = this.#defaults.get(connection);
    this.#defaults.delete(connection);
    this.#lostDefault.delete(connection);
    const entry = handle ? this.#byHandle.get(handle) : undefined;
    if (entry?.shared) {
      // Called by its handle from elsewhere: it stays, as a session of its own, until it idles out.
      entry.defaultFor = undefined;
      this.#opts.log.info("session outlives its connection", { session: entry.handle, principal: entry.principal });
    } else if (entry) await this.#end(entry, "its connection was closed");
    this.#lostDefault.delete(connection);
  }

  /** The connection's default session, if it has one (nothing is made). */
  peekDefault(principal: string, connection: string): Session | undefined {
    const handle = this.#defaults.get(`${principal}\0${connection}`);
    return handle ? this.#byHandle.get(handle)?.session : undefined;
  }

  /** Sessions open now, and how many a principal holds. */
  count(principal?: string): number {
    if (principal === undefined) return this.#byHandle.size;
    let n = 0;
    for (const e of this.#byHandle.values()) if (e.principal === principal) n++;
    return n;
  }

  /** End the sessions idle past the time to live. */
  async sweep(now = performance.now()): Promise<void> {
    const ttl = this.#opts.ttlMs;
    for (const [at, handle] of [...this.#expired].map(([h, v]) => [v.at, h] as const))
      if (now - at > REMEMBER_EXPIRED_MS) this.#expired.delete(handle);
    if (ttl <= 0) return;
    const idle = [...this.#byHandle.values()].filter((e) => e.busy === 0 && now - e.lastUsed > ttl);
    await Promise.all(idle.map((e) => this.#end(e, `idle for more than ${Math.round(ttl / 60_000)} min (MCP_BRIDGE_SESSION_TTL)`)));
  }

  /** `leave`: the bridge is shutting down; sandboxes the engine keeps past it are left for another bridge (Session.close). */
  async close(opts: { leave?: boolean } = {}): Promise<void> {
    if (this.#sweeper) clearInterval(this.#sweeper);
    await Promise.all([...this.#byHandle.values()].map((e) => e.session.close(opts).catch(() => {})));
    this.#byHandle.clear();
    this.#defaults.clear();
  }

  #create(principal: string, defaultFor?: string, handle?: string): Entry {
    const total = this.#opts.maxTotal;
    if (total && this.#byHandle.size >= total.count)
      throw new SessionError(
        "full",
        `this server holds ${total.count} Python sessions, all it has room for (${total.why}); try again in a minute, when an idle one has ended`,
      );
    // Each reclaim ends one connection whose default session goes with it; bounded by the connections.
    while (this.count(principal) >= this.#opts.maxPerPrincipal && this.#opts.reclaim?.(principal, (c) => this.#canEnd(principal, c)));
    if (this.count(principal) >= this.#opts.maxPerPrincipal)
      throw new SessionError(
        "limit",
        `you have ${this.#opts.maxPerPrincipal} sessions open, the most one user may (MCP_BRIDGE_MAX_SESSIONS_PER_USER); use one of them (its handle), or wait for one to end`,
      );
    const adopting = handle !== undefined;
    handle ??= newHandle();
    const entry: Entry = {
      handle,
      principal,
      session: this.#opts.make(principal, handle),
      lastUsed: performance.now(),
      defaultFor,
      busy: 0,
    };
    this.#byHandle.set(handle, entry);
    if (defaultFor !== undefined) this.#defaults.set(defaultFor, handle);
    if (!adopting) this.#opts.log.info("session opened", { session: handle, principal });
    return entry;
  }

  /** Whether ending `connection` would end an idle default session of `principal` (and free its slot). */
  #canEnd(principal: string, connection: string): boolean {
    const handle = this.#defaults.get(`${principal}\0${connection}`);
    const entry = handle ? this.#byHandle.get(handle) : undefined;
    return entry !== undefined && entry.busy === 0 && !entry.shared;
  }

  /** The connection's default session while no call has used it, taken out of that role (see prewarm). */
  #spare(principal: string, connection: string): Entry | undefined {
    const key = `${principal}\0${connection}`;
    const entry = this.#byHandle.get(this.#defaults.get(key) ?? "");
    if (!entry?.spare || entry.principal !== principal) return undefined;
    entry.spare = false;
    entry.defaultFor = undefined;
    this.#defaults.delete(key);
    return entry;
  }

  #use(entry: Entry, created: boolean): Resolved {
    entry.busy++;
    entry.lastUsed = performance.now();
    let released = false;
    return {
      handle: entry.handle,
      session: entry.session,
      created,
      release: () => {
        if (released) return;
        released = true;
        entry.busy--;
        entry.lastUsed = performance.now();
      },
    };
  }

  async #end(entry: Entry, why: string): Promise<void> {
    if (this.#byHandle.get(entry.handle) !== entry) return;
    this.#byHandle.delete(entry.handle);
    if (entry.defaultFor !== undefined && this.#defaults.get(entry.defaultFor) === entry.handle) {
      this.#defaults.delete(entry.defaultFor);
      this.#lostDefault.set(entry.defaultFor, `the session ended: ${why}`);
    }
    this.#expired.set(entry.handle, { at: performance.now(), principal: entry.principal, why });
    this.#opts.log.info("session ended", { session: entry.handle, principal: entry.principal, why });
    await entry.session.close().catch(() => {});
  }
}

/** `s_` and 128 random bits, URL-safe. */
function newHandle(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `s_${btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "")}`;
}
