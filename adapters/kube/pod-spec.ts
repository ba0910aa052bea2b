/**
 * A sandbox as a pod: the same hardening the OCI engines get from adapters/oci-flags.ts, in the pod
 * spec's words. Each field is here on purpose; test/adapters/kubernetes.test.ts reads every one back
 * from the API server.
 *
 * What a pod spec cannot say, and where it is held instead:
 * - `--network none`: a pod always gets a network namespace from the CNI; a NetworkPolicy that selects
 *   every sandbox and allows nothing (networkPolicy() below) denies all traffic, and under gVisor the
 *   runtime is registered with --network=none (scripts/kube-up.sh), so the sandbox has no interface.
 * - `--pids-limit`: Kubernetes limits pids per pod only node-wide (kubelet `podPidsLimit`).
 * - `--ulimit`: no field; the runtime's defaults apply (the test cluster's runc wrapper sets them).
 * - `--log-driver none`: CRI always writes a container's stdout to its log on the node, and the
 *   protocol's frames pass there; the bridge's role has no `pods/log`, and the kubelet keeps 1 MiB.
 */
import type { ContainerSpec } from "../types.ts";
import { parseSize } from "../../src/config/env.ts";

/** The sandbox's container in the pod. */
export const SANDBOX_CONTAINER = "sandbox";
/** Annotation holding the spec's labels as given (label values cannot hold every character). */
export const LABELS_ANNOTATION = "io.mcp-code-exec.labels";
/** Every sandbox pod carries this label; the NetworkPolicy selects on it. */
export const SANDBOX_LABEL = "mcp-code-exec.sandbox.users.io/sandbox";
/** The NetworkPolicy that denies every sandbox all traffic. */
export const NETWORK_POLICY_NAME = "mcp-code-exec-sandbox-deny-all";

export interface PodOptions {
  /** RuntimeClass for gVisor pods (spec.ociRuntime runsc); the engine default otherwise. */
  gvisorRuntimeClass: string;
  /** `Localhost` profile file name under the kubelet's seccomp folder, or RuntimeDefault when absent. */
  seccompLocalhost?: string;
  /** Seconds the pod may run at most (a backstop behind the init's own lifetime cap). */
  activeDeadlineSeconds: number;
}

/** A label value for `value`: Kubernetes allows 63 of [A-Za-z0-9_.-], starting and ending alphanumeric. */
export function labelValue(value: string): string {
  let v = value.replace(/[^A-Za-z0-9_.-]/g, "_");
  if (v.length > 63) v = `${v.slice(0, 50)}-${simpleHash(value)}`;
  return v.replace(/^[^A-Za-z0-9]+/, "").replace(/[^A-Za-z0-9]+$/, "");
}

/**
 * Where our pod labels live. A SandboxClaim may only add labels under domains the agent-sandbox
 * controller allows, and its default allowlist is `sandbox.users.io` and its subdomains: under this
 * one, claims work on any cluster without configuring the controller.
 */
export const LABEL_DOMAIN = "mcp-code-exec.sandbox.users.io";

/** A label key for `key`: a bare name (the ContainerSpec's `io.mcp-code-exec…`) goes under LABEL_DOMAIN. */
export function labelKey(key: string): string {
  const slash = key.lastIndexOf("/");
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  const prefix = slash >= 0 ? key.slice(0, slash) : LABEL_DOMAIN;
  return `${prefix}/${labelValue(name)}`;
}

/** `key=value` (a ContainerSpec label) as a label selector term. */
export function labelSelector(term: string): string {
  const eq = term.indexOf("=");
  return eq < 0 ? labelKey(term) : `${labelKey(term.slice(0, eq))}=${labelValue(term.slice(eq + 1))}`;
}

function simpleHash(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, "0");
}

/** Kubernetes quantity for a docker-style size ("512m" means MiB there, milli-bytes here). */
export function bytesQuantity(size: string): string {
  return String(parseSize(size));
}

/** The pod's metadata (labels and annotations) for `spec`. */
export function podMetadata(spec: ContainerSpec): { labels: Record<string, string>; annotations: Record<string, string> } {
  const labels: Record<string, string> = { [SANDBOX_LABEL]: "1" };
  for (const [k, v] of Object.entries(spec.labels)) labels[labelKey(k)] = labelValue(v);
  return { labels, annotations: { [LABELS_ANNOTATION]: JSON.stringify(spec.labels) } };
}

/** The pod spec for `spec`. */
export function podSpec(spec: ContainerSpec, opts: PodOptions): Record<string, unknown> {
  if (spec.mounts?.length)
    throw new Error("the kubernetes engine mounts no host folders into a sandbox (MCP_BRIDGE_WORKSPACE is for local engines)");
  const [uid, gid] = spec.user.split(":").map(Number);
  const seccompProfile = opts.seccompLocalhost
    ? { type: "Localhost", localhostProfile: opts.seccompLocalhost }
    : { type: "RuntimeDefault" };
  const gvisor = spec.ociRuntime !== undefined && /(^|\/)runsc$/.test(spec.ociRuntime);
  return {
    restartPolicy: "Never",
    automountServiceAccountToken: false,
    enableServiceLinks: false,
    hostNetwork: false,
    hostPID: false,
    hostIPC: false,
    hostname: "sandbox",
    terminationGracePeriodSeconds: 0,
    activeDeadlineSeconds: opts.activeDeadlineSeconds,
    ...(gvisor ? { runtimeClassName: opts.gvisorRuntimeClass } : {}),
    securityContext: {
      runAsUser: uid,
      runAsGroup: gid ?? uid,
      runAsNonRoot: true,
      seccompProfile,
    },
    containers: [
      {
        name: SANDBOX_CONTAINER,
        image: spec.image,
        imagePullPolicy: "Never",
        command: spec.command,
        env: Object.entries(spec.env).map(([name, value]) => ({ name, value })),
        workingDir: "/tmp",
        stdin: true,
        stdinOnce: false,
        tty: false,
        securityContext: {
          allowPrivilegeEscalation: false,
          privileged: false,
          readOnlyRootFilesystem: true,
          runAsNonRoot: true,
          capabilities: { drop: ["ALL"] },
          seccompProfile,
        },
        resources: {
          limits: { cpu: String(spec.cpus), memory: bytesQuantity(spec.memory) },
          // Small requests: sessions mostly wait for the model; the limits hold what one may use.
          requests: { cpu: "10m", memory: "32Mi" },
        },
        volumeMounts: [
          { name: "tmp", mountPath: "/tmp" },
          { name: "shm", mountPath: "/dev/shm" },
        ],
      },
    ],
    volumes: [
      { name: "tmp", emptyDir: { medium: "Memory", sizeLimit: bytesQuantity(spec.tmpfsSize) } },
      { name: "shm", emptyDir: { medium: "Memory", sizeLimit: bytesQuantity(spec.shmSize) } },
    ],
  };
}

/** The NetworkPolicy that selects every sandbox pod and allows it nothing, in or out. */
export function networkPolicy(namespace: string): Record<string, unknown> {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name: NETWORK_POLICY_NAME, namespace },
    spec: { podSelector: { matchLabels: { [SANDBOX_LABEL]: "1" } }, policyTypes: ["Ingress", "Egress"] },
  };
}
