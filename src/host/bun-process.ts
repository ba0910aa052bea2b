/** The Bun implementation of src/host/process.ts. Only src/host/ may touch `Bun.`. */
import type { ChildProcess, CommandResult, HostProcess, SpawnOptions } from "./process.ts";

function which(command: string, path?: string): string | null {
  return Bun.which(command, path === undefined ? undefined : { PATH: path });
}

function spawnChild(command: string, args: string[], options: SpawnOptions): ChildProcess {
  const proc = Bun.spawn([command, ...args], {
    env: options.env,
    cwd: options.cwd,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  let stdinOpen = true;
  let written = 0;
  let flushed = 0;
  return {
    pid: proc.pid,
    write(data) {
      if (!stdinOpen) throw new Error("stdin is closed");
      written += typeof data === "string" ? Buffer.byteLength(data) : data.byteLength;
      proc.stdin.write(data);
      const upTo = written;
      const r = proc.stdin.flush();
      if (r instanceof Promise) {
        // A child that exited makes the flush reject (EPIPE): `exited` reports that, not an unhandled rejection.
        r.then(() => {
          flushed = Math.max(flushed, upTo);
        }, () => {});
      } else flushed = upTo;
    },
    get pendingBytes() {
      return written - flushed;
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

async function runCommand(
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

function runCommandSync(command: string, args: string[], options: SpawnOptions & { timeoutMs?: number }): { exitCode: number | null } {
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

/** Subprocesses through Bun.spawn / Bun.spawnSync / Bun.which. */
export const BUN_PROCESS: HostProcess = { which, spawnChild, runCommand, runCommandSync };
