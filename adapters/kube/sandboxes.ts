/**
 * Sandboxes as agent-sandbox objects (kubernetes-sigs/agent-sandbox, v1beta1):
 * - a cold start creates a `Sandbox` whose pod template is the hardened pod (pod-spec.ts); the
 *   controller makes the pod, named after it;
 * - a warm start creates a `SandboxClaim` on a `SandboxWarmPool` (deploy/): the controller hands it a
 *   pod that is already running, waiting for the entrypoint on its stdin;
 * - either way the object carries the lease (leases.ts): the controller deletes it, and its pod, at
 *   its shutdown time unless the bridge holding it moves that forward.
 * Pods are found by the label `mcp-code-exec.sandbox.users.io/name`, which both paths put on them.
 */
import { BridgeError } from "../../src/errors.ts";
import type { ContainerSpec } from "../types.ts";
import { KubeApiError, type KubeApi, type KubeObject } from "./api.ts";
import { LABEL_DOMAIN, SANDBOX_CONTAINER, labelValue, podMetadata, podSpec, type PodOptions } from "./pod-spec.ts";
import type { Leases } from "./leases.ts";

/** Under LABEL_DOMAIN: a SandboxClaim may only add labels under allowed domains (pod-spec.ts). */
export const NAME_LABEL = `${LABEL_DOMAIN}/name`;
const SANDBOXES = "/apis/agents.x-k8s.io/v1beta1";
const EXTENSIONS = "/apis/extensions.agents.x-k8s.io/v1beta1";

export interface Pod extends KubeObject {
  spec?: { nodeName?: string; containers?: Array<{ name: string }> } & Record<string, unknown>;
  status?: {
    phase?: string;
    reason?: string;
    message?: string;
    containerStatuses?: Array<{
      name: string;
      state?: {
        running?: unknown;
        waiting?: { reason?: string; message?: string };
        terminated?: { exitCode: number; reason?: string; message?: string };
      };
    }>;
  };
}

export class Workloads {
  readonly #api: KubeApi;
  readonly #ns: string;
  readonly #leases: Leases;

  constructor(api: KubeApi, namespace: string, leases: Leases) {
    this.#api = api;
    this.#ns = namespace;
    this.#leases = leases;
  }

  sandboxPath(name = ""): string {
    return `${SANDBOXES}/namespaces/${this.#ns}/sandboxes${name ? `/${name}` : ""}`;
  }

  claimPath(name = ""): string {
    return `${EXTENSIONS}/namespaces/${this.#ns}/sandboxclaims${name ? `/${name}` : ""}`;
  }

  podsPath(name = ""): string {
    return `/api/v1/namespaces/${this.#ns}/pods${name ? `/${name}` : ""}`;
  }

  /** Create the Sandbox for `spec` (cold start); its lease starts now. */
  async createSandbox(spec: ContainerSpec, opts: PodOptions): Promise<void> {
    const meta = podMetadata(spec);
    meta.labels[NAME_LABEL] = labelValue(spec.name);
    await this.#api.create(this.sandboxPath(), {
      apiVersion: "agents.x-k8s.io/v1beta1",
      kind: "Sandbox",
      metadata: { name: spec.name, namespace: this.#ns, labels: meta.labels, annotations: meta.annotations },
      spec: {
        podTemplate: { metadata: meta, spec: podSpec(spec, opts) },
        ...this.#leases.lifecycle(),
      },
    });
    this.#leases.hold(spec.name, { path: this.sandboxPath(spec.name), nested: false });
  }

  /** Claim a warm pod from `pool` for `spec` (its labels go onto the pod). */
  async claim(spec: ContainerSpec, pool: string): Promise<void> {
    const meta = podMetadata(spec);
    meta.labels[NAME_LABEL] = labelValue(spec.name);
    await this.#api.create(this.claimPath(), {
      apiVersion: "extensions.agents.x-k8s.io/v1beta1",
      kind: "SandboxClaim",
      metadata: { name: spec.name, namespace: this.#ns, labels: meta.labels, annotations: meta.annotations },
      spec: {
        warmPoolRef: { name: pool },
        additionalPodMetadata: meta,
        lifecycle: this.#leases.lifecycle(),
      },
    });
    this.#leases.hold(spec.name, { path: this.claimPath(spec.name), nested: true });
  }

  /**
   * Take over the lease of sandbox `name`, started by another bridge (sandbox-start.ts adoptSandbox):
   * its SandboxClaim when it came from a warm pool, else its Sandbox. False when neither is there any more.
   */
  async adopt(name: string): Promise<boolean> {
    const claim = await this.#api.get(this.claimPath(name)).catch((err: unknown) => ignoreMissingApi(err));
    this.#leases.hold(name, claim ? { path: this.claimPath(name), nested: true } : { path: this.sandboxPath(name), nested: false });
    return this.#leases.renew(name);
  }

  /**
   * The running pod of sandbox `name`, once its container runs; a pod that cannot run is an error that
   * says why (the image is not on the node, the runtime class is missing, ...).
   */
  async waitRunning(name: string, timeoutMs: number): Promise<Pod> {
    const selector = `labelSelector=${encodeURIComponent(`${NAME_LABEL}=${labelValue(name)}`)}`;
    const deadline = AbortSignal.timeout(timeoutMs);
    for (;;) {
      const list = await this.#api.get<{ items: Pod[]; metadata: { resourceVersion: string } }>(`${this.podsPath()}?${selector}`);
      const ready = list?.items.map(running).find((r) => r !== undefined);
      if (ready) return unwrap(ready, name);
      try {
        const found = await this.#api.watch<Pod, Pod | Error>(
          `${this.podsPath()}?${selector}`,
          list?.metadata.resourceVersion,
          (ev) => (ev.type === "DELETED" ? new Error("its pod was deleted while starting") : running(ev.object)),
          deadline,
        );
        if (found) return unwrap(found, name);
      } catch (err) {
        if (deadline.aborted)
          throw new BridgeError("SANDBOX_START", `the sandbox pod ${name} did not start within ${timeoutMs / 1000}s`, {
            source: "kubernetes",
            hint: `\`kubectl -n ${this.#ns} describe pod -l ${NAME_LABEL}=${labelValue(name)}\` shows what it waits for (scheduling, the image, the runtime class)`,
          });
        if (!(err instanceof KubeApiError)) throw err;
      }
    }
  }

  /** How the sandbox's container ended: its exit code, or null with why (its pod is gone, ...). */
  async exitCode(podName: string, uid?: string): Promise<{ code: number | null; why?: string }> {
    for (let i = 0; i < 20; i++) {
      const pod = await this.#api.get<Pod>(this.podsPath(podName)).catch(() => undefined);
      // Another pod of the same name (agent-sandbox makes a Sandbox's pod again at once) is not ours.
      if (!pod || pod.metadata.deletionTimestamp || (uid && pod.metadata.uid !== uid))
        return { code: null, why: `its pod ${podName} was deleted` };
      const state = pod.status?.containerStatuses?.find((c) => c.name === SANDBOX_CONTAINER)?.state;
      if (state?.terminated) return { code: state.terminated.exitCode };
      if (state?.running && i >= 4) return { code: null, why: `the connection to its pod ${podName} was cut` };
      await new Promise((r) => setTimeout(r, 250));
    }
    return { code: null, why: `its pod ${podName} did not say how it ended` };
  }

  /** Delete sandbox `name`, its claim and its pod now; missing objects are not an error. */
  async remove(name: string): Promise<void> {
    this.#leases.release(name);
    const selector = `labelSelector=${encodeURIComponent(`${NAME_LABEL}=${labelValue(name)}`)}`;
    const pods = await this.#api.get<{ items: Pod[] }>(`${this.podsPath()}?${selector}`);
    await Promise.all([
      this.#api.delete(this.claimPath(name)).catch(ignoreMissingApi),
      this.#api.delete(this.sandboxPath(name)).catch(ignoreMissingApi),
      ...(pods?.items ?? []).map((p) => this.#api.delete(this.podsPath(p.metadata.name))),
    ]);
  }
}

function running(pod: Pod): Pod | Error | undefined {
  if (pod.metadata.deletionTimestamp) return undefined;
  const status = pod.status?.containerStatuses?.find((c) => c.name === SANDBOX_CONTAINER);
  if (status?.state?.running && pod.status?.phase === "Running") return pod;
  const waiting = status?.state?.waiting;
  if (
    waiting?.reason &&
    /ErrImageNeverPull|ErrImagePull|ImagePullBackOff|InvalidImageName|CreateContainerConfigError|CreateContainerError|RunContainerError/.test(
      waiting.reason,
    )
  )
    return new Error(`${waiting.reason}: ${waiting.message ?? ""}`);
  const terminated = status?.state?.terminated;
  if (terminated)
    return new Error(
      `its container ended at start (exit ${terminated.exitCode}${terminated.reason ? `, ${terminated.reason}` : ""}): ${terminated.message ?? ""}`,
    );
  if (pod.status?.phase === "Failed") return new Error(`its pod failed: ${pod.status.reason ?? ""} ${pod.status.message ?? ""}`);
  return undefined;
}

function unwrap(found: Pod | Error, name: string): Pod {
  if (!(found instanceof Error)) return found;
  const missingImage = /ErrImageNeverPull|ErrImagePull|ImagePullBackOff/.test(found.message);
  throw new BridgeError(missingImage ? "IMAGE_MISSING" : "SANDBOX_START", `sandbox pod ${name}: ${found.message.trim()}`, {
    source: "kubernetes",
  });
}

/** The agent-sandbox extensions (claims) may not be installed: a 404 on their path is "nothing there". */
function ignoreMissingApi(err: unknown): void {
  if (err instanceof KubeApiError && err.status === 404) return;
  throw err;
}
