/**
 * Where a team member's browser comes back after signing in to a remote upstream server, when the
 * bridge serves HTTP: `<public origin>/oauth/callback` (a loopback redirect would land on their own
 * machine, not the server). Each sign-in in progress waits here under its `state` (192 random bits);
 * the tokens go to the store of the user whose call started it.
 */
import type { Loopback } from "../auth/loopback.ts";

export const CALLBACK_PATH = "/oauth/callback";

interface Waiting {
  server: string;
  issuer?: string;
  settle: { resolve: (code: string) => void; reject: (err: Error) => void };
}

export class OAuthCallbacks {
  readonly #waiting = new Map<string, Waiting>();
  #origin = "";

  /** This server's public origin (set once it listens). */
  setOrigin(origin: string): void {
    this.#origin = origin;
  }

  /** A receiver for one sign-in, as beginLogin takes it (the loopback's shape). */
  receiver(state: string, server: string): Loopback {
    let settle!: Waiting["settle"];
    const code = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
    code.catch(() => {});
    const w: Waiting = { server, settle };
    this.#waiting.set(state, w);
    return {
      redirectUrl: `${this.#origin}${CALLBACK_PATH}`,
      code,
      expectIssuer: (issuer) => {
        w.issuer = issuer;
      },
      cancel: (reason) => {
        this.#waiting.delete(state);
        settle.reject(reason);
      },
    };
  }

  handle(req: Request): Response {
    const p = new URL(req.url).searchParams;
    const state = p.get("state") ?? "";
    const w = this.#waiting.get(state);
    if (!w)
      return page(
        400,
        "Sign-in not accepted",
        "This link does not belong to a sign-in in progress (it ended, or the state does not match).",
      );
    this.#waiting.delete(state);
    if (w.issuer && p.has("iss") && p.get("iss") !== w.issuer) {
      w.settle.reject(
        new Error(`the redirect names issuer ${p.get("iss")}, expected ${w.issuer} (possible mix-up attack); nothing was stored`),
      );
      return page(400, "Sign-in not accepted", "The redirect came from an unexpected authorization server.");
    }
    const error = p.get("error");
    if (error) {
      const desc = p.get("error_description");
      w.settle.reject(new Error(`the authorization server answered ${error}${desc ? ` (${desc})` : ""}`));
      return page(400, `Sign-in to ${w.server} failed`, `${error}${desc ? `: ${desc}` : ""}. You can close this tab.`);
    }
    const code = p.get("code");
    if (!code) {
      w.settle.reject(new Error("the redirect carried no authorization code"));
      return page(400, "Sign-in not accepted", "The redirect carried no authorization code.");
    }
    w.settle.resolve(code);
    return page(200, `Signed in to ${w.server}`, "You can close this tab and return to your MCP client.");
  }
}

function page(status: number, title: string, text: string): Response {
  const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return new Response(`<!doctype html><meta charset="utf-8"><title>${esc(title)}</title><h1>${esc(title)}</h1><p>${esc(text)}</p>`, {
    status,
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" },
  });
}
