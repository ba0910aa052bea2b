/**
 * The server `instructions` sent at initialize: clients with tool search read them to decide when to
 * load run_python, and some put them in the system prompt. A few lines, capped: what the bridge is for,
 * which MCP servers code can reach (names only), and anything that stops it working.
 */

/** Characters of server names shown before "and N more". */
const MAX_NAMES_CHARS = 400;
/** Server names come from config files a repository may ship: only plain identifiers are shown. */
const PLAIN_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$/;
export const MAX_INSTRUCTIONS_CHARS = 1200;

export function serverInstructions(servers: string[], problem?: string): string {
  const lines = [
    "mcp-code-exec runs Python in a persistent, network-less sandbox through one tool, run_python: use it for computation, data work (pandas, numpy), plots, files, and for many calls to other MCP servers done in code (loops, retries, filtering), so their tool schemas and raw results stay out of the conversation.",
  ];
  if (problem) lines.push(`Not ready: ${problem}. Until the user fixes this, run_python calls fail; tell the user the fix.`);
  if (servers.length === 0) lines.push("No other MCP servers are configured for it.");
  else {
    const names: string[] = [];
    let chars = 0;
    for (const s of servers) {
      if (!PLAIN_NAME.test(s) || chars + s.length > MAX_NAMES_CHARS) continue;
      names.push(s);
      chars += s.length + 2;
    }
    const more = servers.length - names.length;
    lines.push(
      `MCP servers its code can call (${servers.length}): ${names.join(", ")}${more > 0 ? `${names.length ? ", and" : ""} ${more} more` : ""}. Load them with run_python(servers=[...]); find tools with runtime.search_tool_docs_sync('...').`,
    );
  }
  const text = lines.join("\n");
  return text.length <= MAX_INSTRUCTIONS_CHARS ? text : `${text.slice(0, MAX_INSTRUCTIONS_CHARS - 1)}…`;
}
