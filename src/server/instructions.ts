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

/**
 * Clients that run several conversations through one connection to us, by the name they give at
 * initialize. Nothing in their requests tells the conversations apart (opencode 1.18 sends only a
 * progress token in `_meta`, and `opencode serve` keeps one bridge per project folder for every
 * session), so calls without `session` share one interpreter: their model is told to keep its own.
 */
const MANY_CONVERSATIONS: Record<string, string> = { opencode: "opencode" };

/** The words a model of such a client reads; the real-client suite's scripted model looks for them. */
export const OWN_SESSION_HINT = 'make the first run_python call of each conversation with session="new"';

/** The instructions for the client that introduced itself as `clientName`. */
export function instructionsFor(instructions: string, clientName: string | undefined): string {
  const client = clientName === undefined ? undefined : MANY_CONVERSATIONS[clientName];
  if (!client) return instructions;
  const note = `${client} runs many conversations through this one server, and calls without \`session\` share one interpreter: ${OWN_SESSION_HINT}, then pass the handle its result names ([session] s_…) as session in every later call of that conversation.`;
  // After the first line: the server list, which may be cut at the cap, comes after.
  const [first, ...rest] = instructions.split("\n");
  return [first, note, ...rest].join("\n");
}
