/** The Bun implementation of src/host/process.ts. Only src/host/ may touch `Bun.`. */
import { closeSync } from "node:fs";
import type { ChildProcess, CommandResult, HostProcess, SpawnOptions } from "./process.ts";

function which(command: string, path?: string): string | null {
  return Bun.which(command, path === undefined ? undefined : { PATH: path });
}

function spawnChild(command: string, args: string[], options: SpawnOptions): ChildProcess {
  if (options.channel) return spawnWithChannel(command, args, options);
  const proc = Bun.spawn([command, ...args], {
    env: options.env,
    cwd: options.cwd,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  let stdinOpen = true;
  const sink = flushTracker(proc.stdin);
  return {
    pid: proc.pid,
    write(data) {
      if (!stdinOpen) throw new Error("stdin is closed");
      sink.write(data);
    },
    get pendingBytes() {
      return sink.pending;
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

/** A socketpair at the child's fd 3 carries everything; its stdin stays open (and unused) until closeStdin. */
function spawnWithChannel(command: string, args: string[], options: SpawnOptions): ChildProcess {
  const proc = Bun.spawn([command, ...args], {
    env: options.env,
    cwd: options.cwd,
    // Extra "pipe" entries are socketpairs: one fd, both directions.
    stdio: ["pipe", "ignore", "pipe", "pipe"],
  });
  const fd = (proc.stdio as unknown[])[3];
  if (typeof fd !== "number") {
    proc.kill("SIGKILL");
    throw new Error("Bun did not give the child a channel at fd 3");
  }
  const file = Bun.file(fd);
  const sink = flushTracker(file.writer());
  let open = true;
  const close = () => {
    if (!open) return;
    open = false;
    try {
      proc.stdin.end();
    } catch {
      // already closed by the child
    }
    try {
      closeSync(fd); // the container's init sees the hang-up: the bridge is gone
    } catch {
      // already closed
    }
  };
  const exited = proc.exited.then((code) => (proc.signalCode ? null : code));
  return {
    pid: proc.pid,
    write(data) {
      if (!open) throw new Error("the channel is closed");
      sink.write(data);
    },
    get pendingBytes() {
      return sink.pending;
    },
    closeStdin: close,
    stdout: file.stream(),
    stderr: proc.stderr,
    exited,
    kill(signal) {
      try {
        proc.kill(signal);
      } catch {
        // already gone
      }
    },
  };
}

/** Writes that flush at once, and how many bytes given to write() the reader has not taken yet. */
function flushTracker(sink: { write(data: Uint8Array | string): unknown; flush(): number | Promise<number> }) {
  let written = 0;
  let flushed = 0;
  return {
    write(data: Uint8Array | string) {
      written += typeof data === "string" ? Buffer.byteLength(data) : data.byteLength;
      sink.write(data);
      const upTo = written;
      const r = sink.flush();
      if (r instanceof Promise) {
        // A reader that went away makes the flush reject (EPIPE): `exited` reports that, not an unhandled rejection.
        r.then(
          () => {
            flushed = Math.max(flushed, upTo);
          },
          () => {},
        );
      } else flushed = upTo;
    },
    get pending() {
      return written - flushed;
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
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
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
