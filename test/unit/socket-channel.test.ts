/**
 * The socket channel (src/host/socket-channel.ts) with real processes on this host standing in for the
 * container: python3 clients that connect the way entrypoint/init.py does. Who may take the channel,
 * what happens to the folder, and the fallback to the child's stdio. Real docker containers using it
 * are in test/adapters/channel.test.ts.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isProcessAlive } from "../../src/reaper.ts";
import { spawnChild, type ChildProcess } from "../../src/host/process.ts";
import { openSocketChannel, sweepChannelFolders, type SocketChannel } from "../../src/host/socket-channel.ts";

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
let channels: SocketChannel[] = [];
let children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children) c.kill("SIGKILL");
  for (const c of channels) c.dispose();
  children = [];
  channels = [];
});

/**
 * A python3 process that connects to `path` and sends `token` (as entrypoint/init.py does), says
 * "ready", then echoes each line back with a prefix; or, as `intruder`, exits 9 when the bridge hangs up.
 */
function client(path: string, token: string, opts: { intruder?: boolean } = {}): ChildProcess {
  const py = [
    "import socket, sys",
    `s = socket.socket(socket.AF_UNIX); s.connect(${JSON.stringify(path)}); s.sendall(${JSON.stringify(`${token}\n`)}.encode())`,
    opts.intruder
      ? "sys.exit(9 if s.recv(100) == b'' else 0)"
      : "s.sendall(b'ready\\n')\nf = s.makefile('rb')\nfor line in f: s.sendall(b'socket:' + line)",
  ].join("\n");
  const child = spawnChild("python3", ["-c", py], { env });
  children.push(child);
  return child;
}

async function open(): Promise<{ ch: SocketChannel; rejected: string[] }> {
  const rejected: string[] = [];
  const ch = openSocketChannel((why) => rejected.push(why));
  channels.push(ch);
  await ch.listening;
  return { ch, rejected };
}

interface LineReader {
  reader: { read(): Promise<{ value?: Uint8Array; done: boolean }> };
  buffered: string;
}
const readers = new WeakMap<ReadableStream<Uint8Array>, LineReader>();

/** The next line of `stream` ("" at its end). */
async function nextLine(stream: ReadableStream<Uint8Array>): Promise<string> {
  const r: LineReader = readers.get(stream) ?? { reader: stream.getReader(), buffered: "" };
  readers.set(stream, r);
  while (!r.buffered.includes("\n")) {
    const { value, done } = await r.reader.read();
    if (done) break;
    r.buffered += new TextDecoder().decode(value);
  }
  const nl = r.buffered.indexOf("\n");
  const line = nl < 0 ? r.buffered : r.buffered.slice(0, nl + 1);
  r.buffered = r.buffered.slice(line.length);
  return line;
}

describe("the socket channel", () => {
  test("the folder is private to list and the socket connectable by any uid; the folder is gone once taken", async () => {
    const { ch } = await open();
    expect(statSync(ch.hostDir).mode & 0o777).toBe(0o711);
    expect(statSync(join(ch.hostDir, "s")).mode & 0o777).toBe(0o666);
    const child = ch.wrap(client(join(ch.hostDir, "s"), ch.token));
    expect(await nextLine(child.stdout)).toBe("ready\n");
    child.write("hello\n");
    expect(await nextLine(child.stdout)).toBe("socket:hello\n");
    expect(ch.chosen).toBe("socket");
    expect(existsSync(ch.hostDir)).toBe(false);
  });

  test("a connection without the token is dropped and does not take the channel; the container still can", async () => {
    const { ch, rejected } = await open();
    const path = join(ch.hostDir, "s");
    const intruder = client(path, "0".repeat(32), { intruder: true });
    expect(await intruder.exited).toBe(9); // its connection was closed under it
    expect(rejected).toEqual(["a connection without the token"]);
    expect(ch.chosen).toBe("pending");
    const child = ch.wrap(client(path, ch.token));
    expect(await nextLine(child.stdout)).toBe("ready\n");
    child.write("mine\n");
    expect(await nextLine(child.stdout)).toBe("socket:mine\n");
  });

  test("when the child never connects, the first output on its stdout chooses stdio and closes the listener", async () => {
    const { ch } = await open();
    // Connects to a path that is not there (as a container that cannot reach the folder): stays on stdio.
    const py = "import os, sys\nfor line in sys.stdin.buffer: os.write(1, b'stdio:' + line)";
    const raw = spawnChild("python3", ["-c", py], { env });
    children.push(raw);
    const child = ch.wrap(raw);
    child.write("over stdin\n");
    expect(await nextLine(child.stdout)).toBe("stdio:over stdin\n");
    expect(ch.chosen).toBe("stdio");
    expect(existsSync(ch.hostDir)).toBe(false);
  });

  test("closeStdin hangs up the socket: the other end sees end-of-file", async () => {
    const { ch } = await open();
    const py = [
      "import socket, sys",
      `s = socket.socket(socket.AF_UNIX); s.connect(${JSON.stringify(join(ch.hostDir, "s"))}); s.sendall(${JSON.stringify(`${ch.token}\n`)}.encode())`,
      "s.sendall(b'ready\\n')",
      "sys.exit(7 if s.recv(10) == b'' else 5)",
    ].join("\n");
    const raw = spawnChild("python3", ["-c", py], { env });
    children.push(raw);
    const child = ch.wrap(raw);
    expect(await nextLine(child.stdout)).toBe("ready\n");
    child.closeStdin();
    expect(await child.exited).toBe(7);
  });
});

describe("a temp folder whose path is too long for a unix socket", () => {
  test("no channel (the start then uses stdio), a reason that names TMPDIR, and no folder left", () => {
    const saved = process.env.TMPDIR;
    const long = join(mkdtempSync(join(tmpdir(), "mcx-long-")), "x".repeat(90));
    mkdirSync(long);
    process.env.TMPDIR = long;
    try {
      expect(() => openSocketChannel()).toThrow(/too long for a unix socket .*TMPDIR/);
      expect(readdirSync(long)).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
  });
});

describe("folders left by bridges that are gone", () => {
  test("the startup sweep removes a dead bridge's channel and private folders and keeps a live one's and anything else", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcx-sweep-"));
    const gone = spawnChild("true", [], { env });
    await gone.exited;
    const dead = join(dir, `mcp-code-exec-ch-${gone.pid}-abc123`);
    const deadOwn = join(dir, `mcp-code-exec-own-${gone.pid}-abc123`);
    const live = join(dir, `mcp-code-exec-ch-${process.pid}-def456`);
    const liveOwn = join(dir, `mcp-code-exec-own-${process.pid}-def456`);
    const other = join(dir, "mcp-code-exec-ch-notapid");
    for (const d of [dead, deadOwn, live, liveOwn, other]) mkdirSync(d);
    writeFileSync(join(dead, "s"), "");
    writeFileSync(join(deadOwn, "seccomp-0123456789ab.json"), "{}");
    expect(sweepChannelFolders(isProcessAlive, dir).sort()).toEqual([dead, deadOwn].sort());
    expect([dead, deadOwn, live, liveOwn, other].map((d) => existsSync(d))).toEqual([false, false, true, true, true]);
  });
});
