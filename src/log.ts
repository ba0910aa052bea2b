/**
 * Logs go to stderr only: stdout belongs to the MCP protocol. Text lines by default, JSON lines with
 * MCP_BRIDGE_LOG_FORMAT=json. `child()` binds fields (a request id) to every line it writes.
 */
import type { Config } from "./config/env.ts";

const ORDER = { DEBUG: 10, INFO: 20, WARNING: 30, ERROR: 40 } as const;
type Level = keyof typeof ORDER;
export type LogFormat = "text" | "json";

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** A logger that adds `fields` to every line. */
  child(fields: Record<string, unknown>): Logger;
}

export function createLogger(
  level: Config["logLevel"],
  format: LogFormat = "text",
  write: (line: string) => void = (l) => process.stderr.write(l),
  bound: Record<string, unknown> = {},
): Logger {
  const min = ORDER[level];
  const emit = (lvl: Level, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < min) return;
    const all = { ...bound, ...fields };
    for (const k of Object.keys(all)) if (all[k] === undefined) delete all[k];
    if (format === "json") {
      write(`${JSON.stringify({ ts: new Date().toISOString(), level: lvl, msg, ...all })}\n`);
      return;
    }
    const extra = Object.entries(all)
      .map(([k, v]) => ` ${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
      .join("");
    write(`${new Date().toISOString()} ${lvl.padEnd(7)} mcp-code-exec: ${msg}${extra}\n`);
  };
  return {
    debug: (m, f) => emit("DEBUG", m, f),
    info: (m, f) => emit("INFO", m, f),
    warn: (m, f) => emit("WARNING", m, f),
    error: (m, f) => emit("ERROR", m, f),
    child: (fields) => createLogger(level, format, write, { ...bound, ...fields }),
  };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silentLogger };
