/**
 * The Deno implementation of src/host/process.ts, on `Deno.Command`. Only src/host/ may touch `Deno.`.
 * Nothing here runs until the first call, so the compiled (Bun) binary carries it harmlessly.
 */
import type { ChildProcess, CommandResult, HostProcess, SpawnOptions } from "./process.ts";

/** The slice of the Deno namespace used here (Bun's type set has no Deno types). */
interface DenoStatus {
  code: number;
  signal: string | null;
}
interface DenoChild {
  pid: number;
  stdin: WritableStream<Uint8Array>;
  stdout: ReadableStream<Uint8Array>;
  stderr: ReadableStream<Uint8Array>;
  status: Promise<DenoStatus>;
  kill(signal?: string): void;
}
type Stdio = "piped" | "inherit" | "null";
interface DenoCommandOptions {
  args: string[];
  env: Record<string, string>;
  clearEnv: boolean;
  cwd?: string;
  stdin: Stdio;
  stdout: Stdio;
  stderr: Stdio;
}
interface DenoApi {
  Command: new (command: string, options: DenoCommandOptions) => { spawn(): DenoChild; outputSync(): DenoStatus };
  statSync(path: string): { isFile: boolean; mode: number | null };
  env: { get(key: string): string | undefined };
}

const deno = (): DenoApi => (globalThis as unknown as { Deno: DenoApi }).Deno;
const encoder = new TextEncoder();
const SIGNALS: Record<number, string> = { 1: "SIGHUP", 2: "SIGINT", 9: "SIGKILL", 15: "SIGTERM" };

function which(command: string, path?: string): string | null {
  const isExecutable = (p: string): boolean => {
    try {
      const st = deno().statSync(p);
      return st.isFile && (st.mode === null || (st.mode & 0o111) !== 0);
    } catch {
      return false;
    }
  };
  if (command.includes("/")) return isExecutable(command) ? command : null;
  for (const dir of (path ?? deno().env.get("PATH") ?? "").split(":")) {
    if (dir && isExecutable(`${dir}/${command}`)) return `${dir}/${command}`;
  }
  return null;
}

// clearEnv: Deno.Command merges `env` into the parent's environment unless told not to, and the
// contract is that the child gets exactly options.env.
function command(cmd: string, args: string[], options: SpawnOptions, stdin: Stdio, out: Stdio) {
  return new (deno().Command)(cmd, { args, env: options.env, clearEnv: true, cwd: options.cwd, stdin, stdout: out, stderr: out });
}

function killer(child: DenoChild): (signal?: NodeJS.Signals | number) => void {
  return (signal = "SIGTERM") => {
    try {
      child.kill(typeof signal === "number" ? (SIGNALS[signal] ?? "SIGKILL") : signal);
    } catch {
      // already gone
    }
  };
}

function spawnChild(cmd: string, args: string[], options: SpawnOptions): ChildProcess {
  if (options.channel) throw new Error("a channel at fd 3 needs the Bun runtime (CAN_PASS_CHANNEL is false under Deno)");
  const child = command(cmd, args, options, "piped", "piped").spawn();
  const writer = child.stdin.getWriter();
  let stdinOpen = true;
  let pending = 0;
  return {
    pid: child.pid,
    write(data) {
      if (!stdinOpen) throw new Error("stdin is closed");
      const bytes = typeof data === "string" ? encoder.encode(data) : data;
      pending += bytes.byteLength;
      // Writes queue in order on the writer; a child that went away is reported by `exited`.
      writer.write(bytes).then(
        () => {
          pending -= bytes.byteLength;
        },
        () => {},
      );
    },
    get pendingBytes() {
      return pending;
    },
    closeStdin() {
      if (!stdinOpen) return;
      stdinOpen = false;
      writer.close().catch(() => {});
    },
    stdout: child.stdout,
    stderr: child.stderr,
    exited: child.status.then((s) => (s.signal ? null : s.code)),
    kill: killer(child),
  };
}

async function runCommand(
  cmd: string,
  args: string[],
  options: SpawnOptions & { timeoutMs?: number; input?: string | Uint8Array },
): Promise<CommandResult> {
  const child = command(cmd, args, options, options.input === undefined ? "null" : "piped", "piped").spawn();
  if (options.input !== undefined) {
    const writer = child.stdin.getWriter();
    const input = typeof options.input === "string" ? encoder.encode(options.input) : options.input;
    writer
      .write(input)
      .then(() => writer.close())
      .catch(() => {});
  }
  let timedOut = false;
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          killer(child)("SIGKILL");
        }, options.timeoutMs);
  const [stdout, stderr, status] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.status]);
  if (timer) clearTimeout(timer);
  return { command: cmd, args, exitCode: status.signal ? null : status.code, stdout, stderr, timedOut };
}

// Deno's outputSync has no timeout: coreutils `timeout` bounds the command when it is installed.
function runCommandSync(cmd: string, args: string[], options: SpawnOptions & { timeoutMs?: number }): { exitCode: number | null } {
  const timeout = options.timeoutMs === undefined ? null : which("timeout", options.env.PATH);
  const argv = timeout ? [timeout, "-s", "KILL", `${Math.ceil((options.timeoutMs ?? 0) / 1000)}`, cmd, ...args] : [cmd, ...args];
  try {
    const r = command(argv[0] as string, argv.slice(1), options, "null", "null").outputSync();
    return { exitCode: r.signal ? null : r.code };
  } catch {
    return { exitCode: null };
  }
}

/** Subprocesses through Deno.Command. */
export const DENO_PROCESS: HostProcess = { which, spawnChild, runCommand, runCommandSync };
