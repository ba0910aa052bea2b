/**
 * The loopback redirect of a native OAuth client (RFC 8252 §7.3): a one-shot HTTP listener on this
 * machine that receives `?code=...&state=...` from the user's browser, checks `state` (and `iss`,
 * RFC 9207, when the server sends it), shows the user a page saying what happened, and closes.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface LoopbackOptions {
  /** Fixed port (a client registered ahead of time with http://localhost:PORT/callback); 0 = any free port. */
  port?: number;
  /** Host name written in the redirect URL: 127.0.0.1 (the RFC's advice) or localhost (what some clients pre-register). */
  host?: "127.0.0.1" | "localhost";
  /** The `state` sent with the authorization request. */
  state: string;
  /** Server name shown on the page. */
  server: string;
}

export interface Loopback {
  redirectUrl: string;
  /** Resolves with the authorization code; rejects when the user or server refused, or on cancel(). */
  code: Promise<string>;
  /** The issuer the redirect must name when it names one (set once discovery knows it). */
  expectIssuer(issuer: string | undefined): void;
  cancel(reason: Error): void;
}

const PATH = "/callback";

export async function startLoopback(opts: LoopbackOptions): Promise<Loopback> {
  const host = opts.host ?? "127.0.0.1";
  const servers: Server[] = [];
  let settle!: { resolve: (code: string) => void; reject: (err: Error) => void };
  const code = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
  code.catch(() => {}); // the caller handles it; a cancel before it looks must not crash the process
  let done = false;
  let issuer: string | undefined;
  const finish = (err: Error | undefined, value?: string) => {
    if (done) return;
    done = true;
    // Let the page reach the browser before the listener goes.
    setTimeout(() => servers.forEach((s) => s.close()), 200).unref?.();
    servers.forEach((s) => s.closeIdleConnections?.());
    if (err) settle.reject(err);
    else settle.resolve(value!);
  };

  const handler = (req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://loopback");
    if (url.pathname !== PATH || done) {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("not found");
      return;
    }
    const p = url.searchParams;
    const page = (status: number, title: string, text: string) =>
      res
        .writeHead(status, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" })
        .end(`<!doctype html><meta charset="utf-8"><title>${esc(title)}</title><h1>${esc(title)}</h1><p>${esc(text)}</p>`);
    if (p.get("state") !== opts.state) {
      // Not ours (a stale tab, or a forged request): refuse it and keep waiting for the real one.
      page(
        400,
        "Sign-in not accepted",
        "This link does not belong to the sign-in in progress (state mismatch). Start again from the terminal.",
      );
      return;
    }
    if (issuer && p.has("iss") && p.get("iss") !== issuer) {
      page(400, "Sign-in not accepted", "The redirect came from an unexpected authorization server.");
      return finish(
        new Error(`the redirect names issuer ${p.get("iss")}, expected ${issuer} (possible mix-up attack); nothing was stored`),
      );
    }
    const error = p.get("error");
    if (error) {
      const desc = p.get("error_description");
      page(400, `Sign-in to ${opts.server} failed`, `${error}${desc ? `: ${desc}` : ""}. You can close this tab.`);
      return finish(new Error(`the authorization server answered ${error}${desc ? ` (${desc})` : ""}`));
    }
    const c = p.get("code");
    if (!c) {
      page(400, "Sign-in not accepted", "The redirect carried no authorization code.");
      return finish(new Error("the redirect carried no authorization code"));
    }
    page(200, `Signed in to ${opts.server}`, "You can close this tab and return to the terminal.");
    finish(undefined, c);
  };

  const first = createServer(handler);
  const port = await listen(first, opts.port ?? 0, "127.0.0.1").catch((err: NodeJS.ErrnoException) => {
    throw new Error(
      err.code === "EADDRINUSE"
        ? `port ${opts.port} for the sign-in redirect is in use; free it or change oauth.callbackPort`
        : `cannot listen on 127.0.0.1 for the sign-in redirect: ${err.message}`,
    );
  });
  servers.push(first);
  if (host === "localhost") {
    // Browsers may resolve localhost to ::1 first; listen there too where the machine has IPv6.
    const second = createServer(handler);
    if (
      await listen(second, port, "::1").then(
        () => true,
        () => false,
      )
    )
      servers.push(second);
  }
  return {
    redirectUrl: `http://${host}:${port}${PATH}`,
    code,
    expectIssuer: (i) => {
      issuer = i;
    },
    cancel: (reason) => {
      finish(reason);
      servers.forEach((s) => s.closeAllConnections?.());
    },
  };
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
