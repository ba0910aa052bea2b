/**
 * Two bridges on one cluster, as two replicas of the Deployment are (real bridge processes, real test
 * cluster from scripts/kube-up.sh): one is killed outright (SIGKILL: no chance to clean up) while both
 * are busy, and its sessions go on through the other with their state. The other bridge is asked for
 * handles it never made; it finds their pods by the handle and principal they carry, attaches to them
 * and takes over their leases, so the pods outlive the dead bridge's lease too.
 */
import { beforeAll, expect, test } from "bun:test";
import type { KubeApi } from "../../adapters/kube/api.ts";
import { NAME_LABEL, type Pod } from "../../adapters/kube/sandboxes.ts";
import { labelKey } from "../../adapters/kube/pod-spec.ts";
import { SESSION_LABEL } from "../../src/session/container-spec.ts";
import { codeStarted, SAY_STARTED, startBridge } from "../support/bridge.ts";
import { waitFor } from "../support/engines.ts";
import { KUBE_LEASE_SECONDS, KUBE_NAMESPACE, keepBusy, kubeEnv, requireCluster } from "../support/kube.ts";

let api: KubeApi;
beforeAll(async () => {
  api = await requireCluster();
});

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const env = { ...kubeEnv(), MCP_BRIDGE_RUNTIME: "kubernetes", MCP_BRIDGE_PREWARM: "0" };

/** The Sandbox object (and its lease) of the session `handle`. */
async function sandboxOf(handle: string): Promise<{ name: string; shutdownTime: string }> {
  const selector = encodeURIComponent(`${labelKey(SESSION_LABEL)}=${handle}`);
  const pods = await api.get<{ items: Pod[] }>(`/api/v1/namespaces/${KUBE_NAMESPACE}/pods?labelSelector=${selector}`);
  const name = pods?.items[0]?.metadata.labels?.[NAME_LABEL];
  if (!name) throw new Error(`no pod carries session ${handle}`);
  const sandbox = await api.get<{ spec: { shutdownTime: string } }>(
    `/apis/agents.x-k8s.io/v1beta1/namespaces/${KUBE_NAMESPACE}/sandboxes/${name}`,
  );
  if (!sandbox) throw new Error(`sandbox ${name} is gone`);
  return { name, shutdownTime: sandbox.spec.shutdownTime };
}

test("a bridge killed outright under load: its sessions go on through the other bridge with their state, past its lease", async () => {
  const a = await startBridge(env);
  const b = await startBridge(env);
  try {
    // Two sessions on A: one idle with state, one in the middle of a run when A dies.
    const idle = (await a.run("x = 42\n'set'", { session: "new" })).structured.session as string;
    const busy = (await a.run("y = 7\n'set'", { session: "new" })).structured.session as string;
    expect(idle).toMatch(/^s_/);
    expect(busy).toMatch(/^s_/);
    // B's own session under load the whole time: every call must succeed.
    const own = (await b.run("n = 0\n'ready'", { session: "new" })).structured.session as string;
    const load = keepBusy(b, own);

    const { onprogress, started } = codeStarted();
    const inFlight = a.run(`${SAY_STARTED}\nimport time\ntime.sleep(3)\ny += 1`, { session: busy, onprogress }).catch(() => undefined);
    await started;
    process.kill(a.pid, "SIGKILL");
    const killedAt = Date.now();
    void inFlight;

    // B was never asked for these handles: it adopts their pods, state and all.
    const x = await b.run("x", { session: idle });
    expect(x.isError).toBe(false);
    expect(x.structured.value).toBe("42");
    expect(x.structured.session).toBe(idle);
    // The run A left behind finished in the pod (y became 8), then B's run went on.
    const y = await b.run("y", { session: busy });
    expect(y.isError).toBe(false);
    expect(y.structured.value).toBe("8");
    expect((await b.run("x += 1\nx", { session: idle })).structured.value).toBe("43");

    // B holds their leases now: each lies a whole lease past the kill, where A's ran out at the latest.
    // shutdownTime is written in whole seconds (RFC 3339): A's, renewed before the kill, is at most the
    // kill's second plus the lease; B's, renewed after it, at least that.
    const lastOfA = killedAt + KUBE_LEASE_SECONDS * 1000;
    const lastOfAInSeconds = Math.floor(lastOfA / 1000) * 1000;
    for (const handle of [idle, busy]) expect(Date.parse((await sandboxOf(handle)).shutdownTime)).toBeGreaterThanOrEqual(lastOfAInSeconds);
    // And the pods are still there once A's lease would have ended (plus the controller's resync).
    await Bun.sleep(Math.max(0, lastOfA + 5000 - Date.now()));
    expect((await b.run("x", { session: idle })).structured.value).toBe("43");
    expect((await b.run("y", { session: busy })).structured.value).toBe("8");

    const { errors, calls } = await load.stop();
    expect(errors).toEqual([]);
    expect(calls).toBeGreaterThan(5);
  } finally {
    await a.close().catch(() => {});
    await b.close();
  }
}, 180_000);

test("a bridge stopped with SIGTERM (a rolling update) leaves its sessions' pods; a bridge started after it adopts them", async () => {
  const a = await startBridge(env);
  const handle = (await a.run("x = 'kept'\n'set'", { session: "new" })).structured.session as string;
  const { name } = await sandboxOf(handle);
  process.kill(a.pid, "SIGTERM");
  expect(await waitFor(async () => !isAlive(a.pid), 20_000)).toBe(true);
  await a.close().catch(() => {});
  const b = await startBridge(env);
  try {
    const r = await b.run("x", { session: handle });
    expect(r.isError).toBe(false);
    expect(r.structured.value).toBe("'kept'");
    expect((await sandboxOf(handle)).name).toBe(name);
  } finally {
    await b.close();
  }
}, 120_000);

test("a handle no bridge's sandbox carries is still SessionNotFound (nothing is adopted)", async () => {
  const b = await startBridge(env);
  try {
    const r = await b.run("1", { session: "s_AAAAAAAAAAAAAAAAAAAAAA" });
    expect(r.structured.error).toMatchObject({ type: "SessionNotFound" });
  } finally {
    await b.close();
  }
}, 60_000);
