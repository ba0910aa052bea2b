/** Wiring shared by every command: configuration, logger, lazy engine, session. */
import { homedir } from "node:os";
import { loadConfig, type Config } from "./config/env.ts";
import { spawnChild } from "./host/process.ts";
import { createLogger, type Logger } from "./log.ts";
import { engineEnv, lazyEngine, type Selected } from "./runtime/registry.ts";
import { Session, type SessionDeps } from "./session.ts";
import pkg from "../package.json" with { type: "json" };

export const VERSION: string = pkg.version;

export interface App {
  config: Config;
  log: Logger;
  env: Record<string, string>;
  engine: () => Promise<Selected>;
  newSession(extra?: Partial<SessionDeps>): Session;
}

export function createApp(processEnv: Record<string, string | undefined> = process.env): App {
  const config = loadConfig(processEnv, homedir());
  const log = createLogger(config.logLevel);
  const env = engineEnv(processEnv);
  const engine = lazyEngine(config.runtime, { env });
  return {
    config,
    log,
    env,
    engine,
    newSession: (extra = {}) => new Session({ config, engine, spawn: spawnChild, engineEnv: env, log, ...extra }),
  };
}
