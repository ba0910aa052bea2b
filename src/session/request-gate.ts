/**
 * Requests from sandbox code to the host (tool calls, discovery) pass this gate before any handler
 * sees them: only the run in progress may ask, within a budget, and a sandbox that floods the host
 * with requests is stopped. Handlers receive the run's scope, never the session.
 */
import type { SessionApprovals } from "../approvals/remembered.ts";
import type { Logger } from "../log.ts";
import type { SessionPackages } from "../packages/session-packages.ts";
import { PolicyRefusal, type Policy } from "../policy.ts";
import type { RpcFrame } from "../sandbox/frames.ts";
import type { ClientChannel } from "../server/client-requests.ts";
import type { SpanContext } from "../telemetry/telemetry.ts";

/** Requests outside a run before the sandbox is stopped as flooding. */
const MAX_STRAY_RPCS = 1_000;
/** Requests per run beyond the tool-call budget (discovery, docs, search). */
const MAX_DISCOVERY_RPCS = 10_000;

/** What a request handler may know about the run that asked. */
/** Why a run's proxied calls still in flight were cancelled (what the upstream is told). */
const RUN_ENDED = new Error("the run ended");

export interface RunScope {
  /** Servers loaded in this session; they stay loaded until reset. */
  readonly loaded: ReadonlySet<string>;
  /** Aborted when the run ends: proxied calls still in flight are cancelled with it. */
  readonly signal: AbortSignal;
  /** The run's logger (every line carries its request id). */
  readonly log: Logger;
  /** Counts a proxied tool call against the run's budget; throws PolicyRefusal past it. */
  countToolCall(): void;
  /** The run's id as logs and the audit log show it ("run-…"). */
  readonly runId: string;
  /** The MCP client that asked for the run: questions to its user, progress; absent for `exec`. */
  readonly client?: ClientChannel;
  /** Approvals the user gave for the rest of the session (forgotten on reset). */
  readonly approvals: SessionApprovals;
  /** Stop the run's clock while a person is being asked something; call the result once answered. */
  holdClock(): () => void;
  /** The span of the call the run serves: proxied calls are its children. */
  readonly trace?: SpanContext;
  /** What the session installed (runtime.install); absent where installs are not wired (tests). */
  readonly packages?: SessionPackages;
}

export type RequestHandler = (frame: RpcFrame, run: RunScope) => Promise<unknown>;

/** Error a handler or the gate throws back to the sandbox; `kind` picks the Python exception. */
function refusal(message: string): Error {
  return Object.assign(new Error(message), { kind: "bad_request" });
}

export class RequestGate {
  #policy: Policy | undefined;
  #handler: RequestHandler | undefined;
  #stop: (reason: string) => void;
  #run: { id: number; scope: RunScope; abort: AbortController } | undefined;
  #toolCalls = 0;
  #requests = 0;
  #stray = 0;

  /** `stop` ends the sandbox that floods the host. */
  constructor(opts: { policy?: Policy; handler?: RequestHandler; stop: (reason: string) => void }) {
    this.#policy = opts.policy;
    this.#handler = opts.handler;
    this.#stop = opts.stop;
  }

  /** Requests are accepted for sandbox run `id` until endRun(). */
  beginRun(id: number, scope: Omit<RunScope, "signal" | "countToolCall">): void {
    const abort = new AbortController();
    this.#toolCalls = 0;
    this.#requests = 0;
    const policy = this.#policy;
    this.#run = {
      id,
      abort,
      scope: {
        ...scope,
        signal: abort.signal,
        countToolCall: () => {
          if (policy && ++this.#toolCalls > policy.maxToolCallsPerRun) {
            throw new PolicyRefusal(
              `this run reached maxToolCallsPerRun = ${policy.maxToolCallsPerRun} (${policy.sources.maxToolCallsPerRun ?? "default"}); split the work across runs`,
            );
          }
        },
      },
    };
  }

  /** The run ended, whatever way: its proxied calls end with it. */
  endRun(): void {
    // A reason given: abort() would build a DOMException, stack and all, at the end of every run.
    this.#run?.abort.abort(RUN_ENDED);
    this.#run = undefined;
  }

  /** A new sandbox: its count of stray requests starts at zero. */
  newSandbox(): void {
    this.#stray = 0;
  }

  async handle(frame: RpcFrame): Promise<unknown> {
    if (!this.#handler) throw refusal("this bridge has no MCP servers to offer");
    const run = this.#run;
    if (!run || frame.run === null || frame.run !== run.id) {
      // A background thread may outlive its run now and then; thousands of such requests are a flood.
      if (++this.#stray > MAX_STRAY_RPCS) this.#stop(`it sent more than ${MAX_STRAY_RPCS} requests outside any run`);
      throw refusal("requests to the host are only accepted while run_python is running (a background thread outlived its run?)");
    }
    const budget = (this.#policy?.maxToolCallsPerRun ?? 10_000) + MAX_DISCOVERY_RPCS;
    if (++this.#requests > budget) {
      this.#stop(`one run sent more than ${budget} requests to the host`);
      throw refusal("too many requests in one run");
    }
    return this.#handler(frame, run.scope);
  }
}
