/**
 * HTTPS requests and WebSockets with a private CA and a client certificate, for Bun and Deno alike:
 * what the Kubernetes engine needs to reach an API server (adapters/kube/). Web `fetch` and
 * `WebSocket` take no TLS settings; Bun accepts a `tls` option on both, Deno an HTTP client made with
 * `Deno.createHttpClient`. Core code gets these two functions and never sees either.
 */
import { JS_HOST } from "./process.ts";

/** How to reach one TLS server: PEM text, never file paths (the caller reads files it trusts). */
export interface TlsSettings {
  /** The CA that signed the server's certificate; absent: the system's roots. */
  ca?: string;
  /** Client certificate and key (mutual TLS). */
  cert?: string;
  key?: string;
  /** Accept any server certificate (kubeconfig `insecure-skip-tls-verify`). */
  insecure?: boolean;
}

type DenoLike = {
  createHttpClient(options: { caCerts?: string[]; cert?: string; key?: string }): unknown;
};

const denoClients = new WeakMap<TlsSettings, unknown>();

function denoClient(tls: TlsSettings): unknown {
  let client = denoClients.get(tls);
  if (!client) {
    const deno = (globalThis as unknown as { Deno: DenoLike }).Deno;
    client = deno.createHttpClient({ caCerts: tls.ca ? [tls.ca] : undefined, cert: tls.cert, key: tls.key });
    denoClients.set(tls, client);
  }
  return client;
}

function bunTls(tls: TlsSettings): Record<string, unknown> {
  return { ca: tls.ca, cert: tls.cert, key: tls.key, rejectUnauthorized: tls.insecure !== true };
}

/** `fetch` with `tls` applied. */
export function tlsFetch(url: string, init: RequestInit, tls: TlsSettings): Promise<Response> {
  if (JS_HOST === "deno") return fetch(url, { ...init, client: denoClient(tls) } as RequestInit);
  return fetch(url, { ...init, tls: bunTls(tls) } as RequestInit);
}

/** A WebSocket to `url` offering `protocols`, with extra handshake headers and `tls` applied. */
export function tlsWebSocket(url: string, protocols: string[], headers: Record<string, string>, tls: TlsSettings): WebSocket {
  const options = JS_HOST === "deno" ? { protocols, headers, client: denoClient(tls) } : { protocols, headers, tls: bunTls(tls) };
  // Both runtimes take an options object as the second argument (a non-standard extension).
  return new WebSocket(url, options as unknown as string[]);
}
