/**
 * A pod's container reached through `pods/attach` over a WebSocket, as a ChildProcess
 * (src/host/process.ts): the sandbox's stdin and stdout carry the framed protocol exactly as through
 * `podman run -i`, so src/sandbox/sandbox.ts needs no other code path.
 *
 * The channel protocol (v5.channel.k8s.io, v4.channel.k8s.io): every binary message starts with a
 * stream number, 0 stdin, 1 stdout, 2 stderr, 3 the server's error/status; v5 adds 255 to close one
 * stream. The container keeps its stdin open when the socket closes (stdinOnce: false): a bridge that
 * goes away leaves the sandbox running for another to attach to; its lease (the Sandbox's shutdown
 * time) ends it when no bridge renews it.
 */
import type { ChildProcess } from "../../src/host/process.ts";

const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;
const STATUS = 3;
/** Largest stdin message: the API server and kubelet relay messages whole. */
const CHUNK = 32 * 1024;
/** Bytes a reader may leave unread before the attachment is ended (the frame budget stops floods sooner). */
const MAX_BACKLOG = 64 * 1024 * 1024;

export interface AttachOptions {
  /** The socket, just created (adapters/kube/api.ts `webSocket`). */
  socket: WebSocket;
  /** Once the socket has closed: the container's exit code, or null with why (its pod is gone, ...). */
  exitCode: () => Promise<{ code: number | null; why?: string }>;
  /** Told when the socket opened (the start's trace). */
  onOpen?: () => void;
}

/** The attached container as a ChildProcess. */
export function attachedProcess(opts: AttachOptions): ChildProcess {
  const ws = opts.socket;
  ws.binaryType = "arraybuffer";
  let open = false;
  let closed = false;
  let queued: Uint8Array[] = [];
  let queuedBytes = 0;
  let stdoutCtl!: ReadableStreamDefaultController<Uint8Array>;
  let stderrCtl!: ReadableStreamDefaultController<Uint8Array>;
  // Sized queues: a WebSocket cannot be paused, so a reader that falls this far behind (a sandbox
  // flooding faster than the bridge reads) ends the attachment instead of holding the flood in memory.
  const queue = () => new ByteLengthQueuingStrategy({ highWaterMark: 1 << 20 });
  const stdout = new ReadableStream<Uint8Array>({ start: (c) => void (stdoutCtl = c) }, queue());
  const stderr = new ReadableStream<Uint8Array>({ start: (c) => void (stderrCtl = c) }, queue());
  /** Hand a chunk to a reader; false when it has gone (cancelled) or is too far behind. */
  const deliver = (ctl: ReadableStreamDefaultController<Uint8Array>, chunk: Uint8Array): boolean => {
    try {
      ctl.enqueue(chunk);
    } catch {
      return false; // the reader cancelled: the sandbox is being stopped
    }
    return (ctl.desiredSize ?? 0) > -MAX_BACKLOG;
  };
  const encoder = new TextEncoder();
  const note = (text: string) => {
    try {
      stderrCtl.enqueue(encoder.encode(`${text}\n`));
    } catch {
      // stderr already closed
    }
  };

  const sendFramed = (stream: number, data: Uint8Array) => {
    for (let at = 0; at < data.length || (at === 0 && data.length === 0); at += CHUNK) {
      const part = data.subarray(at, at + CHUNK);
      const msg = new Uint8Array(part.length + 1);
      msg[0] = stream;
      msg.set(part, 1);
      ws.send(msg);
      if (data.length === 0) break;
    }
  };

  let resolveExit!: (code: number | null) => void;
  const exited = new Promise<number | null>((r) => (resolveExit = r));
  const finish = () => {
    if (closed) return;
    closed = true;
    queued = [];
    queuedBytes = 0;
    void opts
      .exitCode()
      .catch((err: unknown) => ({ code: null, why: `its state could not be read (${(err as Error).message})` }))
      .then(({ code, why }) => {
        // The bridge's account of an end it did not see (src/sandbox/sandbox.ts reads this line).
        if (why) note(`[kubernetes] ${why}`);
        for (const ctl of [stdoutCtl, stderrCtl])
          try {
            ctl.close();
          } catch {
            // already closed
          }
        resolveExit(code);
      });
  };

  ws.onopen = () => {
    open = true;
    opts.onOpen?.();
    for (const chunk of queued) sendFramed(STDIN, chunk);
    queued = [];
    queuedBytes = 0;
  };
  ws.onmessage = (ev) => {
    const bytes = new Uint8Array(ev.data as ArrayBuffer);
    if (bytes.length === 0) return;
    const body = bytes.subarray(1);
    switch (bytes[0]) {
      case STDOUT:
      case STDERR:
        if (body.length && !deliver(bytes[0] === STDOUT ? stdoutCtl : stderrCtl, body) && !closed) {
          note("[kubernetes] the sandbox wrote faster than the bridge reads: detached");
          try {
            ws.close();
          } catch {
            // closing anyway
          }
          finish();
        }
        return;
      case STATUS: {
        // A Status object when the stream ends; a failure says why (the container is gone, ...).
        const text = new TextDecoder().decode(body);
        if (text.trim() && !/"status":\s*"Success"/.test(text)) note(`[kubernetes] attach: ${text.trim()}`);
        return;
      }
    }
  };
  ws.onerror = (ev) => {
    const message = (ev as ErrorEvent).message;
    if (!open) note(`[kubernetes] attach failed${message ? `: ${message}` : ""}`);
  };
  ws.onclose = (ev) => {
    if (!open && ev.reason) note(`[kubernetes] attach refused: ${ev.reason}`);
    finish();
  };

  return {
    pid: 0,
    write(data) {
      if (closed) throw new Error("the attach stream is closed");
      const bytes = typeof data === "string" ? encoder.encode(data) : data;
      if (!open) {
        queued.push(bytes);
        queuedBytes += bytes.length;
        return;
      }
      sendFramed(STDIN, bytes);
    },
    get pendingBytes() {
      return queuedBytes + (open && !closed ? ws.bufferedAmount : 0);
    },
    closeStdin() {
      // Nothing to do: the container's stdin stays open for the next bridge to attach (stdinOnce
      // false), and a sandbox is ended by deleting it (the engine's remove), never by a hang-up.
    },
    stdout,
    stderr,
    exited,
    kill() {
      try {
        ws.close();
      } catch {
        // already closed
      }
      finish();
    },
  };
}

/** The subprotocols offered, newest first. */
export const ATTACH_PROTOCOLS = ["v5.channel.k8s.io", "v4.channel.k8s.io"];
