/**
 * Subprocesses. The only place besides src/host/*.ts that may touch `Bun.`: core code receives these
 * functions, so the core also runs under Deno (see src/host/deno-process.ts when it exists).
 */
export interface SpawnOptions {
  /** The complete environment of the child: nothing is inherited. */
  env: Record<string, string>;
  cwd?: string;
}

/** A running child with piped stdin/stdout/stderr. */
export interface ChildProcess {
  readonly pid: number;
  write(data: Uint8Array | string): void;
  closeStdin(): void;
  readonly stdout: ReadableStream<Uint8Array>;
  readonly stderr: ReadableStream<Uint8Array>;
  /** Resolves with the exit code, or null when a signal ended the child. */
  readonly exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals | number): void;
}

export interface CommandResult {
  command: string;
  args: string[];
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Find an executable on PATH (or check an explicit path); null when absent. */
export function which(command: string, path?: string): string | null {
  return Bun.which(command, path === undefined ? undefined : { PATH: path });
}

export function spawnChild(command: string, args: string[], options: SpawnOptions): ChildProcess {
  const proc = Bun.spawn([command, ...args], {
    env: options.env,
    cwd: options.cwd,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  let stdinOpen = true;
  return {
    pid: proc.pid,
    write(data) {
      if (!stdinOpen) throw new Error("stdin is closed");
      proc.stdin.write(data);
      proc.stdin.flush();
    },
    closeStdin() {
      if (!stdinOpen) return;
      stdinOpen = false;
      try {
        proc.stdin.end();
      } catch {
        // already closed by the child
      }
    },
    stdout: proc.stdout,
    stderr: proc.stderr,
    exited: proc.exited.then((code) => (proc.signalCode ? null : code)),
    kill(signal) {
      try {
        proc.kill(signal);
      } catch {
        // already gone
      }
    },
  };
}

/** Run a command to completion (no shell), collecting its output; kills it after timeoutMs. */
export async function runCommand(
  command: string,
  args: string[],
  options: SpawnOptions & { timeoutMs?: number; input?: string | Uint8Array },
): Promise<CommandResult> {
  const proc = Bun.spawn([command, ...args], {
    env: options.env,
    cwd: options.cwd,
    stdin: options.input === undefined ? "ignore" : new Blob([options.input]),
    stdout: "pipe",
    stderr: "pipe",
  });
  let timedOut = false;
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          proc.kill("SIGKILL");
        }, options.timeoutMs);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (timer) clearTimeout(timer);
  return { command, args, exitCode: proc.signalCode ? null : code, stdout, stderr, timedOut };
}

/** Synchronous variant for exit handlers, where nothing asynchronous runs any more. */
export function runCommandSync(
  command: string,
  args: string[],
  options: SpawnOptions & { timeoutMs?: number },
): { exitCode: number | null } {
  try {
    const r = Bun.spawnSync([command, ...args], {
      env: options.env,
      stdout: "ignore",
      stderr: "ignore",
      timeout: options.timeoutMs,
    });
    return { exitCode: r.exitCode };
  } catch {
    return { exitCode: null };
  }
}
