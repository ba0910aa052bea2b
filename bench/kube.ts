#!/usr/bin/env bun
/**
 * The kubernetes engine on the test cluster (scripts/kube-up.sh), each figure beside podman's on the
 * same node in the same run, through the compiled bridge and a real MCP client:
 *   bun bench/kube.ts [--rounds 10] [--warm 200] [--soak-seconds 300] [--soak-sessions 20] [--only cold,claim,warm,soak]
 * - cold: a new session's first `print(1)` (a pod made, scheduled, started, attached, the entrypoint
 *   sent) against podman's (a container started): p50 and p95;
 * - claim: the same from a warm pool (a SandboxClaim handed a running pod): p50 and p95;
 * - warm: `print(1)` in a running session, through pods/attach against podman's stdio;
 * - soak: N sessions each running 1-s jobs back to back for S seconds: calls done and errors.
 */
import { parseArgs } from "node:util";
import { KubeApi } from "../adapters/kube/api.ts";
import { loadCredentials } from "../adapters/kube/credentials.ts";
import { sandboxManifests } from "../scripts/kube/manifests.ts";
import { BINARY } from "../test/support/binary.ts";
import { KUBE_NAMESPACE, kubeEnv, requireCluster, KUBECONFIG } from "../test/support/kube.ts";
import { parse as parseYaml } from "yaml";
import { conditions, HEADER, row, startBridge, summarize } from "./support.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    rounds: { type: "string", default: "10" },
    warm: { type: "string", default: "200" },
    "soak-seconds": { type: "string", default: "300" },
    "soak-sessions": { type: "string", default: "20" },
    only: { type: "string", default: "cold,claim,warm,soak" },
  },
});
const ROUNDS = Number(values.rounds);
const only = new Set(values.only!.split(","));
const POOL = "bench-warm";
const common = { MCP_BRIDGE_MAX_SESSIONS_PER_USER: "64", MCP_BRIDGE_MAX_CONCURRENT_RUNS: "64", MCP_BRIDGE_PREWARM: "0" };
const engines: Record<string, Record<string, string>> = {
  podman: { ...common, MCP_BRIDGE_RUNTIME: "podman" },
  kubernetes: { ...common, ...kubeEnv(), MCP_BRIDGE_RUNTIME: "kubernetes" },
};

await requireCluster();
console.log(`bench/kube.ts: ${conditions()}`);
const p = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((q / 100) * xs.length) - 1)]!;
const line = (label: string, xs: number[]) => `${row(label, summarize(xs))} p95 ${p(xs, 95).toFixed(0)}`;

type Bridge = Awaited<ReturnType<typeof startBridge>>;
async function newSessionCall(b: Bridge): Promise<number> {
  const t = performance.now();
  const r = (await b.client.callTool({ name: "run_python", arguments: { code: "print(1)", session: "new" } })) as {
    isError?: boolean;
    content: Array<{ text?: string }>;
  };
  if (r.isError) throw new Error(`call failed: ${r.content[0]?.text}`);
  return performance.now() - t;
}

if (only.has("cold")) {
  console.log("\ncold: a new session's first print(1) (ms)");
  console.log(HEADER);
  for (const [name, env] of Object.entries(engines)) {
    const b = await startBridge(BINARY, env);
    await newSessionCall(b); // the engine's first use (probe, image) is not a session's cold start
    const xs: number[] = [];
    for (let i = 0; i < ROUNDS; i++) xs.push(await newSessionCall(b));
    console.log(line(`${name}: new session, first call`, xs));
    await b.close();
  }
}

if (only.has("claim")) {
  const api = new KubeApi(loadCredentials({ KUBECONFIG }));
  const docs = sandboxManifests(3)
    .split(/^---$/m)
    .map((d) => parseYaml(d) as { kind?: string; metadata: { name: string; namespace: string }; spec: Record<string, unknown> } | null)
    .filter((d): d is NonNullable<typeof d> => !!d?.kind && d.kind !== "NetworkPolicy");
  const base = `/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/${KUBE_NAMESPACE}`;
  for (const d of docs) {
    d.metadata.namespace = KUBE_NAMESPACE;
    if (d.kind === "SandboxWarmPool") d.metadata.name = POOL;
    const path = `${base}/${d.kind === "SandboxTemplate" ? "sandboxtemplates" : "sandboxwarmpools"}`;
    await api.delete(`${path}/${d.metadata.name}`);
    await api.create(path, d);
  }
  const ready = async () => {
    for (;;) {
      const pool = await api.get<{ status?: { readyReplicas?: number } }>(`${base}/sandboxwarmpools/${POOL}`);
      if ((pool?.status?.readyReplicas ?? 0) >= 1) return;
      await Bun.sleep(200);
    }
  };
  const b = await startBridge(BINARY, { ...engines.kubernetes!, MCP_BRIDGE_KUBE_WARM_POOL: POOL });
  const xs: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    await ready(); // a pod is waiting: what is measured is the claim, not the pool's refill
    xs.push(await newSessionCall(b));
  }
  console.log("\nclaim: a new session's first print(1) from the warm pool (ms)");
  console.log(HEADER);
  console.log(line("kubernetes: warm-pool claim, first call", xs));
  await b.close();
  await api.delete(`${base}/sandboxwarmpools/${POOL}`);
}

if (only.has("warm")) {
  console.log(`\nwarm: print(1) in a running session, ${values.warm} calls (ms)`);
  console.log(HEADER);
  for (const [name, env] of Object.entries(engines)) {
    const b = await startBridge(BINARY, env);
    for (let i = 0; i < 20; i++) await b.call();
    const xs: number[] = [];
    for (let i = 0; i < Number(values.warm); i++) xs.push(await b.call());
    console.log(line(`${name}: warm print(1)`, xs));
    await b.close();
  }
}

if (only.has("soak")) {
  const n = Number(values["soak-sessions"]);
  const seconds = Number(values["soak-seconds"]);
  const b = await startBridge(BINARY, engines.kubernetes!);
  const handles: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = (await b.client.callTool({ name: "run_python", arguments: { code: "import time", session: "new" } })) as {
      structuredContent?: { session?: string };
    };
    handles.push(String(r.structuredContent?.session));
  }
  let done = 0;
  const errors: string[] = [];
  const until = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    handles.map(async (session) => {
      while (performance.now() < until) {
        const r = (await b.client.callTool({ name: "run_python", arguments: { code: "time.sleep(1)\n1", session } }, undefined, {
          timeout: 120_000,
        })) as {
          isError?: boolean;
          content: Array<{ text?: string }>;
        };
        if (r.isError) errors.push(r.content[0]?.text ?? "?");
        else done++;
      }
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  console.log(
    `\nsoak: ${n} sessions running 1-s jobs for ${seconds} s: ${done} calls in ${wall.toFixed(0)} s (${(done / wall).toFixed(1)}/s; ideal ${n}/s), ${errors.length} errors; ${conditions()}`,
  );
  for (const e of errors.slice(0, 5)) console.log(`  error: ${e.slice(0, 300)}`);
  await b.close();
}
