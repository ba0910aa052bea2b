/**
 * Leases: every sandbox this bridge holds is an agent-sandbox object (a Sandbox, or a SandboxClaim on a
 * warm pool) whose `shutdownTime` lies a lease ahead; the bridge moves it forward while it holds the
 * sandbox. A bridge that dies stops renewing, and the agent-sandbox controller deletes the object at
 * that time, and the pod with it: no pod outlives its owner's lease, whether the bridge was killed,
 * its node lost, or its network cut. A lease is renewed at a third of its length, so two missed
 * renewals still leave it standing.
 */
import type { KubeApi } from "./api.ts";

export interface Held {
  /** The object's path (…/sandboxes/NAME or …/sandboxclaims/NAME). */
  path: string;
  /** Where the shutdown time sits in the object's spec: Sandbox inlines it, SandboxClaim nests it. */
  nested: boolean;
}

export class Leases {
  readonly #api: KubeApi;
  readonly #seconds: number;
  readonly #held = new Map<string, Held>();
  #timer: ReturnType<typeof setInterval> | undefined;
  readonly #onLost: (name: string, why: string) => void;

  constructor(api: KubeApi, seconds: number, onLost: (name: string, why: string) => void) {
    this.#api = api;
    this.#seconds = seconds;
    this.#onLost = onLost;
  }

  get seconds(): number {
    return this.#seconds;
  }

  /** The lifecycle fields for a new object: shut down one lease from now unless renewed. */
  lifecycle(): { shutdownTime: string; shutdownPolicy: "Delete" } {
    return { shutdownTime: this.#expiry(), shutdownPolicy: "Delete" };
  }

  hold(name: string, held: Held): void {
    this.#held.set(name, held);
    if (!this.#timer) {
      this.#timer = setInterval(() => void this.renewAll(), (this.#seconds * 1000) / 3);
      (this.#timer as { unref?: () => void }).unref?.();
    }
  }

  release(name: string): void {
    this.#held.delete(name);
    if (this.#held.size === 0 && this.#timer) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  /** Move every held lease forward; an object that is gone is reported lost. */
  async renewAll(): Promise<void> {
    await Promise.all([...this.#held.keys()].map((name) => this.renew(name).catch(() => {})));
  }

  /**
   * Move one held lease forward now (a sandbox just adopted from a bridge that stopped renewing it may
   * have little of its lease left). False when its object is gone. Throws when the API server does not
   * answer: renewAll() tries again at the next renewal, well before expiry.
   */
  async renew(name: string): Promise<boolean> {
    const held = this.#held.get(name);
    if (!held) return false;
    const lifecycle = { shutdownTime: this.#expiry(), shutdownPolicy: "Delete" };
    const patched = await this.#api.patch(held.path, { spec: held.nested ? { lifecycle } : lifecycle });
    if (patched !== undefined) return true;
    if (this.#held.get(name) === held) {
      this.release(name);
      this.#onLost(name, "its sandbox object was deleted");
    }
    return false;
  }

  #expiry(): string {
    return new Date(Date.now() + this.#seconds * 1000).toISOString().replace(/\.\d+Z$/, "Z");
  }
}
