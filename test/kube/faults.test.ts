/**
 * Faults on the kubernetes engine, against the real test cluster (scripts/kube-up.sh):
 * - a session's pod deleted in the middle of a run: that call and the next say so with typed errors
 *   within 30 s, the bridge's other sessions see nothing, and a new session works within 60 s;
 * - the bridge killed outright: its sandboxes' leases run out and agent-sandbox deletes their pods.
 * The failover between two bridge replicas is test/kube/replicas.test.ts.
 */
import { beforeAll, expect, test } from "bun:test";
import type { KubeApi } from "../../adapters/kube/api.ts";
import { startBridge } from "../support/bridge.ts";
import { listOurContainers, waitFor } from "../support/engines.ts";
import { KUBE_LEASE_SECONDS, KUBE_NAMESPACE, kubeEnv, requireCluster } from "../support/kube.ts";

let api: KubeApi;
beforeAll(async () => {
  api = await requireCluster();
});

const mine = async (pid: number) => (await listOurContainers("kubernetes")).filter((c) => c.owner.endsWith(`:${pid}`));

test("a session's pod deleted mid-run: typed errors for that call and the next, other sessions untouched, a new session works", async () => {
  const bridge = await startBridge({ ...kubeEnv(), MCP_BRIDGE_RUNTIME: "kubernetes", MCP_BRIDGE_PREWARM: "0" });
  try {
    const a = await bridge.run("x = 1\n'a'", { session: "new" });
    const lost = a.structured.session as string;
    expect(lost).toMatch(/^s_/);
    const [pod] = await mine(bridge.pid);
    expect(pod).toBeDefined();
    const b = await bridge.run("y = 2\n'b'", { session: "new" });
    const kept = b.structured.session as string;
    expect(kept).not.toBe(lost);

    const pending = bridge.run("import time\ntime.sleep(90)", { session: lost, timeout: 100 });
    const deletedAt = performance.now();
    await api.delete(`/api/v1/namespaces/${KUBE_NAMESPACE}/pods/${pod!.name}`);
    const during = await pending;
    const duringMs = performance.now() - deletedAt;
    expect(during.structured.error).toMatchObject({ type: "SandboxExited" });
    expect(during.text).toContain(`its pod ${pod!.name} was deleted`);
    expect(duringMs).toBeLessThan(30_000);

    const next = await bridge.run("x", { session: lost });
    expect(next.structured.error).toMatchObject({ type: "SessionLost" });
    expect(performance.now() - deletedAt).toBeLessThan(30_000);

    // The other session kept its state, and a new one starts.
    expect((await bridge.run("y", { session: kept })).structured.value).toBe("2");
    const fresh = await bridge.run("1 + 1", { session: "new" });
    expect(fresh.structured.value).toBe("2");
    expect(performance.now() - deletedAt).toBeLessThan(60_000);
  } finally {
    await bridge.close();
  }
}, 120_000);

test(`the bridge killed outright: no pod outlives its lease (${KUBE_LEASE_SECONDS} s here)`, async () => {
  const bridge = await startBridge({ ...kubeEnv(), MCP_BRIDGE_RUNTIME: "kubernetes", MCP_BRIDGE_PREWARM: "0" });
  await bridge.run("'one'", { session: "new" });
  await bridge.run("'two'", { session: "new" });
  expect((await mine(bridge.pid)).length).toBe(2);
  const pid = bridge.pid;
  process.kill(pid, "SIGKILL");
  const killedAt = performance.now();
  // The lease, plus the controller's own resync: it deletes at the shutdown time, not before.
  expect(await waitFor(async () => (await mine(pid)).length === 0, (KUBE_LEASE_SECONDS + 20) * 1000)).toBe(true);
  const goneMs = performance.now() - killedAt;
  expect(goneMs).toBeGreaterThan(0);
  await bridge.close().catch(() => {});
}, 90_000);
