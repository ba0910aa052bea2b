/**
 * A stdio upstream server: how it is launched, its process, and the MCP transport over its pipes.
 *
 * Ours rather than the SDK's StdioClientTransport for two reasons. The process can be spawned before
 * the transport exists: the first call that names a server starts it as the call arrives, while the
 * rest of the bridge (the SDK among it) is still loading (early-upstreams.ts), and the transport made
 * later takes that process. And messages are read with LineBuffer (wire-reading.ts), not the SDK's
 * ReadBuffer. Nothing here loads the SDK at run time. The behaviour is the SDK transport's: the same
 * inherited environment, start resolving once the process is spawned and rejecting when it cannot
 * be, `onclose` when the process is gone, and close as stdin ended, then SIGTERM, then SIGKILL.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { PassThrough } from "node:stream";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { ServerTransport } from "../config/server-entry.ts";
import { resolveServerCommand } from "./command-path.ts";
import { readEnvPipe } from "./env-pipe.ts";
import { LineBuffer } from "./wire-reading.ts";

type StdioDefinition = Extract<ServerTransport, { type: "stdio" }>;

/** What a server inherits from the bridge's environment (the SDK's list, after sudo's). */
const INHERITED_ENV = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/** Each step of close waits this long for the process to go before the next, stronger one. */
const CLOSE_STEP_MS = 2_000;

export function inheritedEnvironment(env: Record<string, string | undefined> = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of INHERITED_ENV) {
    const value = env[key];
    // A shell function exported in the environment (`() { ...`) is not passed on.
    if (value !== undefined && !value.startsWith("()")) out[key] = value;
  }
  return out;
}

/** How a stdio server is started: the command found, its arguments, environment and folder. */
export interface StdioLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  /** What its envFile pipe gave (read once, at launch): credentials to remove from what it sends. */
  fromPipe: Record<string, string>;
  /** Where a bare command not on PATH was found, if it was looked for elsewhere. */
  foundIn?: string;
}

/** The launch of a definition; reads its envFile pipe when it has one (which may wait for a person). */
export async function stdioLaunch(t: StdioDefinition): Promise<StdioLaunch> {
  return launchWith(t, t.envPipe ? await readEnvPipe(t.envPipe) : {});
}

/** The launch of a definition, given what its envFile pipe gave (nothing when it has none). */
export function launchWith(t: StdioDefinition, fromPipe: Record<string, string>): StdioLaunch {
  const env: Record<string, string> = { ...inheritedEnvironment(), ...fromPipe, ...t.env };
  const resolved = resolveServerCommand(t.command, env);
  if (resolved.path) env.PATH = resolved.path;
  return { command: resolved.command, args: t.args, env, cwd: t.cwd, fromPipe, ...(resolved.foundIn ? { foundIn: resolved.foundIn } : {}) };
}

/** A server's process from its spawn on: what happened to it is kept until a transport takes it. */
export class StdioProcess {
  readonly child: ChildProcess;
  /** Everything the process wrote to stderr, from its first byte. */
  readonly stderr = new PassThrough();
  /** When it was spawned (performance.now()). */
  readonly startedAt = performance.now();
  /** Settles when the process is running, or rejects with why it could not start. */
  readonly spawned: Promise<void>;
  #exited = false;

  constructor(launch: StdioLaunch) {
    this.child = spawn(launch.command, launch.args, {
      env: launch.env,
      cwd: launch.cwd,
      stdio: ["pipe", "pipe", "pipe"],
      shell: false,
    });
    this.spawned = new Promise<void>((resolve, reject) => {
      this.child.once("spawn", () => resolve());
      this.child.once("error", reject);
    });
    // Heard from the spawn on, so an early failure is neither unhandled nor lost.
    this.spawned.catch(() => {});
    this.child.once("close", () => {
      this.#exited = true;
    });
    this.child.stderr?.pipe(this.stderr);
  }

  /** The process has ended and its pipes are closed. */
  get exited(): boolean {
    return this.#exited;
  }

  get pid(): number | null {
    return this.child.pid ?? null;
  }

  /** Ask it to go (stdin ended), then SIGTERM, then SIGKILL, each after CLOSE_STEP_MS. */
  async stop(): Promise<void> {
    const child = this.child;
    if (this.#exited || child.exitCode !== null || child.signalCode !== null) return;
    const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
    const step = () => Promise.race([closed, new Promise<void>((resolve) => setTimeout(resolve, CLOSE_STEP_MS).unref?.())]);
    try {
      child.stdin?.end();
    } catch {
      // its stdin is gone already
    }
    await step();
    if (this.#stillRunning()) child.kill("SIGTERM");
    else return;
    await step();
    if (this.#stillRunning()) child.kill("SIGKILL");
  }

  #stillRunning(): boolean {
    return !this.#exited && this.child.exitCode === null && this.child.signalCode === null;
  }
}

/** The MCP transport over one server process: the process given (spawned early), or spawned at start. */
export class StdioClient implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #make: () => Promise<StdioProcess>;
  readonly #read: LineBuffer;
  /** Stderr is readable before start, so nothing the process writes early is missed. */
  readonly stderr = new PassThrough();
  #process: StdioProcess | undefined;
  #started = false;

  /** `source`: how to get the process (spawn it now, or take one spawned early). */
  constructor(source: () => Promise<StdioProcess>, maxMessageBytes: number) {
    this.#make = source;
    this.#read = new LineBuffer(maxMessageBytes);
  }

  get pid(): number | null {
    return this.#process?.pid ?? null;
  }

  /** The process this transport runs, once started. */
  get process(): StdioProcess | undefined {
    return this.#process;
  }

  async start(): Promise<void> {
    if (this.#started) throw new Error("StdioClient already started");
    this.#started = true;
    const proc = await this.#make();
    this.#process = proc;
    proc.stderr.pipe(this.stderr);
    await proc.spawned;
    const child = proc.child;
    child.stdin?.on("error", (error) => this.onerror?.(error));
    child.stdout?.on("error", (error) => this.onerror?.(error));
    child.stdout?.on("data", (chunk: Buffer) => {
      try {
        this.#read.append(chunk);
      } catch (error) {
        this.onerror?.(error as Error);
        void this.close();
        return;
      }
      this.#drain();
    });
    const ended = () => {
      if (this.#process !== proc) return;
      this.#process = undefined;
      this.onclose?.();
    };
    // A process that ended before it was taken: closed as soon as the caller has its handlers in place.
    if (proc.exited) queueMicrotask(ended);
    else child.once("close", ended);
  }

  #drain(): void {
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.#read.readMessage();
      } catch (error) {
        this.onerror?.(error as Error);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#process?.child.stdin;
    if (!stdin) return Promise.reject(new Error("Not connected"));
    return new Promise((resolve) => {
      if (stdin.write(`${JSON.stringify(message)}\n`)) resolve();
      else stdin.once("drain", resolve);
    });
  }

  async close(): Promise<void> {
    const proc = this.#process;
    this.#process = undefined;
    if (proc) {
      await proc.stop();
      this.onclose?.();
    }
    this.#read.clear();
  }
}
