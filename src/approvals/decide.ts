/**
 * Which of allow, ask or deny applies to one tool, and who set it. In order: the deny and limit lists
 * (denyServers, allowServers, denyTools, allowTools), askTools, a pattern in allowTools that names the
 * tool, then the server's annotations (readOnlyHint: true → allow, destructiveHint: true → ask), then
 * the toolDefault setting. A bare "*" in allowTools (its default) lets every tool be called and names
 * none, so annotations still decide.
 */
import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import { PolicyRefusal, toolPattern, toolRefusal, where, type Policy } from "../policy.ts";

export type Verdict = "allow" | "ask" | "deny";

/** Who made a decision: a setting (policy), the upstream's annotations, or the person asked. */
export type DecidedBy = "policy" | "annotation" | "user";

export interface ToolRule {
  verdict: Verdict;
  by: "policy" | "annotation";
  /** The rule in words, with where it was set (for questions and refusals). */
  rule: string;
  /** What to change so the tool runs without a question (for a client that cannot ask). */
  fix: string;
}

/** Patterns that let every tool through without naming any. */
const NAMES_NOTHING = new Set(["*", "*/*"]);

export function toolRule(policy: Policy, server: string, tool: string, annotations: ToolAnnotations | undefined): ToolRule {
  const id = `${server}/${tool}`;
  const refusal = toolRefusal(policy, server, tool);
  if (refusal) return { verdict: "deny", by: "policy", rule: refusal.message.replace(/^refused by policy: /, ""), fix: "" };
  const allowHint = `add "${id}" to allowTools (${policy.sources.allowTools ?? "policy.allowTools in the settings file, or MCP_BRIDGE_ALLOW_TOOLS"})${policy.allowTools.some((p) => NAMES_NOTHING.has(p)) ? ', keeping "*" there' : ""}`;
  const ask = toolPattern(policy.askTools, server, tool);
  if (ask)
    return {
      verdict: "ask",
      by: "policy",
      rule: `${id} matches "${ask}" in ${where(policy, "askTools")}`,
      fix: `remove it from askTools (${policy.sources.askTools})`,
    };
  const allow = toolPattern(
    policy.allowTools.filter((p) => !NAMES_NOTHING.has(p)),
    server,
    tool,
  );
  if (allow) return { verdict: "allow", by: "policy", rule: `${id} matches "${allow}" in ${where(policy, "allowTools")}`, fix: "" };
  if (annotations?.readOnlyHint === true)
    return { verdict: "allow", by: "annotation", rule: `server ${server} marks ${tool} read-only (readOnlyHint)`, fix: "" };
  if (annotations?.destructiveHint === true)
    return { verdict: "ask", by: "annotation", rule: `server ${server} marks ${tool} destructive (destructiveHint)`, fix: allowHint };
  const v = policy.toolDefault;
  return {
    verdict: v,
    by: "policy",
    rule: `toolDefault = ${v} (${policy.sources.toolDefault ?? "default; set MCP_BRIDGE_TOOL_DEFAULT or policy.toolDefault"}), for tools no list names that their server marks neither read-only nor destructive`,
    fix: `${allowHint}, or set toolDefault to allow`,
  };
}

/** The refusal sandbox code receives, naming who decided; `decided_by` reaches Python as `e.decided_by`. */
export function denial(server: string, tool: string, by: DecidedBy, why: string): PolicyRefusal & { details: Record<string, unknown> } {
  const err = new PolicyRefusal(`${server}/${tool} ${why}`) as PolicyRefusal & { details: Record<string, unknown> };
  err.details = { server, tool, decided_by: by };
  return err;
}
