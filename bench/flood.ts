/**
 * The bridge under a flood from its sandbox: after a run returns, a thread in the sandbox writes
 * `line` to the protocol fd without pause. Prints, per binary: ping latency while it goes on, the
 * bridge's CPU share, and how long until the sandbox was stopped; the floor is the same pings with no
 * flood, measured in the same run. The budget is FRAME_BUDGET in src/sandbox/frame-budget.ts.
 *
 *   bun bench/flood.ts [--binaries dist/mcp-code-exec,/tmp/old-bridge] [--engine podman] [--seconds 4]
 */
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { FRAME_BUDGET } from "../src/sandbox/frame-budget.ts";
import { fill, floodAfterRun } from "../test/security/attacks.ts";
import { bridgeEnv, ROOT } from "../test/support/env.ts";
import { cpuMs } from "./support.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    binaries: { type: "string", default: `${ROOT}/dist/mcp-code-exec` },
    engine: { type: "string", default: "podman" },
    seconds: { type: "string", default: "4" },
  },
});
const SECONDS = Number(values.seconds);
const FLOODS: Record<string, string> = {
  "tiny frames": "x\n",
  "empty lines": "\n",
  "forged ready": '{"t":"ready","protocol":1,"python":"3"}\n',
};

/** The attack suite's flood (test/security/attacks.ts). */
const floodCode = (line: string) => fill(floodAfterRun(line), { canary: "", hostHome: "", bridgePid: 0 });

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? Number.NaN;

async function measure(binary: string, line: string | undefined) {
  const transport = new StdioClientTransport({
    command: binary,
    args: [],
    env: bridgeEnv({ MCP_BRIDGE_RUNTIME: values.engine!, MCP_BRIDGE_LOG_LEVEL: "ERROR" }),
    stderr: "ignore",
  });
  const client = new Client({ name: "bench-flood", version: "0" });
  await client.connect(transport);
  const pid = transport.pid!;
  await client.callTool({ name: "run_python", arguments: { code: "1" } });
  if (line !== undefined) await client.callTool({ name: "run_python", arguments: { code: floodCode(line) } });
  const t0 = performance.now();
  const cpu0 = cpuMs(pid);
  const pings: number[] = [];
  let timeouts = 0;
  while (performance.now() - t0 < SECONDS * 1000) {
    const p0 = performance.now();
    const answered = await Promise.race([client.ping().then(() => true), Bun.sleep(2000).then(() => false)]);
    if (answered) pings.push(performance.now() - p0);
    else timeouts++;
    await Bun.sleep(20);
  }
  const cpu = (cpuMs(pid) - cpu0) / (performance.now() - t0);
  const next = (await Promise.race([
    client.callTool({ name: "run_python", arguments: { code: "'next'" } }),
    Bun.sleep(60_000).then(() => undefined),
  ])) as { content?: Array<{ text?: string }> } | undefined;
  const told = next?.content?.[0]?.text?.includes("so it was stopped") ?? false;
  process.kill(pid, "SIGKILL");
  await client.close().catch(() => {});
  return { p50: pct(pings, 0.5), p99: pct(pings, 0.99), max: Math.max(...pings), timeouts, cpu, told };
}

console.log(
  `flood from the sandbox, ${SECONDS}s each, engine ${values.engine}; budget: ${FRAME_BUDGET.framesPerSecond} frames, ${FRAME_BUDGET.bytesPerSecond / 1048576} MiB, ${FRAME_BUDGET.cpuMsPerSecond} ms CPU per second, ${FRAME_BUDGET.malformedFrames} malformed frames`,
);
console.log("binary | flood | ping p50 ms | p99 ms | max ms | pings over 2 s | bridge CPU (cores) | stopped and told");
for (const binary of values.binaries!.split(",")) {
  for (const [name, line] of [["none (floor)", undefined] as const, ...Object.entries(FLOODS)]) {
    const r = await measure(binary, line);
    console.log(
      `${binary} | ${name} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.max.toFixed(1)} | ${r.timeouts} | ${r.cpu.toFixed(2)} | ${line === undefined ? "-" : r.told ? "yes" : "no"}`,
    );
  }
}
process.exit(0);
