/**
 * Subprocesses, for Bun and Deno alike. Core code imports these functions and never sees `Bun.` or
 * `Deno.`: the implementation is picked here, once, from the JavaScript runtime running us (JS_HOST)
 * (src/host/bun-process.ts or src/host/deno-process.ts).
 */
import { BUN_PROCESS } from "./bun-process.ts";
import { DENO_PROCESS } from "./deno-process.ts";

/** How to start a child process. */
export interface SpawnOptions {
  /** The complete environment of the child: nothing is inherited. */
  env: Record<string, string>;
  cwd?: string;
  /**
   * Talk to the child over a socket at its fd 3 instead of its stdin/stdout: write() and stdout use
   * the socket, the child's own stdout is discarded, closeStdin() also closes the socket. Only where
   * CAN_PASS_CHANNEL says so (podman hands the fd to the container: no relay through the engine).
   */
  channel?: boolean;
}

/** A running child with piped stdin/stdout/stderr. */
export interface ChildProcess {
  readonly pid: number;
  write(data: Uint8Array | string): void;
  /** Bytes given to write() that the child has not taken yet (a child that stops reading grows this). */
  readonly pendingBytes: number;
  closeStdin(): void;
  readonly stdout: ReadableStream<Uint8Array>;
  readonly stderr: ReadableStream<Uint8Array>;
  /** Resolves with the exit code, or null when a signal ended the child. */
  readonly exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals | number): void;
}

/** What a finished command printed and how it ended. */
export interface CommandResult {
  command: string;
  args: string[];
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** What each runtime's implementation provides. */
export interface HostProcess {
  which(command: string, path?: string): string | null;
  spawnChild(command: string, args: string[], options: SpawnOptions): ChildProcess;
  runCommand(
    command: string,
    args: string[],
    options: SpawnOptions & { timeoutMs?: number; input?: string | Uint8Array },
  ): Promise<CommandResult>;
  runCommandSync(command: string, args: string[], options: SpawnOptions & { timeoutMs?: number }): { exitCode: number | null };
}

/** "deno" under Deno, otherwise "bun" (the compiled binary is Bun). */
export const JS_HOST: "bun" | "deno" = "Deno" in globalThis ? "deno" : "bun";

/** Whether spawnChild can give a child a channel at fd 3 (SpawnOptions.channel): Bun can, Deno cannot. */
export const CAN_PASS_CHANNEL: boolean = JS_HOST === "bun";

const host: HostProcess = JS_HOST === "deno" ? DENO_PROCESS : BUN_PROCESS;

/** Find an executable on PATH (or check an explicit path); null when absent. */
export function which(command: string, path?: string): string | null {
  return host.which(command, path);
}

/** Start a child with piped stdio and exactly `options.env` as its environment. */
export function spawnChild(command: string, args: string[], options: SpawnOptions): ChildProcess {
  return host.spawnChild(command, args, options);
}

/** Run a command to completion (no shell), collecting its output; kills it after timeoutMs. */
export function runCommand(
  command: string,
  args: string[],
  options: SpawnOptions & { timeoutMs?: number; input?: string | Uint8Array },
): Promise<CommandResult> {
  return host.runCommand(command, args, options);
}

/** Synchronous variant for exit handlers, where nothing asynchronous runs any more. */
export function runCommandSync(
  command: string,
  args: string[],
  options: SpawnOptions & { timeoutMs?: number },
): { exitCode: number | null } {
  return host.runCommandSync(command, args, options);
}
