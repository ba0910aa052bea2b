/** A real Session on the test-only local-python engine: the whole core, no engine, no image, no binary. */
import { afterEach } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp, type App } from "../../src/app.ts";
import type { Clock } from "../../src/clock.ts";
import type { Session } from "../../src/session/session.ts";
import { localPythonEngine } from "./local-python-adapter.ts";

export interface LocalSession {
  app: App;
  session: Session;
  /** Another session on the same local engine (closed with this one). */
  newSession(): Session;
  home: string;
  /** The local "containers" of this session that are still running. */
  running(): Promise<number>;
  /** Settles with the name of the next "container" the bridge removes (kills), when it does. */
  nextRemoval(): Promise<string>;
  close(): Promise<void>;
}

/**
 * `env` is the bridge's environment (HOME, state dir and a quiet log are set unless given); `clock`
 * what the session's timers run on (test/support/manual-clock.ts), the system's unless given.
 */
export function localSession(env: Record<string, string> = {}, opts: { cwd?: string; clock?: Clock } = {}): LocalSession {
  const home = env.HOME ?? mkdtempSync(join(tmpdir(), "mcx-core-"));
  const app = createApp(
    { PATH: process.env.PATH, HOME: home, MCP_BRIDGE_STATE_DIR: join(home, "state"), MCP_BRIDGE_LOG_LEVEL: "ERROR", ...env },
    opts.cwd ?? home,
  );
  const engine = localPythonEngine();
  const clock = opts.clock ? { clock: opts.clock } : {};
  const session = app.newSession({ engine: engine.selected, ...clock });
  const more: Session[] = [];
  return {
    app,
    session,
    newSession() {
      const s = app.newSession({ engine: engine.selected, ...clock });
      more.push(s);
      return s;
    },
    home,
    nextRemoval: engine.nextRemoval,
    async running() {
      return (await engine.adapter.list("io.mcp-code-exec=1")).filter((c) => c.running).length;
    },
    async close() {
      await Promise.all(more.map((s) => s.close()));
      await session.close();
      await app.close();
    },
  };
}

/**
 * localSession() for a test file: every session it makes is closed after the test that made it (its
 * local "containers" too), so a failed assertion leaves no interpreter running into the next test.
 */
export function localSessionsClosedAfterEach(): typeof localSession {
  const open: LocalSession[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });
  return (env, opts) => {
    const s = localSession(env, opts);
    open.push(s);
    return s;
  };
}
