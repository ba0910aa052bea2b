/**
 * Credentials the bridge sends to one upstream server, removed from whatever that server sends back
 * before sandbox code (or a log line) sees it. A server may quote the request's headers in an error, an
 * HTTP 500 page may echo them, a stdio server may print its env: none of it reaches code with the secret.
 *
 * What counts as a credential: every Authorization header actually sent (static, from a headersHelper,
 * or the stored OAuth sign-in's bearer token), other headers whose name or value says secret, env values
 * and arguments of a stdio server whose name or shape says secret, and the secret parts of the URL
 * (password, secret-named query values, token-shaped path segments). Short values (under 8 characters)
 * are left alone: removing "1" or "true" from results would corrupt them and protects nothing.
 */
import { maskArgs, SECRET_NAME, secretPathSegments, TOKEN_SHAPE } from "../config/mask.ts";
import type { ServerTransport } from "../config/server-entry.ts";

export const REMOVED = "[credential removed]";
const MIN_SECRET = 8;
/** Deeper than the sandbox's replies may be (src/sandbox/reply-bounds.ts) and than anything real. */
const MAX_DEPTH = 1_000;
/** Headers whose whole value is a credential, whatever it looks like. */
const CREDENTIAL_HEADER = /^(authorization|proxy-authorization|cookie|x-api-key|api-key)$/i;

/** An answer too deeply nested to be read through (and so not passed on). */
export class TooDeepError extends Error {
  constructor(readonly levels: number) {
    super(`nested more than ${levels} levels deep`);
  }
}

export class CredentialScrubber {
  #secrets = new Set<string>();
  #pattern: RegExp | undefined;

  /** Nothing to remove: scrubbing returns its input. */
  get empty(): boolean {
    return this.#secrets.size === 0;
  }

  /** A value sent as a credential: it, the words of it that could be a token, and its JSON-escaped form. */
  add(value: string | undefined): void {
    if (!value) return;
    const before = this.#secrets.size;
    for (const v of [value, ...value.split(/\s+/)]) {
      if (v.length < MIN_SECRET) continue;
      this.#secrets.add(v);
      // As JSON writes it, and as encoders that also escape "/" (PHP's, among others) do.
      const escaped = JSON.stringify(v).slice(1, -1);
      this.#secrets.add(escaped);
      this.#secrets.add(escaped.replace(/\//g, "\\/"));
    }
    if (this.#secrets.size !== before) this.#pattern = undefined;
  }

  /** Headers sent to the server: those that carry credentials. */
  addHeaders(headers: Iterable<[string, string]>): void {
    for (const [k, v] of headers) if (CREDENTIAL_HEADER.test(k) || SECRET_NAME.test(k) || TOKEN_SHAPE.test(v)) this.add(v);
  }

  /** What the definition itself sends: secret env values and arguments, the URL's secrets, secret headers. */
  addTransport(t: ServerTransport): void {
    if (t.type === "stdio") {
      for (const [k, v] of Object.entries(t.env)) if (SECRET_NAME.test(k) || TOKEN_SHAPE.test(v)) this.add(v);
      const masked = maskArgs(t.args);
      t.args.forEach((a, i) => {
        if (masked[i] !== a) this.add(a.includes("=") ? a.slice(a.indexOf("=") + 1) : a);
      });
      return;
    }
    this.addHeaders(Object.entries(t.headers));
    try {
      const u = new URL(t.url);
      this.add(decodeURIComponent(u.password));
      this.add(u.password);
      for (const [k, v] of u.searchParams)
        if (SECRET_NAME.test(k) || TOKEN_SHAPE.test(v) || /^(key|sig|signature|code)$/i.test(k)) this.add(v);
      for (const s of secretPathSegments(u.pathname)) {
        this.add(s);
        this.add(decodeURIComponent(s));
      }
    } catch {
      // not a URL: the connection fails before anything is sent
    }
  }

  /** `text` without any credential. */
  text(text: string): string {
    if (this.empty || !text) return text;
    return text.replace(this.#regex(), REMOVED);
  }

  /** A copy of `value` with every string scrubbed (the same object when nothing changed). */
  deep<T>(value: T, depth = 0): T {
    if (this.empty) return value;
    if (typeof value === "string") return this.text(value) as T;
    if (value === null || typeof value !== "object") return value;
    // Fail closed: a value too deep to walk is not passed on unread.
    if (depth > MAX_DEPTH) throw new TooDeepError(MAX_DEPTH);
    if (Array.isArray(value)) {
      let changed = false;
      const out = value.map((v) => {
        const s = this.deep(v, depth + 1);
        if (s !== v) changed = true;
        return s;
      });
      return (changed ? out : value) as T;
    }
    let out: Record<string, unknown> | undefined;
    for (const [k, v] of Object.entries(value)) {
      const s = this.deep(v, depth + 1);
      const key = this.text(k);
      if (s !== v || key !== k) {
        out ??= { ...(value as Record<string, unknown>) };
        if (key !== k) delete out[k];
        out[key] = s;
      }
    }
    return (out ?? value) as T;
  }

  #regex(): RegExp {
    if (!this.#pattern) {
      // Longest first, so a secret that contains another is removed whole.
      const alternatives = [...this.#secrets].sort((a, b) => b.length - a.length).map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
      this.#pattern = new RegExp(alternatives.join("|"), "g");
    }
    return this.#pattern;
  }
}
