/**
 * A frame channel over a unix socket the container connects to, for engines that cannot hand the
 * container an fd (docker) but whose daemon shares this host's filesystem: the bridge listens in a
 * private folder that the engine bind-mounts read-only into the container, and the sandbox's init
 * connects to it before anything else runs. Frames then skip the engine's stdio relay (the CLI, the
 * daemon, the shim): on docker that relay is most of a round trip.
 *
 * Who connects must prove it is the container this bridge started: the first line on the socket is
 * a random token the bridge sent only on that container's stdin. Anything else that connects (another
 * local user, who can see the folder's name in `ps`) is dropped unread. The first connection with the
 * token wins; the listener and its folder are gone from then on.
 *
 * Nothing here is required: if the container cannot reach the socket (SELinux, a daemon in a VM after
 * all), its init says so and keeps using stdin/stdout, and `wrap` follows whichever channel the first
 * frame comes on.
 */
import { chmodSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PRIVATE_FOLDER_PREFIX } from "./private-dir.ts";
import type { ChildProcess } from "./process.ts";
import { listenUnix, type UnixConnection, type UnixListener } from "./unix-listener.ts";

/** Where the folder is mounted inside the container, and the socket's name in it. */
export const CHANNEL_MOUNT = "/run/mcp-channel";
const SOCKET_NAME = "s";
/** The token's length in hex digits (128 random bits). */
const TOKEN_HEX = 32;
/** Bytes of socket data the reader may leave unread before the socket stops reading (a flood waits). */
const READ_HIGH_WATER = 1 << 20;

export interface SocketChannel {
  /** The host folder to bind-mount (read-only) at CHANNEL_MOUNT. */
  readonly hostDir: string;
  /** The socket's path inside the container. */
  readonly containerPath: string;
  /** The secret the container sends first; the bridge gives it to the container on its stdin only. */
  readonly token: string;
  /** The child, talking over the socket once the container connects (or over its stdio if it never does). */
  wrap(child: ChildProcess): ChildProcess;
  /** Settles once the socket is listening (or could not be: the container will use stdin/stdout). */
  readonly listening: Promise<void>;
  /** Which channel the frames took: "socket", "stdio", or "pending" before the first frame. */
  readonly chosen: "pending" | "socket" | "stdio";
  /** Stop listening and remove the folder (idempotent; wrap's child does it when it exits). */
  dispose(): void;
}

/** sun_path holds 108 bytes on Linux, the terminating NUL included. */
const MAX_SOCKET_PATH = 107;
/** Channel folders are named after the bridge that made them, so a sweep can tell which are left over. */
const FOLDER_PREFIX = "mcp-code-exec-ch-";

/**
 * A new private folder under the temp folder (which docker's daemon, rootless or not, sees too), made
 * at once; the listener comes up in the background (`listening`) while the engine starts the container,
 * which connects only after its own start. `onProblem` hears of dropped connections and a listener that
 * could not start (the container then stays on stdin/stdout).
 */
export function openSocketChannel(onProblem?: (why: string) => void): SocketChannel {
  const hostDir = mkdtempSync(join(tmpdir(), `${FOLDER_PREFIX}${process.pid}-`));
  const longest = Buffer.byteLength(join(hostDir, `${SOCKET_NAME}.new`));
  if (longest > MAX_SOCKET_PATH) {
    rmSync(hostDir, { recursive: true, force: true });
    throw new Error(
      `the temp folder's path is too long for a unix socket (${longest} bytes; at most ${MAX_SOCKET_PATH}): set TMPDIR shorter`,
    );
  }
  // Web Crypto, not node:crypto: loading that module costs ~6 MiB of resident memory (src/host/hash.ts).
  const token = Buffer.from(crypto.getRandomValues(new Uint8Array(TOKEN_HEX / 2))).toString("hex");
  const expected = Buffer.from(`${token}\n`);
  // Others may pass through (the container's user is not ours) but not list; the socket itself must be
  // connectable by whatever uid the container runs as. The token, not the mode, keeps others out.
  chmodSync(hostDir, 0o711);
  let accepted: ((conn: UnixConnection, rest: Uint8Array) => void) | undefined;
  let early: { conn: UnixConnection; rest: Uint8Array } | undefined;
  let listener: UnixListener | undefined;
  let closed = false;
  const onConnection = (conn: UnixConnection) => {
    let got = Buffer.alloc(0);
    // A connection that never says enough is not kept waiting forever.
    const timer = setTimeout(() => conn.destroy(), 10_000);
    (timer as { unref?: () => void }).unref?.();
    conn.onclose = () => clearTimeout(timer);
    conn.ondata = (chunk) => {
      got = Buffer.concat([got, chunk]);
      if (got.length < expected.length) return;
      clearTimeout(timer);
      conn.ondata = undefined;
      const head = got.subarray(0, expected.length);
      if (closed || !sameBytes(head, expected)) {
        onProblem?.(closed ? "a connection after the channel was taken" : "a connection without the token");
        conn.destroy();
        return;
      }
      conn.pause();
      closeListener();
      const rest = new Uint8Array(got.subarray(expected.length));
      if (accepted) accepted(conn, rest);
      else early = { conn, rest };
    };
  };
  const closeListener = () => {
    if (closed) return;
    closed = true;
    listener?.close();
    listener = undefined;
    rmSync(hostDir, { recursive: true, force: true });
  };
  const listening = (async () => {
    if (closed) return;
    // Bound under another name, opened to every uid, then renamed: the socket never exists under its
    // real name with the umask's mode (a container connecting then would be refused).
    const bound = join(hostDir, `${SOCKET_NAME}.new`);
    const l = await listenUnix(bound, onConnection);
    if (closed) {
      l.close();
      return;
    }
    listener = l;
    chmodSync(bound, 0o666);
    renameSync(bound, join(hostDir, SOCKET_NAME));
  })().catch((err) => {
    // The folder stays until the sandbox has started (the engine mounts it): the container finds no
    // socket there and keeps to stdin/stdout, rather than the start failing on a missing folder.
    onProblem?.(`could not listen: ${(err as Error).message}`);
  });
  let disposed = false;
  let chosen: SocketChannel["chosen"] = "pending";
  const channel: SocketChannel = {
    hostDir,
    containerPath: `${CHANNEL_MOUNT}/${SOCKET_NAME}`,
    token,
    listening,
    get chosen() {
      return chosen;
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      closeListener();
      if (early) early.conn.destroy();
    },
    wrap(child) {
      let socket: UnixConnection | undefined;
      let stdinOpen = true;
      let out!: ReadableStreamDefaultController<Uint8Array>;
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        try {
          out.close();
        } catch {
          // already closed
        }
      };
      const stdout = new ReadableStream<Uint8Array>(
        {
          start(controller) {
            out = controller;
          },
          pull() {
            socket?.resume();
          },
          cancel() {
            socket?.destroy();
          },
        },
        new ByteLengthQueuingStrategy({ highWaterMark: READ_HIGH_WATER }),
      );
      const push = (chunk: Uint8Array) => {
        if (ended || chunk.length === 0) return;
        out.enqueue(chunk);
        if ((out.desiredSize ?? 1) <= 0) socket?.pause();
      };
      const useSocket = (conn: UnixConnection, rest: Uint8Array) => {
        if (chosen !== "pending" || disposed) {
          conn.destroy();
          return;
        }
        chosen = "socket";
        socket = conn;
        push(rest);
        conn.ondata = push;
        conn.onclose = end;
        conn.resume();
      };
      accepted = useSocket;
      if (early) {
        const e = early;
        early = undefined;
        useSocket(e.conn, e.rest);
      }
      // The engine's stdout: the channel until a frame comes on the socket; read to the end either way
      // (a relay whose pipe fills up stalls), and ignored once the socket is chosen.
      void (async () => {
        try {
          for await (const chunk of child.stdout) {
            if (chosen === "socket") continue;
            if (chosen === "pending") {
              chosen = "stdio";
              closeListener();
            }
            push(chunk);
          }
        } catch {
          // torn down with the process
        }
        if (chosen !== "socket") end();
      })();
      const exited = child.exited.then((code) => {
        channel.dispose();
        return code;
      });
      return {
        pid: child.pid,
        write(data) {
          if (socket) {
            if (!stdinOpen) throw new Error("the channel is closed");
            socket.write(data);
          } else child.write(data);
        },
        get pendingBytes() {
          return socket ? socket.pending : child.pendingBytes;
        },
        closeStdin() {
          stdinOpen = false;
          child.closeStdin();
          socket?.destroy(); // the container's init sees the hang-up: the bridge is gone
          channel.dispose();
        },
        stdout,
        stderr: child.stderr,
        exited,
        kill(signal) {
          child.kill(signal);
        },
      };
    },
  };
  return channel;
}

/** Equal, in time that does not depend on where they differ. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/**
 * Remove channel folders and private folders (host/private-dir.ts; ours: this uid's) left by bridges
 * that are gone: one killed with SIGKILL while its container was starting leaves its folder behind.
 * Returns the folders removed.
 */
export function sweepChannelFolders(isAlive: (pid: number) => boolean, dir: string = tmpdir()): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return removed;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    const prefix = [FOLDER_PREFIX, PRIVATE_FOLDER_PREFIX].find((p) => name.startsWith(p));
    const m = prefix ? /^(\d+)-/.exec(name.slice(prefix.length)) : null;
    if (!m) continue;
    const path = join(dir, name);
    try {
      const st = statSync(path);
      if (!st.isDirectory() || (uid !== undefined && st.uid !== uid) || isAlive(Number(m[1]))) continue;
      rmSync(path, { recursive: true, force: true });
      removed.push(path);
    } catch {
      // gone meanwhile, or not ours to remove
    }
  }
  return removed;
}
