/**
 * Requests from the sandbox waiting for an answer. They are answered RPC_CONCURRENCY at a time, the
 * rest wait their turn in order; past MAX_RPC_IN_FLIGHT waiting or being answered, the sandbox is
 * flooding the host. What an answer is, is the caller's (channel.ts).
 */
import type { RpcFrame } from "./frames.ts";

/** Requests from the sandbox waiting or being answered; past this it is flooding the host. */
export const MAX_RPC_IN_FLIGHT = 20_000;
/**
 * Requests answered at once; the rest wait their turn, in order. 10,000 calls gathered at once are
 * legitimate (if heavy) work: started all in one go, they held the event loop for seconds.
 */
export const RPC_CONCURRENCY = 64;

export class RpcQueue {
  #answer: (frame: RpcFrame) => Promise<void>;
  #flooded: () => void;
  #inFlight = 0;
  #active = 0;
  /** Requests waiting for a turn: those from #head on. */
  #queue: RpcFrame[] = [];
  #head = 0;
  #scheduled = false;

  /** `answer` settles when the reply is sent; `flooded` is told of each request past MAX_RPC_IN_FLIGHT (which is dropped). */
  constructor(answer: (frame: RpcFrame) => Promise<void>, flooded: () => void) {
    this.#answer = answer;
    this.#flooded = flooded;
  }

  /**
   * Answering starts outside the caller's loop (a microtask after it), so the work a request causes is
   * not charged to the reading loop's frame budget.
   */
  push(frame: RpcFrame): void {
    if (++this.#inFlight > MAX_RPC_IN_FLIGHT) {
      this.#inFlight--;
      this.#flooded();
      return;
    }
    this.#queue.push(frame);
    if (!this.#scheduled) {
      this.#scheduled = true;
      queueMicrotask(() => {
        this.#scheduled = false;
        this.#start();
      });
    }
  }

  #start(): void {
    const queue = this.#queue;
    while (this.#active < RPC_CONCURRENCY && this.#head < queue.length) {
      const frame = queue[this.#head]!;
      queue[this.#head++] = undefined as unknown as RpcFrame;
      if (this.#head === queue.length || (this.#head > 4096 && this.#head * 2 > queue.length)) {
        queue.splice(0, this.#head);
        this.#head = 0;
      }
      this.#active++;
      void this.#answer(frame).finally(() => {
        this.#active--;
        this.#inFlight--;
        this.#start();
      });
    }
  }
}
