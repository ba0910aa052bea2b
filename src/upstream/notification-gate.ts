/**
 * What an upstream server may send unasked, bounded. A server can write log and progress
 * notifications as fast as a pipe takes them; each one the SDK handles costs a schema check, a handler
 * and a log line, and a million of them starved the bridge's event loop for half a minute and grew it
 * to a gigabyte. Past a rate per kind, notifications are dropped before the SDK sees them, and how
 * many were dropped is logged once a second. Answers to our requests are never dropped.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../log.ts";

/** Notifications per second, per kind, and the burst allowed above it. */
export const NOTIFICATION_BUDGET = {
  "notifications/message": { perSecond: 200, burst: 2_000 },
  "notifications/progress": { perSecond: 200, burst: 2_000 },
  /** Everything else a server may send unasked (list changes, cancellations, resource updates...). */
  other: { perSecond: 100, burst: 1_000 },
} as const;

type Kind = keyof typeof NOTIFICATION_BUDGET;

class Bucket {
  #tokens: number;
  #at = performance.now();
  constructor(
    readonly perSecond: number,
    readonly burst: number,
  ) {
    this.#tokens = burst;
  }
  take(): boolean {
    const now = performance.now();
    this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#at) / 1000) * this.perSecond);
    this.#at = now;
    if (this.#tokens < 1) return false;
    this.#tokens--;
    return true;
  }
}

export class NotificationGate {
  #buckets = new Map<Kind, Bucket>();
  #dropped = new Map<Kind, number>();
  #reportAt = 0;

  constructor(
    readonly server: string,
    readonly log: Logger,
  ) {}

  /** Whether `message` goes on to the SDK. */
  admit(message: JSONRPCMessage): boolean {
    // Requests (with an id and a method) and answers (an id, no method) always go on.
    if (!("method" in message) || "id" in message) return true;
    const kind: Kind = message.method in NOTIFICATION_BUDGET ? (message.method as Kind) : "other";
    let bucket = this.#buckets.get(kind);
    if (!bucket) {
      bucket = new Bucket(NOTIFICATION_BUDGET[kind].perSecond, NOTIFICATION_BUDGET[kind].burst);
      this.#buckets.set(kind, bucket);
    }
    if (bucket.take()) return true;
    this.#dropped.set(kind, (this.#dropped.get(kind) ?? 0) + 1);
    this.#report();
    return false;
  }

  #report(): void {
    const now = performance.now();
    if (now - this.#reportAt < 1000) return;
    this.#reportAt = now;
    const dropped = Object.fromEntries(this.#dropped);
    this.#dropped.clear();
    this.log.warn("upstream server floods notifications; dropping those over its budget", { server: this.server, dropped });
  }
}

/**
 * Puts `gate` between the transport and whatever handles its messages (the SDK sets `onmessage` when
 * it connects; this wraps whatever it sets, before or after), keeping answers behind the
 * notifications that came before them.
 */
export function gateTransport<T extends Transport>(transport: T, gate: NotificationGate): T {
  let handler: Transport["onmessage"];
  const gated: Transport["onmessage"] = (message, extra) => {
    if (!gate.admit(message)) return;
    // The SDK handles a notification a microtask after it arrives and an answer at once, so an
    // upstream's last progress, read from the pipe together with its answer, found its request already
    // answered and was dropped. An answer waits one microtask, behind what came before it.
    if ("id" in message && !("method" in message)) queueMicrotask(() => handler?.(message, extra));
    else handler?.(message, extra);
  };
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    enumerable: true,
    get: () => (handler ? gated : undefined),
    set: (h: Transport["onmessage"]) => {
      handler = h;
    },
  });
  return transport;
}
