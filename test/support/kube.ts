/**
 * The test cluster (scripts/kube-up.sh, which .ci/run starts): where its kubeconfig is, the namespace
 * the tests use, and a clear failure when it is not up. Tests that need it fail, never skip: a suite
 * that passes because no cluster was there would prove nothing.
 */
import { existsSync } from "node:fs";
import kubernetes from "../../adapters/kubernetes.ts";
import { KubeApi } from "../../adapters/kube/api.ts";
import { loadCredentials } from "../../adapters/kube/credentials.ts";
import { engineEnv } from "../../src/engines/registry.ts";

export const KUBECONFIG = process.env.MCP_TEST_KUBECONFIG ?? "/var/lib/mcp-code-exec/kube/admin.kubeconfig";
export const KUBE_NAMESPACE = "mcp-code-exec-test";
/** Short leases in tests: a sandbox left behind by a killed bridge is gone within this many seconds. */
export const KUBE_LEASE_SECONDS = 12;

/** The environment a bridge or adapter under test gets to use the test cluster. */
export function kubeEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...engineEnv(process.env),
    KUBECONFIG,
    MCP_BRIDGE_KUBE_NAMESPACE: KUBE_NAMESPACE,
    MCP_BRIDGE_KUBE_LEASE: String(KUBE_LEASE_SECONDS),
    ...extra,
  };
}

/** Throws, saying how to fix it, when the test cluster does not answer. */
export async function requireCluster(): Promise<KubeApi> {
  const how = "bring it up with `bash scripts/kube-up.sh` (as root; .ci/run does this before the suite)";
  if (!existsSync(KUBECONFIG)) throw new Error(`the test cluster is not up: ${KUBECONFIG} does not exist; ${how}`);
  const api = new KubeApi(loadCredentials({ KUBECONFIG }));
  try {
    await api.request("GET", "/version", { timeoutMs: 5000 });
  } catch (err) {
    throw new Error(`the test cluster is not up: ${(err as Error).message}; ${how}`);
  }
  return api;
}

/** A kubernetes adapter for the test cluster. */
export function kubeAdapter(extra: Record<string, string> = {}) {
  return kubernetes({ env: kubeEnv(extra) });
}

/**
 * A session kept busy with short runs (each adds one to `n`, which it must hold) until `stop()`, which
 * settles with the runs' errors and count; `running` settles once the first run is back.
 */
export function keepBusy(
  client: { run(code: string, opts: { session: string }): Promise<{ isError?: boolean; text: string }> },
  session: string,
): { running: Promise<void>; stop: () => Promise<{ errors: string[]; calls: number }> } {
  let stopped = false;
  const running = Promise.withResolvers<void>();
  const done = (async () => {
    const errors: string[] = [];
    let calls = 0;
    while (!stopped) {
      const r = await client.run("import time\ntime.sleep(0.2)\nn += 1\nn", { session });
      if (r.isError) errors.push(r.text);
      calls++;
      running.resolve();
    }
    return { errors, calls };
  })();
  return {
    running: running.promise,
    stop: () => {
      stopped = true;
      return done;
    },
  };
}
