/**
 * A unix socket listener, for Bun and Deno alike: Bun's own sockets under Bun (node:net costs ~6 MiB
 * of resident memory and ~15 ms to load in a Bun binary; Bun.listen ~0.4 MiB), node:net under Deno.
 * Connections are plain byte pipes with explicit backpressure: the owner sets `ondata`/`onclose`.
 */
import { JS_HOST } from "./process.ts";

export interface UnixConnection {
  /** Queue bytes for the peer; what the kernel does not take at once goes when it drains. */
  write(data: Uint8Array | string): void;
  /** Bytes given to write() that have not reached the kernel yet (a peer that stops reading grows this). */
  readonly pending: number;
  pause(): void;
  resume(): void;
  destroy(): void;
  /** Called with each chunk the peer sends (the chunk is the owner's to keep). */
  ondata?: (chunk: Uint8Array) => void;
  /** Called once, when the connection is gone (either side). */
  onclose?: () => void;
}

export interface UnixListener {
  /** Stop accepting; connections already made stay open. */
  close(): void;
}

/** Listen at `path` (which must not exist). */
export async function listenUnix(path: string, onConnection: (conn: UnixConnection) => void): Promise<UnixListener> {
  return JS_HOST === "bun" ? bunListen(path, onConnection) : nodeListen(path, onConnection);
}

function bunListen(path: string, onConnection: (conn: UnixConnection) => void): UnixListener {
  type S = import("bun").Socket<BunConn>;
  interface BunConn {
    conn: UnixConnection;
    queue: Uint8Array[];
    pending: number;
    closed: boolean;
  }
  const flush = (s: S) => {
    const d = s.data;
    while (d.queue.length) {
      const head = d.queue[0]!;
      const n = s.write(head);
      if (n < 0) {
        d.queue = [];
        d.pending = 0;
        return;
      }
      d.pending -= n;
      if (n < head.byteLength) {
        d.queue[0] = head.subarray(n);
        return;
      }
      d.queue.shift();
    }
  };
  const finish = (s: S) => {
    const d = s.data;
    if (!d || d.closed) return;
    d.closed = true;
    d.conn.onclose?.();
  };
  const encoder = new TextEncoder();
  const listener = Bun.listen<BunConn>({
    unix: path,
    socket: {
      binaryType: "uint8array",
      open(s) {
        const d: BunConn = { queue: [], pending: 0, closed: false, conn: undefined as unknown as UnixConnection };
        d.conn = {
          write(data) {
            if (d.closed) return;
            const bytes = typeof data === "string" ? encoder.encode(data) : data;
            if (d.queue.length === 0) {
              const n = s.write(bytes);
              if (n < 0 || n === bytes.byteLength) return;
              d.queue.push(bytes.subarray(n));
              d.pending += bytes.byteLength - n;
              return;
            }
            d.queue.push(bytes);
            d.pending += bytes.byteLength;
          },
          get pending() {
            return d.pending;
          },
          pause: () => s.pause(),
          resume: () => s.resume(),
          destroy() {
            s.terminate();
            finish(s);
          },
        };
        s.data = d;
        onConnection(d.conn);
      },
      data(s, chunk) {
        // A copy: the owner keeps chunks (a stream queue) past this callback.
        s.data.conn.ondata?.(new Uint8Array(chunk));
      },
      drain: flush,
      close: finish,
      error: finish,
    },
  });
  return { close: () => listener.stop(false) };
}

async function nodeListen(path: string, onConnection: (conn: UnixConnection) => void): Promise<UnixListener> {
  const { createServer } = await import("node:net");
  const server = createServer((socket) => {
    let closed = false;
    const conn: UnixConnection = {
      write(data) {
        if (!closed) socket.write(data);
      },
      get pending() {
        return socket.writableLength;
      },
      pause: () => socket.pause(),
      resume: () => socket.resume(),
      destroy: () => socket.destroy(),
    };
    socket.on("data", (chunk: Buffer) => conn.ondata?.(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length)));
    socket.on("error", () => {});
    socket.on("close", () => {
      if (closed) return;
      closed = true;
      conn.onclose?.();
    });
    onConnection(conn);
  });
  server.on("error", () => {});
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolve());
  });
  return { close: () => server.close() };
}
