/**
 * Asking the user about one call: a form-mode elicitation through the MCP client that started the run,
 * while the sandbox code waits. One field, `decision`: once, session or deny; declining, cancelling,
 * an error or no answer in time all mean deny. A client that cannot show forms gets a refusal naming
 * what to change (fail closed). The run's clock stops while the question is open.
 */
import { ErrorCode, McpError, type ElicitRequestFormParams, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { RunScope } from "../session/request-gate.ts";
import type { DecidedBy, ToolRule } from "./decide.ts";
import { summarizeArgs } from "./summary.ts";
import { visible } from "./visible.ts";

export const DECISIONS = ["once", "session", "deny"] as const;

export interface Verdict {
  decision: "allow" | "deny";
  by: DecidedBy;
  /** once, session, remembered, deny, decline, cancel, timeout, unsupported, error, denied-earlier, unanswered-earlier, run-ended. */
  answer: string;
  /** Why it was denied, completing "server/tool …". */
  why?: string;
  /** Milliseconds the call waited for the person (its turn included). */
  waitMs: number;
}

export interface AskInput {
  server: string;
  tool: Tool;
  args: Record<string, unknown>;
  rule: ToolRule;
  run: RunScope;
  timeoutMs: number;
  /** Where the timeout was set, for the refusal (e.g. MCP_BRIDGE_ASK_TIMEOUT). */
  timeoutSource: string;
}

export async function askUser(input: AskInput): Promise<Verdict> {
  const { server, tool, run, rule } = input;
  const key = `${server}/${tool.name}`;
  const approvals = run.approvals;
  if (approvals.allowed(key)) return { decision: "allow", by: "user", answer: "remembered", waitMs: 0 };
  const client = run.client;
  if (!client?.can().form) {
    const cannot = client
      ? `${client.name}, the MCP client running mcp-code-exec, did not declare the elicitation capability, so nobody can be asked`
      : "there is no MCP client to ask it through (mcp-code-exec exec)";
    return {
      decision: "deny",
      by: rule.by,
      answer: "unsupported",
      why: `needs your approval (${rule.rule}), but ${cannot}; to let it run without a question, ${rule.fix}`,
      waitMs: 0,
    };
  }
  const t0 = performance.now();
  const release = run.holdClock();
  const verdict = (v: Omit<Verdict, "waitMs">): Verdict => ({ ...v, waitMs: Math.round((performance.now() - t0) * 10) / 10 });
  try {
    return await approvals.oneAtATime(async () => {
      // Answers given while this question waited for its turn.
      if (approvals.allowed(key)) return verdict({ decision: "allow", by: "user", answer: "remembered" });
      if (approvals.deniedInRun(run.runId, key))
        return verdict({
          decision: "deny",
          by: "user",
          answer: "denied-earlier",
          why: "was denied by the user earlier in this run; not asking again until the next run",
        });
      const unanswered = approvals.unanswered(run.runId);
      if (unanswered) return verdict({ decision: "deny", by: "policy", answer: "unanswered-earlier", why: `was not asked: ${unanswered}` });
      if (run.signal.aborted) return verdict({ decision: "deny", by: "policy", answer: "run-ended", why: "was not asked: the run ended" });
      let result;
      try {
        result = await client.elicit(approvalForm(input), { signal: run.signal, timeoutMs: input.timeoutMs });
      } catch (err) {
        if (run.signal.aborted)
          return verdict({
            decision: "deny",
            by: "policy",
            answer: "run-ended",
            why: "was not approved: the run ended while the question was open",
          });
        if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
          const secs = Math.round(input.timeoutMs / 1000);
          approvals.markUnanswered(run.runId, `an earlier question in this run got no answer within ${secs}s`);
          return verdict({
            decision: "deny",
            by: "policy",
            answer: "timeout",
            why: `got no answer within ${secs}s (${input.timeoutSource}), so it was refused; further questions in this run are refused without asking`,
          });
        }
        return verdict({
          decision: "deny",
          by: "policy",
          answer: "error",
          why: `could not be approved: ${client.name} answered the question with an error: ${(err as Error).message}`,
        });
      }
      const decision = result.action === "accept" ? result.content?.decision : undefined;
      if (decision === "once") return verdict({ decision: "allow", by: "user", answer: "once" });
      if (decision === "session") {
        approvals.allowForSession(key);
        return verdict({ decision: "allow", by: "user", answer: "session" });
      }
      approvals.denyInRun(run.runId, key);
      const how =
        result.action === "accept" ? "" : result.action === "decline" ? " (the question was declined)" : " (the question was dismissed)";
      return verdict({
        decision: "deny",
        by: "user",
        answer: result.action === "accept" ? "deny" : result.action,
        why: `was denied by the user${how}`,
      });
    });
  } finally {
    release();
  }
}

/** The question as the user sees it. */
export function approvalForm(input: Pick<AskInput, "server" | "tool" | "args" | "rule">): ElicitRequestFormParams {
  const { tool } = input;
  // Names, titles and descriptions come from the upstream server (and the sandbox's code names the
  // arguments): every one is escaped, so none can forge a line or reorder the text around it.
  const server = visible(input.server);
  const name = visible(tool.name);
  const title = tool.title ?? tool.annotations?.title;
  const about = firstSentence(tool.description);
  const lines = [
    "Sandbox code (run_python) wants to call a tool that needs your approval.",
    `Server: ${server}`,
    `Tool: ${name}${title ? ` (${visible(title)})` : ""}`,
    ...(about ? [`What it does (says the server): ${visible(about)}`] : []),
    `Why you are asked: ${visible(input.rule.rule)}`,
    "Arguments:",
    ...summarizeArgs(input.args)
      .split("\n")
      .map((l) => `  ${l}`),
  ];
  return {
    mode: "form",
    message: lines.join("\n"),
    requestedSchema: {
      type: "object",
      properties: {
        decision: {
          type: "string",
          title: "Allow this call?",
          description: `once: this call only; session: every call of ${server}/${name} until the session is reset; deny: refuse it`,
          enum: [...DECISIONS],
          enumNames: ["Allow once", `Allow ${server}/${name} for this session`, "Deny"],
        },
      },
      required: ["decision"],
    },
  };
}

function firstSentence(text: string | undefined): string | undefined {
  if (!text) return undefined;
  const s = text
    .trim()
    .split(/(?<=[.!?])\s|\n/)[0]!
    .trim();
  return s.length > 160 ? `${s.slice(0, 160)}…` : s || undefined;
}
