/**
 * A ~/.claude.json shaped like a heavy Claude Code user's, for bench/claude-json.ts: many projects, each
 * with the history Claude Code keeps (prompts, with pasted text now and then: escapes, quotes, unicode),
 * the working folder's own project among them with a long history too, written as Claude Code writes it
 * (JSON.stringify with two spaces). Deterministic. `mb` 0: only the parts the readers use.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export function generateClaudeJson(mb: number, home: string, cwd: string): string {
  let seed = 42;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const words = 'fix the parser bug in "src/app.ts" path\\to\\file ünïcødé 日本語 🎉 tab\tand\nnewline run tests please refactor'.split(
    " ",
  );
  const sentence = (n: number) => Array.from({ length: n }, () => words[rnd(words.length)]).join(" ");
  const history = () =>
    Array.from({ length: 100 }, () => ({
      display: sentence(20 + rnd(200)),
      pastedContents: rnd(5) === 0 ? { "1": { id: 1, type: "text", content: sentence(500) } } : {},
    }));
  const projects: Record<string, unknown> = {};
  const own = {
    allowedTools: [],
    history: mb > 0 ? history() : [],
    mcpServers: { mine: { type: "stdio", command: "node", args: ["mine.js"] } },
    hasTrustDialogAccepted: true,
    lastSessionId: "session-own",
  };
  let size = 0;
  for (let i = 0; size < mb * 1e6; i++) {
    const p = {
      allowedTools: [],
      history: history(),
      mcpContextUris: [],
      mcpServers: i % 7 === 0 ? { old: { type: "stdio", command: "node", args: ["x.js"], env: {} } } : {},
      enabledMcpjsonServers: [],
      disabledMcpjsonServers: [],
      hasTrustDialogAccepted: i % 2 === 0,
      projectOnboardingSeenCount: i % 4,
      lastSessionId: `session-${i}`,
    };
    projects[`/home/user/work/project-${i}`] = p;
    // The working folder's own project sits among the others, not first or last.
    if (i === 3) projects[cwd] = own;
    size += JSON.stringify(p).length;
  }
  projects[cwd] = own;
  const doc: Record<string, unknown> = {
    numStartups: 412,
    mcpServers: { fs: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", home] } },
    projects,
  };
  if (mb > 0) doc.cachedChangelog = sentence(5000);
  const file = join(home, ".claude.json");
  writeFileSync(file, JSON.stringify(doc, null, 2));
  return file;
}
