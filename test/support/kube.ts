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
