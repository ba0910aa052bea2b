/**
 * An HTTP server on Web standard Request/Response, for Bun and Deno alike: Bun.serve under Bun,
 * Deno.serve under Deno. Idle connections are not cut (an SSE stream may be quiet for minutes); the
 * owner bounds what a slow client may hold.
 */
import { JS_HOST } from "./process.ts";

export interface HttpServer {
  /** The address it listens on, as a URL origin (http://127.0.0.1:8931). */
  readonly origin: string;
  readonly port: number;
  /** Stop accepting and close open connections. */
  stop(): Promise<void>;
}

export interface HttpListen {
  hostname: string;
  /** 0: a free port the system picks. */
  port: number;
  fetch: (req: Request, peer: { address: string }) => Response | Promise<Response>;
  /** Largest request body read, in bytes (larger: 413 before the handler runs). */
  maxBodyBytes: number;
}

export async function listenHttp(opts: HttpListen): Promise<HttpServer> {
  return JS_HOST === "bun" ? bunServe(opts) : denoServe(opts);
}

function origin(hostname: string, port: number): string {
  return `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;
}

function bunServe(opts: HttpListen): HttpServer {
  const server = Bun.serve({
    hostname: opts.hostname,
    port: opts.port,
    // Never cut a quiet stream: an SSE response may wait minutes for a person's answer.
    idleTimeout: 0,
    maxRequestBodySize: opts.maxBodyBytes,
    fetch: (req, s) => opts.fetch(req, { address: s.requestIP(req)?.address ?? "" }),
  });
  const port = server.port ?? opts.port;
  return {
    origin: origin(opts.hostname, port),
    port,
    stop: () => server.stop(true),
  };
}

async function denoServe(opts: HttpListen): Promise<HttpServer> {
  type DenoServe = (
    o: { hostname: string; port: number; onListen?: (a: { port: number }) => void },
    h: (req: Request, info: { remoteAddr: { hostname: string } }) => Response | Promise<Response>,
  ) => { shutdown(): Promise<void>; addr: { port: number } };
  const serve = (globalThis as unknown as { Deno: { serve: DenoServe } }).Deno.serve;
  const server = serve({ hostname: opts.hostname, port: opts.port, onListen: () => {} }, async (req, info) => {
    const declared = Number(req.headers.get("content-length") ?? "0");
    if (declared > opts.maxBodyBytes) return new Response("request body too large", { status: 413 });
    return opts.fetch(req, { address: info.remoteAddr.hostname });
  });
  const port = server.addr.port;
  return { origin: origin(opts.hostname, port), port, stop: () => server.shutdown() };
}
