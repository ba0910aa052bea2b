/**
 * A remote server wants an OAuth sign-in in the middle of a call: where the MCP client can show a link
 * (URL-mode elicitation), the bridge starts the sign-in (src/auth/login.ts, `beginLogin`), offers the
 * authorization link there and waits, the run's clock stopped, until the browser comes back to the
 * loopback redirect; the caller then makes the call again. Otherwise the call fails naming
 * `mcp-code-exec auth login NAME`, as before.
 */
import { randomUUID } from "node:crypto";
import type { LoginStart } from "../auth/login.ts";
import type { Logger } from "../log.ts";
import type { RunScope } from "../session/request-gate.ts";

export interface SignInOffer {
  server: string;
  tool: string;
  run: RunScope;
  log: Logger;
  start: (server: string) => Promise<LoginStart>;
  askTimeoutMs: number;
}

/** True once the user has signed in (or no sign-in turned out to be needed). */
export async function offerSignIn(o: SignInOffer): Promise<boolean> {
  const client = o.run.client;
  if (!client?.can().url || o.run.signal.aborted) return false;
  let begun: LoginStart;
  try {
    begun = await o.start(o.server);
  } catch (err) {
    o.log.warn("could not start a sign-in", { error: (err as Error).message });
    return false;
  }
  if (begun.kind === "not-needed") return true;
  const { login } = begun;
  const elicitationId = randomUUID();
  const release = o.run.holdClock();
  try {
    const answer = await client.elicit(
      { mode: "url", elicitationId, url: login.authorizationUrl.href, message: `Sign in to ${o.server} so that sandbox code can call ${o.tool}; the call waits until you finish in the browser.` },
      { signal: o.run.signal, timeoutMs: o.askTimeoutMs },
    );
    if (answer.action !== "accept") {
      login.cancel(`the sign-in link was ${answer.action === "decline" ? "declined" : "dismissed"}`);
      o.log.info("sign-in link not taken", { action: answer.action });
      return false;
    }
    await untilAborted(login.completion, o.run.signal);
    void client.elicitationComplete(elicitationId).catch(() => {});
    o.log.info("signed in through the client", { server: o.server });
    return true;
  } catch (err) {
    login.cancel((err as Error).message);
    login.completion.catch(() => {});
    o.log.info("sign-in through the client failed", { error: (err as Error).message });
    return false;
  } finally {
    release();
  }
}

function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(new Error("the run ended during the sign-in"));
    if (signal.aborted) onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
