/**
 * Kubernetes: each sandbox is a pod, made through kubernetes-sigs/agent-sandbox (a Sandbox, or a
 * SandboxClaim on a warm pool) and reached through `pods/attach` over a WebSocket with the same framed
 * protocol as every other engine (adapters/kube/attach.ts). The bridge talks to the API server over
 * HTTPS itself (adapters/kube/api.ts): no kubectl on the hot path.
 *
 * Settings (the bridge's environment): KUBECONFIG or in-cluster credentials; MCP_BRIDGE_KUBE_NAMESPACE,
 * MCP_BRIDGE_KUBE_WARM_POOL, MCP_BRIDGE_KUBE_RUNTIME_CLASS, MCP_BRIDGE_KUBE_SECCOMP,
 * MCP_BRIDGE_KUBE_LEASE (src/config/env-vars.ts declares each). docs/kubernetes.md is the user's page.
 */
import { envSetting } from "../src/config/env.ts";
import { EngineUnavailableError, BridgeError } from "../src/errors.ts";
import type { ChildProcess } from "../src/host/process.ts";
import type { AdapterFactory, ContainerSpec, ContainerSummary, EngineInfo } from "./types.ts";
import { KubeApi, KubeApiError } from "./kube/api.ts";
import { ATTACH_PROTOCOLS, attachedProcess } from "./kube/attach.ts";
import { loadCredentials, NoCredentials, type KubeCredentials } from "./kube/credentials.ts";
import { Leases } from "./kube/leases.ts";
import {
  LABELS_ANNOTATION,
  NETWORK_POLICY_NAME,
  SANDBOX_CONTAINER,
  labelSelector,
  networkPolicy,
  podMetadata,
  podSpec,
  type PodOptions,
} from "./kube/pod-spec.ts";
import { NAME_LABEL, Workloads, type Pod } from "./kube/sandboxes.ts";
import { removeSandboxSync } from "./kube/remove-sync.ts";

const START_TIMEOUT_MS = 60_000;

export interface KubeSettings {
  namespace?: string;
  warmPool?: string;
  runtimeClass: string;
  /** A Localhost seccomp profile (path under the kubelet's seccomp folder), or "RuntimeDefault". */
  seccomp: string;
  leaseSeconds: number;
}

/**
 * The engine's settings, each declared in src/config/env-vars.ts (loadConfig has already refused a bad
 * value by the time an adapter is made; here a bad one falls back to its default).
 */
export function kubeSettings(env: Record<string, string | undefined>): KubeSettings {
  return {
    namespace: envSetting(env, "MCP_BRIDGE_KUBE_NAMESPACE").value,
    warmPool: envSetting(env, "MCP_BRIDGE_KUBE_WARM_POOL").value,
    runtimeClass: envSetting(env, "MCP_BRIDGE_KUBE_RUNTIME_CLASS").value ?? "gvisor",
    seccomp: envSetting(env, "MCP_BRIDGE_KUBE_SECCOMP").value ?? "mcp-code-exec/seccomp.json",
    leaseSeconds: envSetting(env, "MCP_BRIDGE_KUBE_LEASE").value ?? 60,
  };
}

const kubernetes: AdapterFactory = (options) => {
  const settings = kubeSettings(options.env);
  let probed: Promise<EngineInfo> | undefined;
  let state: { api: KubeApi; creds: KubeCredentials; namespace: string; workloads: Workloads; leases: Leases } | undefined;
  const log = options.log;

  const connect = () => {
    if (state) return state;
    let creds: KubeCredentials;
    try {
      creds = loadCredentials(options.binary ? { ...options.env, KUBECONFIG: options.binary } : options.env);
    } catch (err) {
      if (err instanceof NoCredentials)
        throw new EngineUnavailableError(
          "kubernetes",
          `kubeconfig not found: ${err.message}`,
          "set KUBECONFIG to a kubeconfig file, or run the bridge in a pod with a service account; else unset MCP_BRIDGE_RUNTIME",
        );
      throw new BridgeError("ENGINE_FAILED", (err as Error).message, {
        source: "kubernetes",
        hint: "fix the kubeconfig, or set KUBECONFIG to another",
      });
    }
    const api = new KubeApi(creds);
    const namespace = settings.namespace ?? creds.namespace ?? "default";
    const leases = new Leases(api, settings.leaseSeconds, (name, why) => log?.warn("sandbox lost", { name, why }));
    state = { api, creds, namespace, workloads: new Workloads(api, namespace, leases), leases };
    return state;
  };

  const podOptions = (spec: ContainerSpec): PodOptions => ({
    gvisorRuntimeClass: settings.runtimeClass,
    seccompLocalhost:
      settings.seccomp === "RuntimeDefault"
        ? undefined
        : isGvisorSpec(spec)
          ? settings.seccomp.replace(/\.json$/, "-gvisor.json")
          : settings.seccomp,
    // The init's own lifetime cap ends the sandbox first; this is the backstop (argv[5] is the cap).
    activeDeadlineSeconds: Number(spec.command[4] ?? 28_800) + 60,
  });

  /** Sandboxes let go at shutdown (leave): their attachment's end does not remove them. */
  const left = new Set<string>();

  /** Attach to the sandbox container of `pod` (sandbox `name`): its stdin, stdout and stderr as a ChildProcess. */
  const attach = (name: string, pod: Pod): ChildProcess => {
    const { api, workloads, namespace } = connect();
    const podName = pod.metadata.name;
    const socket = api.webSocket(
      `/api/v1/namespaces/${namespace}/pods/${podName}/attach?container=${SANDBOX_CONTAINER}&stdin=true&stdout=true&stderr=true`,
      ATTACH_PROTOCOLS,
    );
    return attachedProcess({
      socket,
      exitCode: async () => {
        // Let go on purpose (leave): the sandbox stays for another bridge to adopt within its lease.
        if (left.delete(name)) return { code: null, why: "the bridge let it go for another to adopt" };
        const end = await workloads.exitCode(podName, pod.metadata.uid);
        // However it ended (its own exit, the lifetime cap, its pod deleted, the attachment cut), it
        // is of no more use to this bridge: removed like `run --rm` would, and its lease let go, or
        // agent-sandbox would make its pod again.
        void workloads.remove(name).catch(() => {});
        return end;
      },
    });
  };

  const adapter = {
    name: "kubernetes",
    /** Sandboxes outlive the bridge until their lease ends (another replica may adopt them). */
    keepsSandboxesOnExit: true,

    probe(): Promise<EngineInfo> {
      probed ??= (async () => {
        const { api, creds, namespace } = connect();
        const version = await api.get<{ gitVersion: string }>("/version").catch((err: unknown) => {
          throw new EngineUnavailableError(
            "kubernetes",
            `the API server at ${creds.server} does not answer: ${(err as Error).message}`,
            "start the cluster (or fix KUBECONFIG), or unset MCP_BRIDGE_RUNTIME",
          );
        });
        const groups = await api.get<{ resources: Array<{ name: string }> }>("/apis/agents.x-k8s.io/v1beta1");
        if (!groups?.resources.some((r) => r.name === "sandboxes"))
          throw new BridgeError("ENGINE_FAILED", "agent-sandbox is not installed in this cluster (no agents.x-k8s.io/v1beta1 sandboxes)", {
            source: "kubernetes",
            hint: "install kubernetes-sigs/agent-sandbox (its CRDs and controller, with extensions for warm pools); docs/kubernetes.md shows how",
          });
        await ensureNetworkPolicy(api, namespace);
        return {
          engine: "kubernetes",
          binary: creds.source === "in-cluster" ? "/var/run/secrets/kubernetes.io/serviceaccount" : creds.source,
          version: (version?.gitVersion ?? "unknown").replace(/^v/, ""),
          details: {
            server: creds.server,
            namespace,
            credentials: creds.source,
            warmPool: settings.warmPool ?? "none",
            gvisorRuntimeClass: settings.runtimeClass,
            seccomp: settings.seccomp,
            leaseSeconds: String(settings.leaseSeconds),
          },
        };
      })();
      probed.catch(() => (probed = undefined));
      return probed;
    },

    /** Start the sandbox's pod and attach to it: the bridge's hot path, no CLI involved. */
    async open(spec: ContainerSpec): Promise<ChildProcess> {
      await adapter.probe();
      const { workloads } = connect();
      if (settings.warmPool && !isGvisorSpec(spec)) await workloads.claim(spec, settings.warmPool);
      else await workloads.createSandbox(spec, podOptions(spec));
      let pod: Pod;
      try {
        pod = await workloads.waitRunning(spec.name, START_TIMEOUT_MS);
      } catch (err) {
        await workloads.remove(spec.name).catch(() => {});
        throw err;
      }
      return attach(spec.name, pod);
    },

    /** The running sandbox whose pod carries `labels` (a session's handle and principal), attached and its lease taken over. */
    async adopt(labels: Record<string, string>): Promise<{ name: string; child: ChildProcess } | undefined> {
      await adapter.probe();
      const { api, workloads } = connect();
      const selector = Object.entries(labels)
        .map(([k, v]) => labelSelector(`${k}=${v}`))
        .join(",");
      const pods = await api.get<{ items: Pod[] }>(`${workloads.podsPath()}?labelSelector=${encodeURIComponent(selector)}`);
      // Label values are cut to what labels may hold: the exact labels are in the annotation.
      const pod = (pods?.items ?? []).find((p) => {
        const exact = parseLabels(p.metadata.annotations?.[LABELS_ANNOTATION]);
        return !p.metadata.deletionTimestamp && p.status?.phase === "Running" && Object.entries(labels).every(([k, v]) => exact[k] === v);
      });
      const name = pod?.metadata.labels?.[NAME_LABEL];
      if (!pod || !name) return undefined;
      if (!(await workloads.adopt(name))) return undefined;
      log?.info("adopting a sandbox another bridge started", { name, pod: pod.metadata.name });
      return { name, child: attach(name, pod) };
    },

    /** The equivalent `kubectl run` (for `doctor` and people); the bridge itself uses open(). */
    async runArgv(spec: ContainerSpec): Promise<string[]> {
      const meta = podMetadata(spec);
      const overrides = { apiVersion: "v1", metadata: meta, spec: podSpec(spec, podOptions(spec)) };
      return [
        "kubectl",
        "run",
        spec.name,
        "--rm",
        "-i",
        "--restart=Never",
        `--image=${spec.image}`,
        `--overrides=${JSON.stringify(overrides)}`,
      ];
    },

    async imageExists(image: string): Promise<boolean> {
      const { api } = connect();
      // Reading nodes needs a cluster-wide grant the bridge's role does not have (deploy/): without it
      // the answer is "maybe", and a start with a missing image says so itself (ErrImageNeverPull).
      const nodes = await api
        .get<{ items: Array<{ status?: { images?: Array<{ names?: string[] }> } }> }>("/api/v1/nodes")
        .catch((err: unknown) => {
          if (err instanceof KubeApiError && err.status === 403) return "forbidden" as const;
          throw err;
        });
      if (nodes === "forbidden") return true;
      const wanted = new Set(imageRefs(image));
      return (nodes?.items ?? []).some((n) => (n.status?.images ?? []).some((i) => (i.names ?? []).some((name) => wanted.has(name))));
    },

    leave(name: string): void {
      left.add(name);
      state?.leases.release(name);
    },

    async remove(name: string): Promise<void> {
      await connect().workloads.remove(name);
    },

    removeSync(name: string): void {
      try {
        const { creds, workloads } = connect();
        removeSandboxSync(creds, [workloads.sandboxPath(name), workloads.claimPath(name), workloads.podsPath(name)]);
      } catch {
        // best effort: the lease ends it anyway
      }
    },

    async list(label: string): Promise<ContainerSummary[]> {
      const { api, workloads } = connect();
      const pods = await api.get<{ items: Pod[] }>(`${workloads.podsPath()}?labelSelector=${encodeURIComponent(labelSelector(label))}`);
      return (pods?.items ?? []).map((p) => ({
        name: nameOf(p),
        labels: parseLabels(p.metadata.annotations?.[LABELS_ANNOTATION]),
        running: p.status?.phase === "Running" && !p.metadata.deletionTimestamp,
      }));
    },

    imageHint(image: string): string {
      return `the image must be on the cluster's nodes: build it (\`mcp-code-exec image build --offline\`), push it to a registry the nodes pull from or import it into each node's containerd (\`ctr -n k8s.io images import\`), and set MCP_BRIDGE_IMAGE to ${image === "" ? "its reference" : `the reference (now ${image})`}`;
    },

    forgetProbe(): void {
      probed = undefined;
    },
  };
  return adapter;
};

export default kubernetes;

function isGvisorSpec(spec: ContainerSpec): boolean {
  return spec.ociRuntime !== undefined && /(^|\/)runsc$/.test(spec.ociRuntime);
}

/** The names a node may list an image under (containerd normalizes docker.io/library/...). */
function imageRefs(image: string): string[] {
  const refs = [image];
  const first = image.split("/")[0]!;
  const hasRegistry = image.includes("/") && (first.includes(".") || first.includes(":") || first === "localhost");
  if (!hasRegistry) refs.push(image.includes("/") ? `docker.io/${image}` : `docker.io/library/${image}`);
  return refs;
}

function nameOf(pod: Pod): string {
  const labels = parseLabels(pod.metadata.annotations?.[LABELS_ANNOTATION]);
  return pod.metadata.labels?.[NAME_LABEL] ?? labels.name ?? pod.metadata.name;
}

function parseLabels(raw: string | undefined): Record<string, string> {
  try {
    return raw ? (JSON.parse(raw) as Record<string, string>) : {};
  } catch {
    return {};
  }
}

/** The deny-all NetworkPolicy for sandboxes, made when missing; refused (no RBAC) means deploy/ must. */
async function ensureNetworkPolicy(api: KubeApi, namespace: string): Promise<void> {
  const path = `/apis/networking.k8s.io/v1/namespaces/${namespace}/networkpolicies`;
  try {
    if (await api.get(`${path}/${NETWORK_POLICY_NAME}`)) return;
    await api.create(path, networkPolicy(namespace));
  } catch (err) {
    if (err instanceof KubeApiError && err.status === 409) return;
    throw new BridgeError(
      "ENGINE_FAILED",
      `the sandboxes' NetworkPolicy ${NETWORK_POLICY_NAME} is missing in ${namespace} and could not be made: ${(err as Error).message}`,
      {
        source: "kubernetes",
        hint: "apply deploy/ (it has the policy), or let the bridge's role get and create networkpolicies",
      },
    );
  }
}
