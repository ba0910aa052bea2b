/**
 * The shape of results a tool has returned, for tools that declare no outputSchema: recorded per
 * server and tool in the state dir (types and keys only, never values), forgotten after a month,
 * and shown in signatures as the observed return shape.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

const TTL_MS = 30 * 24 * 3600 * 1000;
const MAX_DEPTH = 3;
const MAX_KEYS = 12;
const MAX_SHAPE = 300;
const MAX_ENTRIES = 5000;

interface Entry {
  shape: string;
  seenAt: number;
}

/** Types and keys of a JSON value, never its values: {id: int, tags: [str], owner: {login: str, …}}. */
export function shapeOfValue(value: unknown, depth = 0): string {
  if (value === null) return "None";
  if (typeof value === "string") return "str";
  if (typeof value === "boolean") return "bool";
  if (typeof value === "number") return Number.isInteger(value) ? "int" : "float";
  if (Array.isArray(value)) {
    if (value.length === 0) return "list";
    return depth >= MAX_DEPTH ? "list" : `[${shapeOfValue(value[0], depth + 1)}]`;
  }
  if (typeof value === "object") {
    const keys = Object.keys(value as object);
    if (depth >= MAX_DEPTH || keys.length === 0) return "dict";
    const parts = keys
      .slice(0, MAX_KEYS)
      .map(
        (k) =>
          `${/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? k : JSON.stringify(k)}: ${shapeOfValue((value as Record<string, unknown>)[k], depth + 1)}`,
      );
    if (keys.length > MAX_KEYS) parts.push("…");
    return `{${parts.join(", ")}}`;
  }
  return "Any";
}

/** The shape of what a proxied call returns in Python (structured content, else JSON text), if any. */
export function shapeOfResult(result: CallToolResult): string | undefined {
  if (result.isError) return undefined;
  if (result.structuredContent && typeof result.structuredContent === "object") return shapeOfValue(result.structuredContent);
  const blocks = Array.isArray(result.content) ? result.content : [];
  if (blocks.length !== 1) return undefined;
  const b = blocks[0] as { type?: string; text?: string };
  if (b.type !== "text" || typeof b.text !== "string") return b.type === "image" ? "McpImage" : undefined;
  const t = b.text.trim();
  if (!/^[[{]/.test(t)) return "str";
  try {
    return shapeOfValue(JSON.parse(t));
  } catch {
    return "str";
  }
}

export class ResultShapes {
  readonly #file: string;
  #entries: Record<string, Entry> | undefined;
  readonly #now: () => number;

  constructor(stateDir: string, now: () => number = Date.now) {
    this.#file = join(stateDir, "result-shapes.json");
    this.#now = now;
  }

  /** The observed shape of a tool's results, if one was seen within the last month. */
  get(server: string, tool: string): string | undefined {
    const e = this.#load()[key(server, tool)];
    return e && this.#now() - e.seenAt < TTL_MS ? e.shape : undefined;
  }

  record(server: string, tool: string, shape: string | undefined): void {
    if (!shape || shape.length > MAX_SHAPE) return;
    const entries = this.#load();
    const k = key(server, tool);
    const before = entries[k];
    // A day-old sighting of the same shape is fresh enough: no write per call.
    if (before && before.shape === shape && this.#now() - before.seenAt < TTL_MS / 30) return;
    entries[k] = { shape, seenAt: this.#now() };
    this.#save(entries);
  }

  #load(): Record<string, Entry> {
    if (!this.#entries) {
      try {
        const raw = JSON.parse(readFileSync(this.#file, "utf8")) as unknown;
        this.#entries = raw && typeof raw === "object" && !Array.isArray(raw) ? (raw as Record<string, Entry>) : {};
      } catch {
        this.#entries = {};
      }
    }
    return this.#entries;
  }

  #save(entries: Record<string, Entry>): void {
    const now = this.#now();
    const kept = Object.entries(entries)
      .filter(([, e]) => e && typeof e.shape === "string" && now - e.seenAt < TTL_MS)
      .sort((a, b) => b[1].seenAt - a[1].seenAt)
      .slice(0, MAX_ENTRIES);
    this.#entries = Object.fromEntries(kept);
    try {
      mkdirSync(join(this.#file, ".."), { recursive: true, mode: 0o700 });
      writeFileSync(`${this.#file}.tmp`, JSON.stringify(this.#entries), { mode: 0o600 });
      renameSync(`${this.#file}.tmp`, this.#file);
    } catch {
      // A read-only state dir only costs the observed shapes.
    }
  }
}

function key(server: string, tool: string): string {
  return `${server}\u0000${tool}`;
}
