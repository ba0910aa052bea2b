/**
 * What the latency benches share: summary statistics, the machine's conditions, the floors (engine
 * runs, a hello-world compiled Bun binary, a pipe through a running container) and a bridge process
 * driven by the SDK's real stdio client whose JSON log lines can be waited on.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { bridgeEnv, IMAGE } from "../test/support/env.ts";
import { plainRunFlags } from "../test/support/engines.ts";

// ---- statistics -------------------------------------------------------------------------------

export interface Summary {
  n: number;
  min: number;
  median: number;
  p90: number;
  p99: number;
}

export function summarize(xs: number[]): Summary {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? Number.NaN;
  return { n: s.length, min: s[0] ?? Number.NaN, median: at(50), p90: at(90), p99: at(99) };
}

export const fmt = (ms: number): string => (Number.isNaN(ms) ? "-" : ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : ms.toFixed(0));

/** One table row: label, min / median / p99 (ms), n, and an optional ratio column. */
export function row(label: string, s: Summary, extra = ""): string {
  return `  ${label.padEnd(58)} ${fmt(s.min).padStart(8)} ${fmt(s.median).padStart(8)} ${fmt(s.p99).padStart(8)} ${String(s.n).padStart(5)}  ${extra}`;
}

export const HEADER = `  ${"".padEnd(58)} ${"min".padStart(8)} ${"median".padStart(8)} ${"p99".padStart(8)} ${"n".padStart(5)}`;

export function conditions(): string {
  const [one, five] = loadavg();
  return `load average ${one!.toFixed(1)} (1 min) ${five!.toFixed(1)} (5 min) on ${navigator.hardwareConcurrency} cores`;
}

/** CPU time (user + system, ms, in clock ticks of 10 ms) a process has used, from /proc. */
export function cpuMs(pid: number): number {
  const s = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10; // utime + stime
}

/**
 * CPU time (ms) the whole machine has spent busy (every process, user + system + interrupts), from
 * /proc/stat. Taken around a step on an otherwise quiet machine, it is the work that step needs: what
 * no schedule on `navigator.hardwareConcurrency` cores can do in less than work / cores.
 */
export function machineBusyMs(): number {
  const f = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = f[3]! + f[4]!; // idle + iowait
  // user nice system idle iowait irq softirq steal (guest time is counted in user already)
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return ((total - idle) * 1000) / CLOCK_TICKS;
}

/** USER_HZ: /proc/stat counts in hundredths of a second on Linux. */
const CLOCK_TICKS = 100;

export const rssMiB = (pid: number): number => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : Number.NaN;
};

// ---- floors -------------------------------------------------------------------------------------

/** Flags without which no container starts on this host (podman copies hard limits it may not set). */
export function floorFlags(engine: string): string[] {
  return plainRunFlags(engine).slice(2); // without --network none: the floors measure the engine's default too
}

/** `ENGINE run --rm IMAGE python3 -c 'print(1)'`, spawn to exit. */
export async function engineRunOnce(argv: string[]): Promise<number> {
  const t0 = performance.now();
  const p = Bun.spawn(argv, { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  const ms = performance.now() - t0;
  if (code !== 0 || out.trim() !== "1") throw new Error(`floor run failed (exit ${code}): ${argv.join(" ")}\n${err.trim()}`);
  return ms;
}

/** A compiled hello-world Bun binary that answers one line: what any compiled Bun program pays to start. */
export async function helloBinary(): Promise<string> {
  return compiledBun(
    "hello",
    `process.stdin.once("data", () => { process.stdout.write('{"jsonrpc":"2.0","id":0,"result":{}}\\n'); process.exit(0); });\n`,
  );
}

/** `source` built with `bun build --compile` into a temp folder (a floor for our binary); returns its path. */
export function compiledBun(name: string, source: string): string {
  const dir = mkdtempSync(join(tmpdir(), `bench-${name}-`));
  writeFileSync(join(dir, `${name}.ts`), source);
  const r = Bun.spawnSync(["bun", "build", "--compile", join(dir, `${name}.ts`), "--outfile", join(dir, name)], {
    stdout: "ignore",
    stderr: "pipe",
  });
  if (r.exitCode !== 0) throw new Error(`bun build --compile ${name}.ts failed: ${r.stderr.toString()}`);
  return join(dir, name);
}

const INITIALIZE = `${JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "0" } } })}\n`;

/**
 * Spawn to the first line answering `initialize`, over raw pipes (no client library in the way). With
 * `thenTools`, the clock stops at the `tools/list` answer instead: initialize, then (as clients do once it
 * is answered) `notifications/initialized` and `tools/list`: when a client is connected and knows our tool.
 * With `stayUntil`, the process is left running after the answer until it says true (at most 15 s).
 */
export async function timeToInitialize(
  binary: string,
  env: Record<string, string>,
  thenTools = false,
  stayUntil?: () => boolean,
): Promise<number> {
  const t0 = performance.now();
  const p = Bun.spawn([binary], { stdin: "pipe", stdout: "pipe", stderr: "ignore", env });
  p.stdin.write(INITIALIZE);
  await p.stdin.flush();
  const line = lineReader(p.stdout, `${binary} exited before answering`);
  const init = await line();
  if (!init.includes('"result"')) throw new Error(`${binary} answered initialize with ${init.slice(0, 200)}`);
  if (thenTools) {
    p.stdin.write(
      `${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })}\n`,
    );
    await p.stdin.flush();
    const tools = await line();
    if (!tools.includes('"run_python"')) throw new Error(`${binary} answered tools/list with ${tools.slice(0, 200)}`);
  }
  const ms = performance.now() - t0;
  for (const end = Date.now() + 15_000; stayUntil && !stayUntil() && Date.now() < end; ) await Bun.sleep(20);
  p.kill();
  await p.exited;
  return ms;
}

/** Successive lines of `stream` (without their newline); throws `endMessage` when it ends first. */
function lineReader(stream: ReadableStream<Uint8Array>, endMessage: string): () => Promise<string> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  return async () => {
    let nl: number;
    while ((nl = text.indexOf("\n")) < 0) {
      const { value, done } = await reader.read();
      if (done) throw new Error(endMessage);
      text += decoder.decode(value, { stream: true });
    }
    const first = text.slice(0, nl);
    text = text.slice(nl + 1);
    return first;
  };
}

/** A container running a line echo: the round-trip floor of a pipe through a running container. */
export async function echoContainer(engine: string) {
  const code = "import os,sys\nr=sys.stdin.buffer\nwhile True:\n l=r.readline()\n if not l: break\n os.write(1,l)";
  const p = Bun.spawn([engine, "run", "--rm", "-i", ...floorFlags(engine), IMAGE, "python3", "-u", "-c", code], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "ignore",
  });
  const reader = p.stdout.getReader();
  const roundTrip = async (): Promise<number> => {
    const t0 = performance.now();
    p.stdin.write("ping\n");
    await p.stdin.flush();
    const { value } = await reader.read();
    if (!value) throw new Error("echo container ended");
    return performance.now() - t0;
  };
  await roundTrip(); // the container is up once it answers
  return {
    roundTrip,
    close: async () => {
      p.stdin.end();
      p.kill();
      await p.exited;
    },
  };
}

// ---- our bridge ---------------------------------------------------------------------------------

export interface LogLine {
  msg: string;
  [k: string]: unknown;
}

/** The compiled bridge under a real MCP client, with its JSON log lines collected as they come. */
export async function startBridge(binary: string, env: Record<string, string>) {
  const lines: LogLine[] = [];
  const waiters: Array<{ msg: string; resolve: (l: LogLine) => void }> = [];
  const t0 = performance.now();
  const transport = new StdioClientTransport({
    command: binary,
    args: [],
    env: bridgeEnv({ MCP_BRIDGE_LOG_FORMAT: "json", ...env }),
    stderr: "pipe",
  });
  let partial = "";
  transport.stderr?.on("data", (d: Buffer) => {
    partial += d.toString();
    let nl: number;
    while ((nl = partial.indexOf("\n")) >= 0) {
      const text = partial.slice(0, nl);
      partial = partial.slice(nl + 1);
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        continue;
      }
      lines.push(line);
      for (const w of waiters.filter((x) => x.msg === line.msg)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  });
  const client = new Client({ name: "bench", version: "0" });
  await client.connect(transport);
  const initMs = performance.now() - t0;
  return {
    client,
    initMs,
    pid: transport.pid!,
    lines,
    /** Resolves with the first log line with this message (already seen, or when it comes). */
    waitFor(msg: string): Promise<LogLine> {
      const seen = lines.find((l) => l.msg === msg);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ msg, resolve }));
    },
    /** One run_python call (`extra`: more arguments, e.g. servers), timed from request to answer. */
    async call(code = "print(1)", extra: Record<string, unknown> = {}): Promise<number> {
      const t = performance.now();
      const r = (await client.callTool({ name: "run_python", arguments: { code, ...extra } })) as {
        isError?: boolean;
        content: Array<{ text?: string }>;
      };
      const ms = performance.now() - t;
      if (r.isError) throw new Error(`call failed: ${r.content[0]?.text}`);
      return ms;
    },
    close: () => client.close(),
  };
}

/**
 * The same bridge driven by the least an MCP client can be: JSON-RPC lines written to its stdin and read
 * from its stdout, no SDK, no schema checks. Beside startBridge it shows how much of a round trip (and
 * of its tail) is the client's own. `modern`: protocol revision 2026-07-28 (no initialize; `_meta` on
 * every request), to show what serving that revision costs.
 */
export async function startRawBridge(binary: string, env: Record<string, string>, modern = false) {
  const proc = Bun.spawn([binary], { env: bridgeEnv(env), stdin: "pipe", stdout: "pipe", stderr: "ignore" });
  const line = lineReader(proc.stdout, "the bridge closed its stdout");
  const next = async (): Promise<{ id?: number; result?: { isError?: boolean; content?: Array<{ text?: string }> }; error?: unknown }> =>
    JSON.parse(await line());
  const send = (message: unknown) => {
    proc.stdin.write(`${JSON.stringify(message)}\n`);
    proc.stdin.flush();
  };
  let id = 0;
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name: "bench-raw", version: "0" },
    "io.modelcontextprotocol/clientCapabilities": {},
  };
  const request = async (method: string, params: Record<string, unknown>) => {
    send({ jsonrpc: "2.0", id: ++id, method, params: modern ? { ...params, _meta: meta } : params });
    for (;;) {
      const m = await next();
      if (m.id === id) return m;
    }
  };
  if (!modern) {
    await request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench-raw", version: "0" } });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
  }
  return {
    pid: proc.pid,
    async call(code = "print(1)"): Promise<number> {
      const t = performance.now();
      const r = await request("tools/call", { name: "run_python", arguments: { code } });
      const ms = performance.now() - t;
      if (r.error || r.result?.isError) throw new Error(`call failed: ${JSON.stringify(r.error ?? r.result?.content?.[0]?.text)}`);
      return ms;
    },
    async close() {
      proc.stdin.end();
      await proc.exited;
    },
  };
}
