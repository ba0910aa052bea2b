/**
 * One tool call from sandbox code to an upstream server: the policy (deny and limit lists, then allow,
 * ask or deny from the lists, the server's annotations and the default), a question to the user when
 * the answer is ask, the call itself with the upstream's questions, progress and logs relayed to the
 * run, a sign-in link offered when a remote server wants one, and one audit line whatever happened.
 */
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { askUser, type Verdict } from "../approvals/ask.ts";
import { denial, toolRule, type ToolRule } from "../approvals/decide.ts";
import type { AuditLog, AuditRecord } from "../audit/audit-log.ts";
import type { LoginStart } from "../auth/login.ts";
import type { Metrics } from "../metrics.ts";
import { PolicyRefusal, toolRefusal, type Policy } from "../policy.ts";
import type { RunScope } from "../session/request-gate.ts";
import type { UpstreamPool } from "./pool.ts";
import { shapeOfResult } from "./result-shapes.ts";
import { runRelay } from "./run-relay.ts";
import { retryAfterSignIn } from "./sign-in.ts";
import { NO_TELEMETRY, type Telemetry } from "../telemetry/telemetry.ts";

export interface ProxiedCallContext {
  pool: UpstreamPool;
  policy?: Policy;
  metrics?: Metrics;
  toolTimeoutMs: number;
  audit?: AuditLog;
  /** Start a sign-in to a remote server (the hook of src/auth/login.ts); absent: never offered. */
  signIn?: (server: string) => Promise<LoginStart>;
  /** Who the calls are made for, when the bridge serves several users (written in the audit log). */
  principal?: string;
  telemetry?: Telemetry;
}

export interface CallChecks {
  /** Throws when the server is not configured. */
  needServer(server: string): void;
  /** The tool's definition; throws when the server has no such tool. */
  needTool(server: string, tool: string): Promise<Tool>;
  notLoaded(server: string): Error;
}

export function createProxiedCall(ctx: ProxiedCallContext, checks: CallChecks) {
  let callCounter = 0;
  const allowAll: ToolRule = { verdict: "allow", by: "policy", rule: "no policy", fix: "" };

  return async function call(
    { server, tool, args }: { server: string; tool: string; args: Record<string, unknown> },
    run: RunScope,
  ): Promise<CallToolResult> {
    const callId = `call-${++callCounter}`;
    const log = run.log.child({ call: callId, server, tool });
    // A child of the run's call; its traceparent goes on to the upstream server in the call's _meta.
    const span = (ctx.telemetry ?? NO_TELEMETRY).span(`tools/call ${server}/${tool}`, {
      parent: run.trace,
      kind: "client",
      attributes: { "mcp.method.name": "tools/call", "gen_ai.tool.name": tool, "mcp_code_exec.server": server },
    });
    const t0 = performance.now();
    const ts = new Date().toISOString();
    let verdict: Pick<Verdict, "decision" | "by"> & Partial<Verdict> = { decision: "allow", by: "policy" };
    let decided = false;
    let sent = false;
    let outcome = "ok";
    try {
      // Every call counts, refused ones too: a flood of calls that fail cannot outrun the budget.
      run.countToolCall();
      checks.needServer(server);
      // Deny and limit lists first: a denied tool never starts its server and never asks.
      const refusal = ctx.policy && toolRefusal(ctx.policy, server, tool);
      if (refusal) {
        verdict = { decision: "deny", by: "policy" };
        decided = true;
        throw Object.assign(refusal, { details: { server, tool, decided_by: "policy" } });
      }
      if (!run.loaded.has(server)) throw checks.notLoaded(server);
      // A remote server that wants a sign-in (at connection, or at the call): where the client can show
      // a link, the user signs in there and the step is done again.
      const withSignIn = retryAfterSignIn(ctx.signIn, { server, tool, run, log, askTimeoutMs: askTimeoutMs(ctx) });
      const def = await withSignIn(() => checks.needTool(server, tool));
      const rule = ctx.policy ? toolRule(ctx.policy, server, tool, def.annotations) : allowAll;
      if (rule.verdict === "ask") {
        verdict = await askUser({
          server,
          tool: def,
          args,
          rule,
          run,
          timeoutMs: askTimeoutMs(ctx),
          timeoutSource: ctx.policy?.sources.askTimeout ?? "MCP_BRIDGE_ASK_TIMEOUT",
        });
        log.info("approval", { decision: verdict.decision, by: verdict.by, answer: verdict.answer, wait_ms: verdict.waitMs });
      } else {
        verdict = { decision: rule.verdict, by: rule.by, why: rule.rule };
      }
      decided = true;
      if (verdict.decision === "deny") throw denial(server, tool, verdict.by, verdict.why ?? `is refused (${rule.rule})`);
      const upstream = ctx.pool.server(server)!;
      const relay = runRelay(run, server, tool, callId, log, askTimeoutMs(ctx));
      sent = true;
      const result = await withSignIn(() =>
        upstream.callTool(
          tool,
          args,
          ctx.toolTimeoutMs,
          run.signal,
          relay,
          span.context.sampled && ctx.telemetry?.enabled ? span.traceparent() : undefined,
        ),
      );
      // The result's shape is noted once the reply has gone out.
      if (!def.outputSchema) setImmediate(() => ctx.pool.resultShapes.record(server, tool, shapeOfResult(result)));
      outcome = result.isError === true ? "tool_error" : "ok";
      // Latency counters leave out time spent waiting for a person.
      const ms = performance.now() - t0 - (verdict.waitMs ?? 0);
      ctx.metrics?.recordProxiedCall(ms, result.isError !== true);
      log.debug("proxied call", { ms: Math.round(ms * 1000) / 1000, is_error: result.isError === true || undefined });
      return result;
    } catch (err) {
      const ms = performance.now() - t0 - (verdict.waitMs ?? 0);
      outcome = err instanceof PolicyRefusal ? "refused" : ((err as { kind?: string }).kind ?? "error");
      if (err instanceof PolicyRefusal && ctx.metrics) ctx.metrics.policyRefusals++;
      ctx.metrics?.recordProxiedCall(ms, false);
      log.info("proxied call failed", { ms: Math.round(ms), error: (err as Error).message });
      throw err;
    } finally {
      span.set({
        "mcp_code_exec.decision": decided ? verdict.decision : undefined,
        "mcp_code_exec.decided_by": decided ? verdict.by : undefined,
        "mcp_code_exec.outcome": outcome,
      });
      span.end(outcome === "ok" ? undefined : outcome);
      ctx.telemetry?.count("mcp_code_exec.proxied_calls", 1, { server, outcome });
      if (ctx.audit) {
        const decision = decided
          ? { decision: verdict.decision, by: verdict.by, ...(verdict.answer ? { answer: verdict.answer, wait_ms: verdict.waitMs } : {}) }
          : {};
        const record: Omit<AuditRecord, "args_sha256"> = {
          ts,
          ...(ctx.principal ? { principal: ctx.principal } : {}),
          run: run.runId,
          call: callId,
          server,
          tool,
          ...decision,
          outcome,
          ms: Math.round((performance.now() - t0) * 10) / 10,
        };
        // A call that reached no server is counted after its first line in the run (audit-log.ts).
        if (sent) ctx.audit.write(record, args);
        else ctx.audit.writeUnsent(record, args, run.signal);
      }
    }
  };
}

/** How long a question to the user may stay open. */
export function askTimeoutMs(ctx: { policy?: Policy }): number {
  return (ctx.policy?.askTimeout ?? 120) * 1000;
}
