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
  /** The tool the code wants, when it is a call. */
  tool?: string;
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
  login.completion.catch(() => {}); // cancelled below when the link is not taken; awaited when it is
  const elicitationId = randomUUID();
  const release = o.run.holdClock();
  try {
    const answer = await client.elicit(
      {
        mode: "url",
        elicitationId,
        url: login.authorizationUrl.href,
        message: `Sign in to ${o.server} so that sandbox code can ${o.tool ? `call ${o.tool}` : "use its tools"}; the code waits until you finish in the browser.`,
      },
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
    o.log.info("sign-in through the client failed", { error: (err as Error).message });
    return false;
  } finally {
    release();
  }
}

/**
 * Run `step`; when it fails because the server wants a sign-in and one can be offered, offer it and run
 * `step` once more. At most one offer per returned function (one per request from the code).
 */
export function retryAfterSignIn(
  start: SignInOffer["start"] | undefined,
  o: Omit<SignInOffer, "start">,
): <T>(step: () => Promise<T>) => Promise<T> {
  let offered = false;
  return async (step) => {
    try {
      return await step();
    } catch (err) {
      if (offered || !start || (err as { kind?: unknown }).kind !== "auth_required") throw err;
      offered = true;
      if (!(await offerSignIn({ ...o, start }))) throw err;
      return step();
    }
  };
}

function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(new Error("the run ended during the sign-in"));
    if (signal.aborted) onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
