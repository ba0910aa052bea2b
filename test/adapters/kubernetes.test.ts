/**
 * The adapter contract on the kubernetes engine, against the real test cluster (scripts/kube-up.sh):
 * runc and gVisor pods. The hardening is read back from the API server: every field of the pod that
 * stands for one of the OCI engines' flags, and the NetworkPolicy that selects it.
 */
import { beforeAll, expect, test } from "bun:test";
import type { ContainerSpec } from "../../adapters/types.ts";
import { KubeApi } from "../../adapters/kube/api.ts";
import { NETWORK_POLICY_NAME, SANDBOX_LABEL } from "../../adapters/kube/pod-spec.ts";
import { NAME_LABEL, type Pod } from "../../adapters/kube/sandboxes.ts";
import { IMAGE } from "../support/env.ts";
import { KUBE_NAMESPACE, kubeAdapter, kubeEnv, requireCluster } from "../support/kube.ts";
import { adapterContract } from "./contract.ts";

let api: KubeApi;
beforeAll(async () => {
  api = await requireCluster();
});

test("the test cluster is up", () => {
  expect(api).toBeDefined();
});

/** What the pod of sandbox `spec` lacks of the hardening (none: []). */
async function hardeningProblems(spec: ContainerSpec): Promise<string[]> {
  const pods = await api.get<{ items: Pod[] }>(
    `/api/v1/namespaces/${KUBE_NAMESPACE}/pods?labelSelector=${encodeURIComponent(`${NAME_LABEL}=${spec.name}`)}`,
  );
  const pod = pods?.items[0];
  if (!pod) return ["no pod"];
  const s = pod.spec as Record<string, any>;
  const c = s.containers[0];
  const problems: string[] = [];
  const want = (ok: boolean, what: string) => ok || problems.push(what);
  want(s.automountServiceAccountToken === false, "automountServiceAccountToken: false");
  want(
    !JSON.stringify(s.volumes).includes("serviceAccountToken") && !JSON.stringify(s.volumes).includes("kube-api-access"),
    "no service-account token volume",
  );
  want(s.securityContext?.runAsUser === 65534 && s.securityContext?.runAsNonRoot === true, "runAsUser 65534, runAsNonRoot");
  want(c.securityContext?.readOnlyRootFilesystem === true, "readOnlyRootFilesystem");
  want(c.securityContext?.allowPrivilegeEscalation === false, "allowPrivilegeEscalation: false");
  want(JSON.stringify(c.securityContext?.capabilities?.drop) === '["ALL"]', "capabilities drop ALL");
  want(c.securityContext?.seccompProfile?.type === "Localhost", "a Localhost seccomp profile");
  want(c.resources?.limits?.memory === String(256 * 1024 * 1024) && c.resources?.limits?.cpu === "1", "cpu and memory limits");
  want(
    s.volumes.some((v: any) => v.name === "tmp" && v.emptyDir?.medium === "Memory" && v.emptyDir?.sizeLimit === String(16 * 1024 * 1024)),
    "a sized in-memory /tmp",
  );
  want(!s.hostNetwork && !s.hostPID && !s.hostIPC, "no host namespaces");
  want(c.imagePullPolicy === "Never", "imagePullPolicy Never");
  want(pod.metadata.labels?.[SANDBOX_LABEL] === "1", `label ${SANDBOX_LABEL}`);
  if (spec.ociRuntime === "runsc") want(s.runtimeClassName === "gvisor", "runtimeClassName gvisor");
  const policy = await api.get<{ spec: Record<string, any> }>(
    `/apis/networking.k8s.io/v1/namespaces/${KUBE_NAMESPACE}/networkpolicies/${NETWORK_POLICY_NAME}`,
  );
  want(
    policy?.spec.podSelector?.matchLabels?.[SANDBOX_LABEL] === "1" &&
      JSON.stringify(policy.spec.policyTypes) === '["Ingress","Egress"]' &&
      !policy.spec.egress?.length &&
      !policy.spec.ingress?.length,
    "a NetworkPolicy denying all traffic selects it",
  );
  return problems;
}

// gVisor pods run under gVisor's own containerd shim (containerd-shim-runsc-v1, built by
// scripts/kube-build.sh from the module proxy) through the RuntimeClass gvisor.
for (const [name, spec] of [
  ["runc", {}],
  ["gVisor", { ociRuntime: "runsc" }],
] as const) {
  adapterContract(`kubernetes, ${name} (real cluster)`, {
    make: () => kubeAdapter(),
    makeMissing: () => kubeAdapter({ KUBECONFIG: "/nonexistent/kubeconfig" }),
    image: IMAGE,
    engineEnv: kubeEnv(),
    real: true,
    missing: /kubeconfig not found/,
    spec,
    hardeningProblems,
  });
}
