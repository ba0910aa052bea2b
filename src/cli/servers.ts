/**
 * `mcp-code-exec servers`: which MCP servers were found, from which client's file and scope, whether
 * each may start, every path looked at, and what was wrong. `servers trust NAME` / `untrust NAME`
 * record the user's approval of a project's server.
 */
import { createApp } from "../app.ts";
import { statusRow, type RemoteEntry, type StatusRow } from "../auth/status.ts";
import { createTokenStore, type TokenStore } from "../auth/token-store.ts";
import { CLIENT_ORDER_TEXT, clientLabel } from "../config/client-names.ts";
import { displayTransport, maskArgs, maskCommandLine, maskUrl } from "../config/mask.ts";
import { formatProblem, type Discovery, type OAuthSettings, type ServerEntry } from "../config/servers.ts";
import { addTrust, removeTrust } from "../config/trust-store.ts";
import { BridgeError } from "../errors.ts";

export interface ServersOptions {
  json?: boolean;
  tools?: boolean;
}

/** Entry point of `servers [list|trust|untrust] [NAME]`. */
export async function servers(action: string | undefined, name: string | undefined, opts: ServersOptions): Promise<number> {
  if (action === undefined || action === "list") return list(opts);
  if (action === "trust" || action === "untrust") {
    if (!name)
      throw new BridgeError("INVALID_INPUT", `which server? \`mcp-code-exec servers ${action} NAME\``, {
        hint: "`mcp-code-exec servers` lists them",
      });
    return action === "trust" ? trust(name) : untrust(name);
  }
  throw new BridgeError("INVALID_INPUT", `unknown servers action "${action}"`, {
    hint: "use `mcp-code-exec servers`, `servers trust NAME` or `servers untrust NAME`",
  });
}

function discover(): { d: Discovery; close: () => Promise<void>; app: ReturnType<typeof createApp> } {
  const app = createApp({ ...process.env, MCP_BRIDGE_LOG_LEVEL: process.env.MCP_BRIDGE_LOG_LEVEL ?? "ERROR" });
  return { d: app.pool().discovery, close: () => app.close(), app };
}

async function list(opts: ServersOptions): Promise<number> {
  const { d, close, app } = discover();
  const pool = app.pool();
  const toolCounts = new Map<string, number | string>();
  if (opts.tools) {
    await Promise.all(
      d.servers.map(async (s) => {
        const blocked = pool.blocked(s.name);
        if (blocked && !pool.knownTools(s.name)) return void toolCounts.set(s.name, "not started: needs approval");
        try {
          toolCounts.set(s.name, (await pool.tools(s.name)).length);
        } catch (err) {
          toolCounts.set(s.name, `error: ${(err as Error).message}`);
        }
      }),
    );
  }
  await close();
  // Offline: what the token store knows (a call that met a 401 without a usable sign-in is recorded there).
  const store = createTokenStore(app.config.stateDir);
  if (opts.json) {
    const out = {
      order: CLIENT_ORDER_TEXT,
      trustFile: d.trustFile,
      servers: d.servers.map((s) => {
        const a = authRow(s, store);
        return {
          ...serverJson(s),
          ...(opts.tools ? { tools: toolCounts.get(s.name) } : {}),
          ...(a ? { auth: { state: a.state, detail: a.detail } } : {}),
        };
      }),
      skipped: d.skipped,
      problems: d.problems,
      looked: d.looked,
    };
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return d.problems.length ? 1 : 0;
  }
  const w = (s: string) => process.stdout.write(`${s}\n`);
  if (d.servers.length) {
    const waiting = d.servers.filter((s) => s.trust.state !== "trusted").length;
    w(`${d.servers.length} MCP server(s)${waiting ? `, ${waiting} waiting for your approval` : ""}:`);
  } else {
    w("No MCP servers found.");
  }
  for (const s of d.servers) {
    const state = s.trust.state !== "trusted" ? "NEEDS APPROVAL" : s.needs.length ? "NEEDS A VALUE" : "ready";
    const count = toolCounts.get(s.name);
    const tools = !opts.tools ? "" : typeof count === "number" ? `  [${count} tools]` : `  [${count}]`;
    w(`  ${s.name} (mcp_${s.alias}) ${state}: ${clientLabel(s.client)}, ${s.scope} scope, ${s.transport.type}${tools}`);
    w(`      ${displayTransport(s.transport)}`);
    if (s.transport.type !== "stdio" && s.transport.headersHelper)
      w(`      headersHelper (runs on this computer at each connection): ${maskCommandLine(s.transport.headersHelper)}`);
    w(`      from ${s.source}${s.at ? ` (${s.at})` : ""}`);
    if (s.shadowed.length) w(`      also defined in ${s.shadowed.join(", ")} (not used)`);
    if (s.trust.state === "trusted") w(`      trusted: ${s.trust.reason}`);
    else w(`      not started: ${s.trust.reason}\n      approve: ${s.trust.approve}`);
    const a = authRow(s, store);
    if (a && a.state !== "none") w(`      auth: ${a.detail}`);
    for (const n of s.needs) w(`      needs ${n.what} at ${n.at}: ${n.why}; ${n.supply}`);
    for (const n of s.notes) w(`      note: ${n}`);
  }
  if (d.skipped.length) {
    w("Not used:");
    for (const s of d.skipped) w(`  ${s.name} in ${s.source}: ${s.reason}`);
  }
  if (d.problems.length) {
    w("Problems:");
    for (const p of d.problems) w(`  ${formatProblem(p)}`);
  }
  w(`Looked at (in this order; ${CLIENT_ORDER_TEXT}):`);
  for (const l of d.looked) {
    w(`  ${l.status.padEnd(10)} ${l.path}  [${clientLabel(l.client)}${l.scope ? `, ${l.scope}` : ""}]${l.note ? `  ${l.note}` : ""}`);
  }
  if (!d.servers.length) {
    w("");
    w("To give sandbox code other MCP servers, configure them in your MCP client as usual (for example");
    w("`claude mcp add --scope user NAME -- COMMAND ARGS`), or put a file in ~/.config/mcp/servers/, e.g.");
    w('~/.config/mcp/servers/memory.json: {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}');
    w("then run `mcp-code-exec servers` again.");
  }
  return d.problems.length ? 1 : 0;
}

/** One server as `servers --json` shows it: secrets masked, env and header values never shown raw. */
export function serverJson(s: ServerEntry): Record<string, unknown> {
  const t = s.transport;
  return {
    name: s.name,
    alias: s.alias,
    client: s.client,
    scope: s.scope,
    source: s.source,
    at: s.at,
    type: t.type,
    ...(t.type === "stdio"
      ? { command: t.command, args: maskArgs(t.args), env: maskMap(t.env), ...(t.cwd ? { cwd: t.cwd } : {}) }
      : {
          url: maskUrl(t.url),
          headers: maskMap(t.headers),
          ...(t.headersHelper ? { headersHelper: maskCommandLine(t.headersHelper) } : {}),
          ...(t.oauth ? { oauth: maskOAuth(t.oauth) } : {}),
        }),
    trust: s.trust,
    needs: s.needs,
    notes: s.notes,
    digest: s.digest,
    shadowed: s.shadowed,
  };
}

/** Sign-in state of a remote server (undefined for stdio ones). */
function authRow(s: ServerEntry, store: TokenStore): StatusRow | undefined {
  return s.transport.type === "stdio" ? undefined : statusRow(s as RemoteEntry, store);
}

function maskOAuth(o: OAuthSettings): Record<string, unknown> {
  return { ...o, ...(o.clientSecret ? { clientSecret: "***" } : {}) };
}

function maskMap(m: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(m))
    out[k] = /token|secret|passw|key|auth|credential|cookie|session/i.test(k) ? "***" : maskArgs([v])[0]!;
  return out;
}

function trust(name: string): number {
  const { d } = discover();
  const s = d.servers.find((x) => x.name === name);
  if (!s) throw notFound(name, d);
  const w = (line: string) => process.stdout.write(`${line}\n`);
  if (s.trust.state === "trusted" && !s.trust.reason.startsWith("approved with")) {
    w(`${name} needs no approval: ${s.trust.reason}.`);
    return 0;
  }
  addTrust(d.trustFile, { name, file: s.source, client: s.client, digest: s.digest, approved: new Date().toISOString() });
  w(`Approved ${name} (${clientLabel(s.client)}, ${s.scope} scope, ${s.source}). It will run:`);
  w(`  ${displayTransport(s.transport)}`);
  if (s.transport.type !== "stdio" && s.transport.headersHelper)
    w(`  and, at each connection, its headersHelper on this computer: ${maskCommandLine(s.transport.headersHelper)}`);
  w(
    `Recorded in ${d.trustFile}. If anything in its definition changes (env and header values included), or a file it reads or names in the repository, it needs approval again.`,
  );
  return 0;
}

function untrust(name: string): number {
  const { d } = discover();
  const s = d.servers.find((x) => x.name === name);
  const removed = removeTrust(d.trustFile, name, s?.source);
  const again = s && removed === 0 ? removeTrust(d.trustFile, name) : 0;
  const n = removed + again;
  process.stdout.write(
    n ? `Removed ${n} approval(s) of ${name} from ${d.trustFile}.\n` : `No approval of ${name} is recorded in ${d.trustFile}.\n`,
  );
  if (s && s.trust.state === "trusted" && !s.trust.reason.startsWith("approved with")) {
    process.stdout.write(`${name} is still trusted: ${s.trust.reason}.\n`);
  }
  return 0;
}

function notFound(name: string, d: Discovery): BridgeError {
  const skipped = d.skipped.find((s) => s.name === name);
  if (skipped) return new BridgeError("INVALID_INPUT", `${name} is not used: ${skipped.reason} (${skipped.source})`);
  return new BridgeError("INVALID_INPUT", `no MCP server named ${JSON.stringify(name)} was found`, {
    hint: `found: ${d.servers.map((s) => s.name).join(", ") || "none"}; \`mcp-code-exec servers\` shows where it looked`,
  });
}
