#!/usr/bin/env bun
/**
 * Latency and footprint of the compiled bridge through a real MCP client, each figure beside its floor
 * measured in the same run, interleaved round by round so the machine's load hits both alike.
 *   bun bench/latency.ts [--engines podman,docker] [--rounds 15] [--warm 2000] [--binary PATH] [--before PATH]
 *                        [--only startup,cold,servers,warm]
 * Prints the conditions (load average), then:
 *   startup: spawn to the `initialize` answer, ours and a hello-world `bun build --compile` binary;
 *   per engine: `ENGINE run --rm IMAGE python3 -c 'print(1)'` (the floor), the same with our hardening
 *     flags, our cold first call (prewarm off), the first call right after initialize (prewarm on), the
 *     first call once the prewarmed sandbox is ready against a warm call, and where the cold call's
 *     milliseconds went (medians of the DEBUG `sandbox start trace`);
 *   servers: per engine, a first call with servers=["everything"] (@modelcontextprotocol/server-everything)
 *     right after initialize, beside the cold first call without servers and the upstream's own spawn to
 *     `initialize` answer through a direct SDK client, with the upstream's tool list cached, not cached,
 *     and with prewarm on; and when the sandbox and the upstream were each ready (medians from the log);
 *     and the CPU the whole machine used for each (/proc/stat): the work both starts need, divided by
 *     the cores, is the least time any overlap of the two can take here; and a call 1 s after
 *     initialize with prewarm on, with the last session's servers started at initialize and without;
 *   warm `print(1)` round trips against a line echo through a running container, through the SDK client
 *     and through a bare JSON-RPC client (the client's own share) at 2025-06-18 and at 2026-07-28, and
 *     with --warm 6000 or more the first 2,000 calls apart from the last 2,000 (the JIT's warm-up);
 *     bridge RSS.
 * --before PATH runs another build (e.g. main's) through the same rounds, for a before/after table.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { loadAdapter } from "../src/engines/registry.ts";
import { engineEnv } from "../src/engines/registry.ts";
import { loadConfig } from "../src/config/env.ts";
import { containerSpec } from "../src/session/container-spec.ts";
import { seccompProfilePath } from "../src/sandbox/seccomp.ts";
import { BINARY } from "../test/support/binary.ts";
import { bridgeEnv, IMAGE, ROOT } from "../test/support/env.ts";
import {
  conditions,
  echoContainer,
  machineBusyMs,
  engineRunOnce,
  floorFlags,
  fmt,
  HEADER,
  helloBinary,
  row,
  rssMiB,
  startBridge,
  startRawBridge,
  summarize,
  timeToInitialize,
  type LogLine,
} from "./support.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    engines: { type: "string", default: "podman,docker" },
    rounds: { type: "string", default: "15" },
    warm: { type: "string", default: "2000" },
    binary: { type: "string", default: BINARY },
    before: { type: "string" },
    only: { type: "string", default: "startup,cold,servers,warm" },
  },
});
const engines = values.engines!.split(",");
const ROUNDS = Number(values.rounds);
const WARM = Number(values.warm);
/** Calls per phase in the warm rows' first-calls / settled split (shown when --warm is at least 3 phases). */
const PHASE = 2000;
const only = new Set(values.only!.split(","));
const builds: Array<[string, string]> = [
  ["ours", values.binary!],
  ...(values.before ? [["before", values.before] as [string, string]] : []),
];
const stateDir = mkdtempSync(join(tmpdir(), "bench-state-"));

console.log(`binary ${values.binary}${values.before ? `, before: ${values.before}` : ""}; image ${IMAGE}; ${ROUNDS} rounds`);
console.log(`start: ${conditions()}`);

if (only.has("startup")) {
  const hello = await helloBinary();
  const env = bridgeEnv({ MCP_BRIDGE_PREWARM: "0", MCP_BRIDGE_STATE_DIR: stateDir });
  const samples: Record<string, number[]> = { hello: [] };
  // The first start on a state dir waits for the startup check (server/readiness.ts); users start again and
  // again. It is left running until the check has left its answer (the engine probe takes ~0.5 s with
  // podman): killed at the answer, no start would ever find one, and each would wait for the check.
  const checked = () => existsSync(join(stateDir, "readiness.json"));
  for (const [, bin] of builds) {
    rmSync(join(stateDir, "readiness.json"), { force: true });
    await timeToInitialize(bin, env, false, checked);
  }
  for (let i = 0; i < ROUNDS * 2; i++) {
    samples.hello!.push(await timeToInitialize(hello, env));
    for (const [name, bin] of builds) {
      (samples[name] ??= []).push(await timeToInitialize(bin, env));
      (samples[`${name} tools`] ??= []).push(await timeToInitialize(bin, env, true));
    }
  }
  const floor = summarize(samples.hello!);
  console.log(`\nspawn to the initialize answer (${conditions()})\n${HEADER}`);
  console.log(row("floor: hello-world `bun build --compile` binary", floor));
  for (const [name] of builds) {
    const s = summarize(samples[name]!);
    console.log(row(`${name}`, s, `${(s.median / floor.median).toFixed(1)}× floor`));
    console.log(row(`${name}: to the tools/list answer`, summarize(samples[`${name} tools`]!)));
  }
}

/** The median of each phase of the `sandbox start trace` lines, in the order they first appear. */
function breakdown(traces: LogLine[]): string {
  const phases = new Map<string, number[]>();
  for (const t of traces)
    for (const [k, v] of Object.entries(t))
      if (k.startsWith("ms_") && typeof v === "number") (phases.get(k) ?? phases.set(k, []).get(k)!).push(v);
  return [...phases].map(([k, v]) => `${k.slice(3)} ${fmt(summarize(v).median)}`).join(", ");
}

async function ourFlagsArgv(engine: string): Promise<string[]> {
  const env = engineEnv(process.env);
  const config = loadConfig(
    { ...process.env, MCP_BRIDGE_IMAGE: IMAGE, MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_STATE_DIR: stateDir },
    process.env.HOME ?? "/root",
  );
  const adapter = await loadAdapter(engine, { env });
  const spec = { ...containerSpec(config, seccompProfilePath(stateDir)), command: ["python3", "-c", "print(1)"] };
  const argv = await adapter.runArgv(spec);
  return argv.map((a) => (a === spec.name ? `${spec.name}-floor` : a));
}

if (only.has("cold")) {
  for (const engine of engines) {
    const floorArgv = [engine, "run", "--rm", ...floorFlags(engine), IMAGE, "python3", "-c", "print(1)"];
    // The engine's default network costs podman a CNI bridge, and docker less than an explicit none.
    const noNetArgv = [engine, "run", "--rm", "--network", "none", ...floorFlags(engine), IMAGE, "python3", "-c", "print(1)"];
    const flagged = await ourFlagsArgv(engine);
    const s: Record<string, number[]> = {};
    const add = (k: string, v: number) => (s[k] ??= []).push(v);
    const traces: LogLine[] = [];
    const env = (prewarm: "0" | "1") => ({
      MCP_BRIDGE_RUNTIME: engine,
      MCP_BRIDGE_PREWARM: prewarm,
      MCP_BRIDGE_STATE_DIR: stateDir,
      MCP_BRIDGE_LOG_LEVEL: "DEBUG",
    });
    // One unmeasured start fills what is cached across runs (an engine probe, the seccomp profile).
    for (const [, bin] of builds) {
      const b = await startBridge(bin, env("0"));
      await b.call();
      await b.close();
    }
    const loadBefore = conditions();
    for (let round = 0; round < ROUNDS; round++) {
      add("floor", await engineRunOnce(floorArgv));
      add("nonet", await engineRunOnce(noNetArgv));
      add("flags", await engineRunOnce(flagged));
      for (const [name, bin] of builds) {
        const cold = await startBridge(bin, env("0"));
        const coldMs = await cold.call();
        add(`${name} cold`, coldMs);
        if (name === "ours") {
          const trace = cold.lines.find((l) => l.msg === "sandbox start trace");
          const arrived = cold.lines.find((l) => l.msg === "tools/call arrived");
          const run = cold.lines.find((l) => l.msg === "run trace");
          if (trace) traces.push(trace);
          if (trace && arrived && run) {
            // The call's milliseconds in the bridge's own clock: before the start began, the start, the run; the rest is the
            // client's and the pipes' (the request reaching the bridge, the answer reaching the client).
            const before = Number(trace.at_ms) - Number(arrived.at_ms);
            add("split before start", before);
            add("split run", Number(run.exec_ms));
            add("split rest", coldMs - before - Number(trace.total_ms) - Number(run.exec_ms));
          }
        }
        await cold.close();

        const immediate = await startBridge(bin, env("1"));
        add(`${name} immediate`, await immediate.call());
        await immediate.close();

        const ready = await startBridge(bin, env("1"));
        await ready.waitFor("sandbox ready");
        const first = await ready.call();
        const warm: number[] = [];
        for (let i = 0; i < 5; i++) warm.push(await ready.call());
        add(`${name} after ready`, first);
        add(`${name} after ready - warm`, first - summarize(warm).median);
        await ready.close();
      }
    }
    const floor = summarize(s.floor!);
    const x = (k: string) => `${(summarize(s[k]!).median / floor.median).toFixed(2)}× floor`;
    console.log(`\n[${engine}] first calls (${loadBefore} → ${conditions()})\n${HEADER}`);
    console.log(row(`floor: ${engine} run --rm IMAGE python3 -c 'print(1)'`, floor));
    console.log(row("the same with --network none", summarize(s.nonet!), x("nonet")));
    console.log(row("the same with all our hardening flags", summarize(s.flags!), x("flags")));
    for (const [name] of builds) {
      console.log(row(`${name}: cold first call, prewarm off`, summarize(s[`${name} cold`]!), x(`${name} cold`)));
      console.log(
        row(`${name}: first call right after initialize, prewarm on`, summarize(s[`${name} immediate`]!), x(`${name} immediate`)),
      );
      console.log(row(`${name}: first call once the prewarmed sandbox is ready`, summarize(s[`${name} after ready`]!)));
      console.log(row(`${name}:   the same minus a warm call`, summarize(s[`${name} after ready - warm`]!)));
    }
    if (traces.length) console.log(`  where the cold start went (medians, ms, of ${traces.length} traces): ${breakdown(traces)}`);
    if (s["split run"]) {
      const m = (k: string) => fmt(summarize(s[k]!).median);
      console.log(
        `  where the cold call went (ours, medians, ms): the call arrived -> the start began ${m("split before start")}, the start (above) ${fmt(summarize(traces.map((t) => Number(t.total_ms))).median)}, the run ${m("split run")}, the rest (the request and the answer through the client and the pipes) ${m("split rest")}`,
      );
    }
    if (traces.length) {
      const start = summarize(traces.map((t) => Number(t.total_ms))).median;
      for (const [name] of builds) {
        const gain = summarize(s[`${name} cold`]!).median - summarize(s[`${name} immediate`]!).median;
        console.log(
          `  ${name}: prewarm on saves a call at 0 ms ${fmt(gain)} ms (median - median); half the sandbox start is ${fmt(start / 2)} ms`,
        );
      }
    }
  }
}

if (only.has("servers")) {
  const everything = join(ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
  const home = mkdtempSync(join(tmpdir(), "bench-home-"));
  mkdirSync(join(home, ".config", "mcp", "servers"), { recursive: true });
  writeFileSync(
    join(home, ".config", "mcp", "servers", "bench.json"),
    JSON.stringify({ mcpServers: { everything: { command: "node", args: [everything] } } }),
  );
  const CODE = "r = await mcp_everything.echo(message='x')\nprint(1)";
  /** The upstream's own spawn to `initialize` answer, through the SDK's client as the bridge uses it. */
  const directInit = async (): Promise<{ ms: number; cpu: number }> => {
    const busy0 = machineBusyMs();
    const t0 = performance.now();
    const client = new Client({ name: "bench", version: "0" });
    await client.connect(new StdioClientTransport({ command: "node", args: [everything], stderr: "ignore" }));
    const ms = performance.now() - t0;
    const cpu = machineBusyMs() - busy0;
    await client.close();
    return { ms, cpu };
  };
  for (const engine of engines) {
    const env = (prewarm: "0" | "1", prewarmServers: "0" | "1" = "1") => ({
      HOME: home,
      MCP_BRIDGE_RUNTIME: engine,
      MCP_BRIDGE_PREWARM: prewarm,
      MCP_BRIDGE_PREWARM_SERVERS: prewarmServers,
      MCP_BRIDGE_STATE_DIR: stateDir,
      MCP_BRIDGE_LOG_LEVEL: "DEBUG",
    });
    const s: Record<string, number[]> = { direct: [], "direct cpu": [] };
    const add = (k: string, v: number) => (s[k] ??= []).push(v);
    /** One fresh bridge, one first call; and when (after the call was sent) its sandbox and upstream were ready, from the log. */
    const first = async (
      name: string,
      bin: string,
      key: string,
      prewarm: "0" | "1",
      extra?: Record<string, unknown>,
      later?: { ms: number; prewarmServers: "0" | "1" },
    ) => {
      const b = await startBridge(bin, env(prewarm, later?.prewarmServers));
      // A model takes a while to make its first call: this one comes `later.ms` after initialize.
      if (later) await Bun.sleep(later.ms);
      const busy0 = machineBusyMs();
      add(`${name} ${key}`, await b.call(extra ? CODE : "print(1)", extra));
      add(`${name} ${key} cpu`, machineBusyMs() - busy0);
      const sandbox = b.lines.find((l) => l.msg === "sandbox ready");
      const upstream = b.lines.find((l) => l.msg === "upstream server connected");
      if (sandbox) add(`${name} ${key} sandbox ms`, Number(sandbox.ms));
      if (upstream) add(`${name} ${key} upstream ms`, Number(upstream.ms));
      await b.close();
    };
    for (const [name, bin] of builds) await first(name, bin, "warmup", "0", { servers: ["everything"] });
    await directInit();
    const loadBefore = conditions();
    for (let round = 0; round < ROUNDS; round++) {
      const direct = await directInit();
      add("direct", direct.ms);
      add("direct cpu", direct.cpu);
      for (const [name, bin] of builds) {
        await first(name, bin, "cold", "0");
        await first(name, bin, "servers", "0", { servers: ["everything"] });
        rmSync(join(stateDir, "tool-cache"), { recursive: true, force: true });
        await first(name, bin, "servers uncached", "0", { servers: ["everything"] });
        await first(name, bin, "servers prewarm", "1", { servers: ["everything"] });
        // Every call above named the server, so the bridge remembers it for the next session here.
        await first(name, bin, "servers 1 s later", "1", { servers: ["everything"] }, { ms: 1000, prewarmServers: "1" });
        await first(name, bin, "servers 1 s later, not remembered", "1", { servers: ["everything"] }, { ms: 1000, prewarmServers: "0" });
      }
    }
    const direct = summarize(s.direct!);
    console.log(`\n[${engine}] first call with servers=["everything"] right after initialize (${loadBefore} → ${conditions()})\n${HEADER}`);
    console.log(row("the upstream alone: spawn to initialize answer (SDK client)", direct));
    for (const [name] of builds) {
      const cold = summarize(s[`${name} cold`]!);
      const larger = Math.max(cold.median, direct.median);
      const x = (k: string) => `${(summarize(s[`${name} ${k}`]!).median / larger).toFixed(2)}× the larger`;
      console.log(row(`${name}: cold first call without servers, prewarm off`, cold));
      console.log(row(`${name}: with servers, tool list cached, prewarm off`, summarize(s[`${name} servers`]!), x("servers")));
      console.log(
        row(`${name}: with servers, no tool list cached, prewarm off`, summarize(s[`${name} servers uncached`]!), x("servers uncached")),
      );
      console.log(
        row(`${name}: with servers, tool list cached, prewarm on`, summarize(s[`${name} servers prewarm`]!), x("servers prewarm")),
      );
      console.log(
        row(`${name}: the same 1 s after initialize, last session's servers started`, summarize(s[`${name} servers 1 s later`]!)),
      );
      console.log(row(`${name}: the same, MCP_BRIDGE_PREWARM_SERVERS=0`, summarize(s[`${name} servers 1 s later, not remembered`]!)));
      // The CPU both starts need, the upstream's and the cold call's, and the least time it takes on these cores.
      const cpu = (k: string) => summarize(s[k]!).median;
      const work = cpu("direct cpu") + cpu(`${name} cold cpu`);
      const cores = navigator.hardwareConcurrency;
      console.log(
        `  ${name}: CPU used (whole machine, medians): the upstream alone ${fmt(cpu("direct cpu"))} ms, the cold call ${fmt(cpu(`${name} cold cpu`))} ms, the call with servers ${fmt(cpu(`${name} servers cpu`))} ms; both starts' work on ${cores} cores takes at least ${fmt(work / cores)} ms (${(work / cores / larger).toFixed(2)}× the larger)`,
      );
      for (const key of ["servers", "servers uncached", "servers prewarm"]) {
        const ms = (what: string) => (s[`${name} ${key} ${what}`] ? fmt(summarize(s[`${name} ${key} ${what}`]!).median) : "-");
        console.log(
          `  ${name}: ${key}: sandbox start ${ms("sandbox ms")} ms, upstream start ${ms("upstream ms")} ms (medians, from the log)`,
        );
      }
    }
  }
}

if (only.has("warm")) {
  for (const engine of engines) {
    const echo = await echoContainer(engine);
    const bridges = await Promise.all(
      builds.map(async ([name, bin]) => {
        const b = await startBridge(bin, { MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_PREWARM: "0", MCP_BRIDGE_STATE_DIR: stateDir });
        // Idle as a user's bridge is idle: past the collection it makes 2 s after its last message.
        await Bun.sleep(3000);
        const idleMiB = rssMiB(b.pid);
        for (let i = 0; i < 100; i++) await b.call();
        const raw = await startRawBridge(bin, { MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_PREWARM: "0", MCP_BRIDGE_STATE_DIR: stateDir });
        for (let i = 0; i < 100; i++) await raw.call();
        const modern = await startRawBridge(
          bin,
          { MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_PREWARM: "0", MCP_BRIDGE_STATE_DIR: stateDir },
          true,
        );
        for (let i = 0; i < 100; i++) await modern.call();
        return { name, b, raw, modern, idleMiB };
      }),
    );
    const s: Record<string, number[]> = { floor: [] };
    const loadBefore = conditions();
    const BLOCK = 100;
    for (let done = 0; done < WARM; done += BLOCK) {
      for (let i = 0; i < BLOCK; i++) s.floor!.push(await echo.roundTrip());
      for (const { name, b, raw, modern } of bridges) {
        for (let i = 0; i < BLOCK; i++) (s[name] ??= []).push(await b.call());
        for (let i = 0; i < BLOCK; i++) (s[`${name} raw`] ??= []).push(await raw.call());
        for (let i = 0; i < BLOCK; i++) (s[`${name} modern`] ??= []).push(await modern.call());
      }
    }
    await echo.close();
    await Bun.sleep(3000);
    console.log(`\n[${engine}] warm print(1) round trips (${loadBefore} → ${conditions()})\n${HEADER}`);
    console.log(row(`floor: a line through a running container's stdin/stdout`, summarize(s.floor!)));
    for (const { name, b, raw, modern, idleMiB } of bridges) {
      console.log(row(`${name}: run_python print(1) through the SDK client`, summarize(s[name]!)));
      console.log(row(`${name}: the same through a bare JSON-RPC client (no SDK)`, summarize(s[`${name} raw`]!)));
      console.log(row(`${name}: the bare client at revision 2026-07-28`, summarize(s[`${name} modern`]!)));
      // The tail shrinks as JavaScriptCore's optimizing tiers finish compiling the hot paths (in the
      // bridge and in the client): a long run shows the first calls and the settled ones apart.
      if (WARM >= 3 * PHASE) {
        for (const [label, key] of [
          ["SDK client", name],
          ["bare client", `${name} raw`],
        ] as const) {
          const xs = s[key]!;
          console.log(row(`${name}:   ${label}, calls 1-${PHASE}`, summarize(xs.slice(0, PHASE))));
          console.log(row(`${name}:   ${label}, the last ${PHASE} of ${xs.length}`, summarize(xs.slice(-PHASE))));
        }
      }
      await raw.close();
      await modern.close();
      console.log(
        `  ${name}: bridge RSS ${idleMiB.toFixed(1)} MiB idle (3 s) after initialize, ${rssMiB(b.pid).toFixed(1)} MiB idle (3 s) after ${WARM + 100} calls`,
      );
      await b.close();
    }
  }
}
console.log(`\nend: ${conditions()}`);
process.exit(0);
