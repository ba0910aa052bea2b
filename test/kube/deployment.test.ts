/**
 * The bridge as deploy/ runs it: scripts/kube-up.sh applies deploy/ (through scripts/kube/test-cluster)
 * to the test cluster, two replicas of the Deployment serving HTTP with a token, sandboxes claimed from
 * the warm pool. A session is made through one replica; that replica's pod is deleted at once (grace
 * 0) while the other serves its own session in a loop; the session goes on through the other replica
 * with its state, and the loop sees no error. Real cluster, real MCP client over Streamable HTTP, each
 * replica reached at its pod's address (the single node runs no kube-proxy for the Service).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { KubeApi } from "../../adapters/kube/api.ts";
import type { Pod } from "../../adapters/kube/sandboxes.ts";
import { legacyClient } from "../support/http-bridge.ts";
import { waitFor } from "../support/engines.ts";
import { KUBECONFIG, keepBusy, requireCluster } from "../support/kube.ts";

const NS = "mcp-code-exec";
const PODS = `/api/v1/namespaces/${NS}/pods`;
const DEPLOYMENT = `/apis/apps/v1/namespaces/${NS}/deployments/mcp-code-exec-bridge`;
/** The sign-in kube-up.sh made for the deployed bridge (MCP_BRIDGE_HTTP_TOKENS, user "ci"). */
const TOKEN = () => readFileSync(join(dirname(KUBECONFIG), "bridge-token"), "utf8").trim();

let api: KubeApi;
beforeAll(async () => {
  api = await requireCluster();
});
// The Deployment makes the deleted replica again: later suites find two, as kube-up.sh left them.
afterAll(async () => {
  await waitFor(async () => (await available()) >= 2, 120_000, 1000);
});

async function available(): Promise<number> {
  const d = await api.get<{ status?: { availableReplicas?: number } }>(DEPLOYMENT);
  return d?.status?.availableReplicas ?? 0;
}

async function replicas(): Promise<Pod[]> {
  const list = await api.get<{ items: Pod[] }>(
    `${PODS}?labelSelector=${encodeURIComponent("app.kubernetes.io/name=mcp-code-exec-bridge")}`,
  );
  return (list?.items ?? []).filter(
    (p) => !p.metadata.deletionTimestamp && p.status?.phase === "Running" && (p.status as { podIP?: string }).podIP,
  );
}

const url = (pod: Pod) => `http://${(pod.status as { podIP: string }).podIP}:8931/mcp`;
const handleIn = (text: string) => /\[session\] (s_[A-Za-z0-9_-]{22})/.exec(text)?.[1];

test("one replica of the Deployment deleted under load: its session goes on through the other with its state", async () => {
  expect(await waitFor(async () => (await available()) >= 2, 120_000, 1000)).toBe(true);
  const [podA, podB] = await replicas();
  expect(podB).toBeDefined();
  const a = await legacyClient(url(podA!), TOKEN());
  const b = await legacyClient(url(podB!), TOKEN());
  try {
    const made = await a.run("x = 42\n'set'", { session: "new" });
    expect(made.isError).toBe(false);
    const handle = handleIn(made.text);
    expect(handle).toBeDefined();

    const own = handleIn((await b.run("n = 0\n'ready'", { session: "new" })).text);
    expect(own).toBeDefined();
    const load = keepBusy(b, own!);

    await load.running; // B is busy when A goes
    await api.delete(`${PODS}/${podA!.metadata.name}`, 0);
    const x = await b.run("x", { session: handle });
    expect(x.isError).toBe(false);
    expect(x.text).toMatch(/\b42\b/);
    const y = await b.run("x += 1\nx", { session: handle });
    expect(y.text).toMatch(/\b43\b/);

    const { errors, calls } = await load.stop();
    expect(errors).toEqual([]);
    expect(calls).toBeGreaterThanOrEqual(2);
  } finally {
    await a.close().catch(() => {});
    await b.close();
    // The cluster outlives a test run (CI on the same machine, a second run here): B keeps the sessions
    // this run made, and a few runs would reach the user's session limit on it. Its replacement starts
    // with none; the next run waits for two replicas, as this one did.
    await api.delete(`${PODS}/${podB!.metadata.name}`, 0).catch(() => {});
  }
}, 240_000);
