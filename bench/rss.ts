#!/usr/bin/env bun
/**
 * Where the bridge's idle memory is: RSS after the opening and a few seconds idle, split into heap
 * (anonymous) and pages of the binary, and the binary's resident pages by ELF section (read from
 * /proc/PID/pagemap: `.text` is the runtime's machine code that ran, `.bun` our bundle and bytecode).
 * The floors, measured the same way in the same run: a compiled Bun binary that only waits, and one
 * that reads its stdin (what any stdio MCP server on Bun must do at least).
 *   bun bench/rss.ts [--binary PATH] [--idle 3]      (Linux only)
 */
import { closeSync, openSync, readFileSync, readSync, realpathSync } from "node:fs";
import { parseArgs } from "node:util";
import { BINARY } from "../test/support/binary.ts";
import { bridgeEnv } from "../test/support/env.ts";
import { compiledBun } from "./support.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { binary: { type: "string", default: BINARY }, idle: { type: "string", default: "3" } },
});
const IDLE_MS = Number(values.idle) * 1000;
const PAGE = 4096;

interface Section {
  name: string;
  offset: number;
  size: number;
}

/** The sections of an ELF64 little-endian file that occupy bytes in it. */
function elfSections(path: string): Section[] {
  const b = readFileSync(path);
  if (b.readUInt32BE(0) !== 0x7f454c46 || b[4] !== 2 || b[5] !== 1) throw new Error(`${path}: not a 64-bit little-endian ELF file`);
  const shoff = Number(b.readBigUInt64LE(0x28));
  const shentsize = b.readUInt16LE(0x3a);
  const shnum = b.readUInt16LE(0x3c);
  const strtab = shoff + b.readUInt16LE(0x3e) * shentsize;
  const strOffset = Number(b.readBigUInt64LE(strtab + 24));
  const out: Section[] = [];
  for (let i = 0; i < shnum; i++) {
    const h = shoff + i * shentsize;
    const type = b.readUInt32LE(h + 4);
    const size = Number(b.readBigUInt64LE(h + 32));
    if (type === 8 || size === 0) continue; // SHT_NOBITS (.bss) has no bytes in the file
    const nameAt = strOffset + b.readUInt32LE(h);
    out.push({ name: b.toString("latin1", nameAt, b.indexOf(0, nameAt)), offset: Number(b.readBigUInt64LE(h + 24)), size });
  }
  return out;
}

/** MiB of the binary's pages resident in `pid`, by section. */
function residentBySection(pid: number, binary: string): Map<string, number> {
  const sections = elfSections(binary);
  const real = readFileSync(`/proc/${pid}/maps`, "utf8");
  const exe = realpathSync(binary);
  const fd = openSync(`/proc/${pid}/pagemap`, "r");
  const entry = Buffer.alloc(8);
  const out = new Map<string, number>();
  try {
    for (const line of real.split("\n")) {
      const f = line.split(/\s+/);
      if (f[5] !== exe) continue;
      const [start, end] = f[0]!.split("-").map((x) => Number.parseInt(x, 16)) as [number, number];
      const fileOffset = Number.parseInt(f[2]!, 16);
      for (let va = start; va < end; va += PAGE) {
        readSync(fd, entry, 0, 8, (va / PAGE) * 8);
        if (!(entry.readBigUInt64LE(0) >> 63n)) continue;
        const at = fileOffset + (va - start);
        const name = sections.find((s) => at >= s.offset && at < s.offset + s.size)?.name ?? "(headers, padding)";
        out.set(name, (out.get(name) ?? 0) + PAGE / 1048576);
      }
    }
  } finally {
    closeSync(fd);
  }
  return out;
}

function rollup(pid: number): { rss: number; anon: number; file: number } {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? 0) / 1024;
  return { rss: kb("Rss"), anon: kb("Anonymous"), file: kb("Rss") - kb("Anonymous") };
}

const OPENING = [
  {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "0" } },
  },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, method: "tools/list" },
];

async function measure(label: string, binary: string, argv: string[], env: Record<string, string>) {
  const p = Bun.spawn([binary, ...argv], { stdin: "pipe", stdout: "pipe", stderr: "ignore", env });
  for (const m of OPENING) p.stdin.write(`${JSON.stringify(m)}\n`);
  p.stdin.flush();
  await Bun.sleep(IDLE_MS);
  const r = rollup(p.pid);
  const sections = [...residentBySection(p.pid, binary)].filter(([, m]) => m >= 0.05).sort((a, b) => b[1] - a[1]);
  p.kill();
  await p.exited;
  const mib = (x: number) => `${x.toFixed(1)} MiB`;
  console.log(`${label}: RSS ${mib(r.rss)} = heap and other anonymous ${mib(r.anon)} + pages of the binary ${mib(r.file)}`);
  console.log(`  the binary's resident pages by section: ${sections.map(([n, m]) => `${n} ${m.toFixed(1)}`).join(", ")} (MiB)`);
}

console.log(`idle ${IDLE_MS / 1000} s after the opening (initialize, initialized, tools/list), prewarm off`);
await measure("floor: a compiled Bun binary that only waits", compiledBun("waits", "setInterval(() => {}, 1 << 30);\n"), [], {});
await measure("floor: one that reads its stdin", compiledBun("reads", 'process.stdin.on("data", () => {});\n'), [], {});
await measure("ours: mcp-code-exec run", values.binary!, ["run"], bridgeEnv({ MCP_BRIDGE_PREWARM: "0" }));
