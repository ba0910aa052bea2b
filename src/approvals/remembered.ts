/**
 * What the user answered in this session. Tools allowed "for the rest of the session" stay allowed until
 * the session is reset. Within one run, a tool the user denied is not asked about again, and once a
 * question went unanswered no further question is sent: a loop cannot bury the user in dialogs, nor
 * keep a run alive on questions nobody sees. Questions go out one at a time.
 */
export class SessionApprovals {
  #allowed = new Set<string>();
  #run: string | undefined;
  #denied = new Set<string>();
  #unanswered: string | undefined;
  #queue: Promise<unknown> = Promise.resolve();

  /** "server/tool" was allowed for the rest of the session. */
  allowed(key: string): boolean {
    return this.#allowed.has(key);
  }

  allowForSession(key: string): void {
    this.#allowed.add(key);
  }

  /** Forget every answer (the session was reset). */
  clear(): void {
    this.#allowed.clear();
    this.#run = undefined;
    this.#denied.clear();
    this.#unanswered = undefined;
  }

  /** The user denied "server/tool" earlier in run `runId`. */
  deniedInRun(runId: string, key: string): boolean {
    return this.#forRun(runId).#denied.has(key);
  }

  denyInRun(runId: string, key: string): void {
    this.#forRun(runId).#denied.add(key);
  }

  /** Why an earlier question of run `runId` got no answer, if one did not. */
  unanswered(runId: string): string | undefined {
    return this.#forRun(runId).#unanswered;
  }

  markUnanswered(runId: string, why: string): void {
    this.#forRun(runId).#unanswered = why;
  }

  /** Run `ask` after every question asked before it has been answered. */
  oneAtATime<T>(ask: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(ask);
    this.#queue = next.catch(() => {});
    return next;
  }

  #forRun(runId: string): this {
    if (this.#run !== runId) {
      this.#run = runId;
      this.#denied.clear();
      this.#unanswered = undefined;
    }
    return this;
  }
}
