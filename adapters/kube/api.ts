/**
 * A small Kubernetes API client: JSON requests, watches and WebSocket upgrades over plain HTTPS
 * (src/host/tls-client.ts). The engine needs a dozen calls on a few resources; a generated client
 * (@kubernetes/client-node) would bring node-fetch, ws and thousands of generated files into the
 * binary for them, and its attach runs over the `ws` package rather than the runtime's own WebSocket.
 */
import { tlsFetch, tlsWebSocket } from "../../src/host/tls-client.ts";
import type { KubeCredentials } from "./credentials.ts";

/** A failed API call: the HTTP status and the server's own Status message. */
export class KubeApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = "KubeApiError";
  }
}

/** An object as the API returns it: only what the engine reads is typed. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
    creationTimestamp?: string;
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

export interface WatchEvent<T> {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: T;
}

const REQUEST_TIMEOUT_MS = 30_000;

export class KubeApi {
  readonly #creds: KubeCredentials;

  constructor(creds: KubeCredentials) {
    this.#creds = creds;
  }

  get server(): string {
    return this.#creds.server;
  }

  #headers(extra: Record<string, string> = {}): Record<string, string> {
    const token = this.#creds.token?.();
    return { Accept: "application/json", ...(token ? { Authorization: `Bearer ${token}` } : {}), ...extra };
  }

  /** One request; JSON in and out. A 404 on GET resolves to undefined when `missingOk`. */
  async request<T>(
    method: string,
    path: string,
    opts: { body?: unknown; contentType?: string; missingOk?: boolean; timeoutMs?: number } = {},
  ): Promise<T | undefined> {
    const init: RequestInit = {
      method,
      headers: this.#headers(opts.body === undefined ? {} : { "Content-Type": opts.contentType ?? "application/json" }),
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: AbortSignal.timeout(opts.timeoutMs ?? REQUEST_TIMEOUT_MS),
    };
    let res: Response;
    try {
      res = await tlsFetch(this.#creds.server + path, init, this.#creds.tls);
    } catch (err) {
      throw new KubeApiError(0, "Unreachable", `${method} ${path}: ${(err as Error).message}`);
    }
    if (res.status === 404 && opts.missingOk) {
      await res.body?.cancel();
      return undefined;
    }
    const text = await res.text();
    if (!res.ok) {
      let reason = res.statusText;
      let message = text.slice(0, 500);
      try {
        const status = JSON.parse(text) as { reason?: string; message?: string };
        reason = status.reason ?? reason;
        message = status.message ?? message;
      } catch {
        // not a Status object
      }
      throw new KubeApiError(res.status, reason, `${method} ${path}: ${res.status} ${message}`);
    }
    return (text ? JSON.parse(text) : undefined) as T;
  }

  get<T>(path: string): Promise<T | undefined> {
    return this.request<T>("GET", path, { missingOk: true });
  }

  async create<T>(path: string, body: unknown): Promise<T> {
    return (await this.request<T>("POST", path, { body }))!;
  }

  /** A JSON merge patch. */
  async patch<T>(path: string, body: unknown): Promise<T | undefined> {
    return this.request<T>("PATCH", path, { body, contentType: "application/merge-patch+json", missingOk: true });
  }

  /** Delete now (grace 0) with background propagation; a missing object is not an error. */
  async delete(path: string, graceSeconds = 0): Promise<void> {
    await this.request("DELETE", path, {
      body: { kind: "DeleteOptions", apiVersion: "v1", gracePeriodSeconds: graceSeconds, propagationPolicy: "Background" },
      missingOk: true,
    });
  }

  /**
   * Watch `path` (a collection, with a field or label selector) from `resourceVersion` until `until`
   * returns a value for an event's object, the signal aborts, or the server ends the watch (then
   * undefined: the caller looks again).
   */
  async watch<T, R>(
    path: string,
    resourceVersion: string | undefined,
    until: (event: WatchEvent<T>) => R | undefined,
    signal: AbortSignal,
  ): Promise<R | undefined> {
    const sep = path.includes("?") ? "&" : "?";
    const url = `${this.#creds.server}${path}${sep}watch=1&allowWatchBookmarks=true${resourceVersion ? `&resourceVersion=${resourceVersion}` : ""}`;
    const res = await tlsFetch(url, { headers: this.#headers(), signal }, this.#creds.tls);
    if (!res.ok || !res.body) throw new KubeApiError(res.status, res.statusText, `watch ${path}: ${res.status} ${await res.text()}`);
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffered = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return undefined;
        buffered += decoder.decode(value, { stream: true });
        let nl = buffered.indexOf("\n");
        while (nl >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          nl = buffered.indexOf("\n");
          if (!line.trim()) continue;
          const event = JSON.parse(line) as WatchEvent<T>;
          if (event.type === "ERROR") return undefined;
          const found = until(event);
          if (found !== undefined) return found;
        }
      }
    } finally {
      await reader.cancel().catch(() => {});
    }
  }

  /** A WebSocket to a subresource (pods/attach, pods/exec) offering `protocols`. */
  webSocket(path: string, protocols: string[]): WebSocket {
    const url = this.#creds.server.replace(/^http/, "ws") + path;
    return tlsWebSocket(url, protocols, this.#headers(), this.#creds.tls);
  }
}
