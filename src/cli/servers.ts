/** `mcp-code-exec servers`: which MCP servers were found, from which files, and what was wrong. */
import { createApp } from "../app.ts";
import { formatProblem } from "../config/servers.ts";

export async function servers(opts: { json?: boolean; tools?: boolean }): Promise<number> {
  const app = createApp({ ...process.env, MCP_BRIDGE_LOG_LEVEL: process.env.MCP_BRIDGE_LOG_LEVEL ?? "ERROR" });
  const pool = app.pool();
  const d = pool.discovery;
  const toolCounts = new Map<string, number | string>();
  if (opts.tools) {
    await Promise.all(
      d.servers.map(async (s) => {
        try {
          toolCounts.set(s.name, (await pool.tools(s.name)).length);
        } catch (err) {
          toolCounts.set(s.name, `error: ${(err as Error).message}`);
        }
      }),
    );
    await app.close();
  }
  if (opts.json) {
    const out = {
      servers: d.servers.map((s) => ({
        name: s.name,
        alias: s.alias,
        type: s.transport.type,
        ...(s.transport.type === "stdio" ? { command: s.transport.command, args: s.transport.args } : { url: s.transport.url }),
        source: s.source,
        shadowed: s.shadowed,
        ...(opts.tools ? { tools: toolCounts.get(s.name) } : {}),
      })),
      skipped: d.skipped,
      problems: d.problems,
    };
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return d.problems.length ? 1 : 0;
  }
  const w = (s: string) => process.stdout.write(`${s}\n`);
  w(d.servers.length ? `${d.servers.length} MCP server(s):` : "No MCP servers configured.");
  for (const s of d.servers) {
    const what = s.transport.type === "stdio" ? `${s.transport.command} ${s.transport.args.join(" ")}`.trim() : s.transport.url;
    const tools = opts.tools ? `  [${toolCounts.get(s.name)} tools]` : "";
    w(`  ${s.name} (mcp_${s.alias}, ${s.transport.type}): ${what}${tools}`);
    w(`      from ${s.source}${s.shadowed.length ? `; also defined in ${s.shadowed.join(", ")} (ignored)` : ""}`);
  }
  if (d.skipped.length) {
    w("Skipped:");
    for (const s of d.skipped) w(`  ${s.name} in ${s.source}: ${s.reason}`);
  }
  if (d.problems.length) {
    w("Problems:");
    for (const p of d.problems) w(`  ${formatProblem(p)}`);
  }
  return d.problems.length ? 1 : 0;
}
