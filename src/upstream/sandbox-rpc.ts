/**
 * Requests from sandbox code to the host: discovery, docs, search and tool calls. The sandbox is
 * untrusted: every method and its params are validated here, and a tool call must name a server
 * loaded for this session, a tool that server has, and an object of arguments.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";
import { formatIssues } from "../config/issues.ts";
import { maskUrl } from "../config/mask.ts";
import { hasHan, loadForeignWords, loadHanLexicon } from "../docs/search.ts";
import { argNameMap, pythonIdentifier, renderSignature, renderSummary, renderToolDoc } from "../docs/signature.ts";
import type { RpcFrame } from "../sandbox/frames.ts";
import { RUNTIME_HELPERS, type RpcMethod } from "../sandbox/protocol.ts";
import type { RequestHandler, RunScope } from "../session/request-gate.ts";
import { serverRefusal, toolRefusal } from "../policy.ts";
import { SkillNameSchema, SkillSchema } from "../skills/store.ts";
import type { PackageInstaller } from "../packages/install.ts";
import { SKILLS_SERVER, type UpstreamPool } from "./pool.ts";
import { askTimeoutMs, createProxiedCall, type ProxiedCallContext } from "./proxied-call.ts";
import { retryAfterSignIn } from "./sign-in.ts";
import { UpstreamError } from "./upstream-server.ts";

const name = z.string().min(1).max(256);

const PARAMS = {
  "servers.discovered": z.object({}),
  "servers.loaded": z.object({}),
  "servers.describe": z.object({ name }),
  "tools.list": z.object({ server: name }),
  "tools.docs": z.object({ server: name, tool: name.nullish(), detail: z.enum(["summary", "signature", "full"]).default("summary") }),
  "tools.search": z.object({ query: z.string().max(1000), limit: z.number().int().min(1).max(100).default(5) }),
  "tools.proxy_specs": z.object({ server: name }),
  "tools.call": z.object({
    server: name,
    tool: name,
    args: z.record(z.string(), z.unknown(), { error: "arguments must be an object (a dict of keyword arguments)" }),
  }),
  capabilities: z.object({}),
  "skills.save": SkillSchema,
  "skills.get": z.object({ name: SkillNameSchema }),
  "skills.list": z.object({}),
  "packages.install": z.object({
    requirements: z.array(z.unknown()).max(64),
    target: z.object({
      python: z.string().regex(/^\d+\.\d+(\.\d+)?$/, "not a Python version"),
      machine: z.string().regex(/^[A-Za-z0-9_]{1,32}$/),
      libc: z.string().regex(/^[a-z]{1,16}$/),
      libc_version: z.string().regex(/^[0-9.]{1,16}$/),
    }),
    installed: z.array(z.object({ name: z.string().min(1).max(200), version: z.string().min(1).max(100) })).max(5000),
    config: z.boolean().optional(),
  }),
} as const satisfies Record<RpcMethod, z.ZodType>;

export type SandboxRpcContext = ProxiedCallContext & {
  /** Installs into sessions (src/packages/install.ts); absent: runtime.install() is refused. */
  installer?: PackageInstaller;
};

/** The handler of requests from sandbox code; what it knows of the asking run comes with each request. */
export function createSandboxRpc(ctx: SandboxRpcContext): RequestHandler {
  const { pool } = ctx;

  const needServer = (server: string, opts: { starts?: boolean } = {}) => {
    const entry = pool.entry(server);
    if (!entry) {
      throw new UpstreamError(
        "unknown_server",
        `no MCP server named ${JSON.stringify(server)} is configured; configured: ${
          pool
            .entries()
            .map((e) => e.name)
            .join(", ") || "(none)"
        }`,
        { server },
      );
    }
    // A denied server is never started, not even to read its tool list.
    const refusal = opts.starts && ctx.policy ? serverRefusal(ctx.policy, server) : undefined;
    if (refusal) throw refusal;
    return entry;
  };

  const needTool = async (server: string, tool: string): Promise<Tool> => {
    let tools = await pool.tools(server);
    let found = tools.find((t) => t.name === tool);
    if (!found) {
      // The cache may be stale: ask the live server (at most every few seconds) before refusing.
      tools = await pool.tools(server, { live: true });
      found = tools.find((t) => t.name === tool);
    }
    if (!found) {
      const names = tools.map((t) => t.name);
      const more = names.length > 40 ? ` … (${names.length - 40} more: runtime.list_tools_sync(${JSON.stringify(server)}))` : "";
      throw new UpstreamError(
        "unknown_tool",
        `server ${server} has no tool ${JSON.stringify(tool)}; it has: ${names.slice(0, 40).join(", ")}${more}`,
        { server, tool },
      );
    }
    return found;
  };

  const proxiedCall = createProxiedCall(ctx, { needServer, needTool, notLoaded });
  /** Listing a remote server's tools may meet its sign-in: offered through the client where it can show a link. */
  const signedIn = (server: string, run: RunScope) =>
    retryAfterSignIn(ctx.signIn, { server, run, log: run.log.child({ server }), askTimeoutMs: askTimeoutMs(ctx) });

  const handlers: { [M in RpcMethod]: (p: z.infer<(typeof PARAMS)[M]>, run: RunScope) => Promise<unknown> } = {
    async "servers.discovered"(_p, run) {
      const loaded = run.loaded;
      return pool.entries().map((e) => ({
        name: e.name,
        alias: e.alias,
        type: e.transport.type,
        source: e.source,
        loaded: loaded.has(e.name),
        trusted: e.trust.state === "trusted",
      }));
    },
    async "servers.loaded"(_p, run) {
      const loaded = run.loaded;
      return pool
        .entries()
        .filter((e) => loaded.has(e.name))
        .map((e) => describe(e.name, loaded));
    },
    async "servers.describe"({ name: server }, run) {
      needServer(server);
      return describe(server, run.loaded);
    },
    async "tools.list"({ server }, run) {
      needServer(server, { starts: true });
      return (await signedIn(server, run)(() => pool.tools(server))).map((t) => ({
        name: t.name,
        summary: renderSummary(t).replace(/^[^:]*:\s*/, ""),
      }));
    },
    async "tools.docs"({ server, tool, detail }, run) {
      needServer(server, { starts: true });
      const observed = (t: Tool) => ({ observedReturns: t.outputSchema ? undefined : pool.resultShapes.get(server, t.name) });
      if (tool) {
        const t = await signedIn(server, run)(() => needTool(server, tool));
        return renderToolDoc(t, detail, observed(t));
      }
      return (await signedIn(server, run)(() => pool.tools(server))).map((t) => renderToolDoc(t, detail, observed(t)));
    },
    async "tools.search"({ query, limit }, run) {
      const { index, errors } = await pool.searchIndex((name) => !ctx.policy || !serverRefusal(ctx.policy, name));
      // A request in Chinese: the Chinese-English word list is read on the first one (han-lexicon.ts).
      if (hasHan(query))
        await loadHanLexicon().catch((err: unknown) =>
          run.log.info("search: Chinese word list unavailable, matching its characters only", { error: String(err) }),
        );
      // The glossary for requests in Spanish, Portuguese, French, German or Italian (foreign.ts), read on the first search.
      await loadForeignWords().catch((err: unknown) =>
        run.log.info("search: glossary unavailable, requests in other languages match their own words only", { error: String(err) }),
      );
      const loaded = run.loaded;
      // Tools the policy refuses are not offered: ask for more hits and drop them.
      const allowed = (h: { server: string; name: string }) =>
        h.server === SKILLS_SERVER || !ctx.policy || !toolRefusal(ctx.policy, h.server, h.name);
      const hits = index
        .search(query, ctx.policy ? limit * 4 : limit)
        .filter(allowed)
        .slice(0, limit)
        .map((h) =>
          h.server === SKILLS_SERVER && !pool.entry(SKILLS_SERVER)
            ? { server: SKILLS_SERVER, tool: h.name, summary: h.summary, loaded: true, skill: true }
            : { server: h.server, tool: h.name, summary: h.summary, loaded: loaded.has(h.server) },
        );
      return { hits, errors };
    },
    async "tools.proxy_specs"({ server }, run) {
      needServer(server, { starts: true });
      if (!run.loaded.has(server)) throw notLoaded(server);
      return (await signedIn(server, run)(() => pool.tools(server))).map((t) => {
        const py = pythonIdentifier(t.name);
        // The input schema goes along so the sandbox checks arguments before anything is sent.
        const observedReturns = t.outputSchema ? undefined : pool.resultShapes.get(server, t.name);
        return {
          name: t.name,
          py_name: py,
          signature: renderSignature(t, { alias: py, observedReturns }),
          arg_map: argNameMap(t),
          input_schema: t.inputSchema,
        };
      });
    },
    "tools.call": (p, run) => proxiedCall(p, run),
    async "skills.save"(skill) {
      return { file: pool.skills.save(skill) };
    },
    async "skills.get"({ name }) {
      const skill = pool.skills.get(name);
      if (!skill) {
        const names = pool.skills.list().map((s) => s.name);
        throw new UpstreamError(
          "unknown_skill",
          `no skill named ${JSON.stringify(name)}; saved skills: ${names.join(", ") || "none"} (runtime.save_skill(func) saves one)`,
        );
      }
      return skill;
    },
    async "skills.list"() {
      return pool.skills.list().map(({ name, description }) => ({ name, description }));
    },
    async "packages.install"(p, run) {
      const installer = ctx.installer;
      const unavailable = !installer
        ? "installs are not available in this bridge"
        : run.packages?.unavailable && `installs cannot reach this sandbox: ${run.packages.unavailable}`;
      if (unavailable) throw new UpstreamError("policy", unavailable, { decided_by: "policy" });
      try {
        const result = await installer!.install(p, run);
        run.packages?.add(result.installed);
        return result;
      } finally {
        if (p.config) run.packages?.alwaysDone();
      }
    },
    async capabilities(_p, run) {
      return capabilitySummary(pool, run.loaded);
    },
  };

  function describe(server: string, loaded: ReadonlySet<string>) {
    const e = pool.entry(server)!;
    const up = pool.peek(server);
    const t = e.transport;
    const tools = pool.knownTools(server);
    return {
      name: e.name,
      alias: e.alias,
      type: t.type,
      // Never the env values or headers: they hold the user's secrets.
      // Arguments are left out: after ${VAR} substitution they can hold tokens and passwords.
      ...(t.type === "stdio"
        ? { command: t.command, arg_count: t.args.length, env_keys: Object.keys(t.env) }
        : { url: maskUrl(t.url), header_keys: Object.keys(t.headers) }),
      source: e.source,
      client: e.client,
      scope: e.scope,
      shadowed: e.shadowed,
      loaded: loaded.has(server),
      // Whether it may start: a project's server waits for the user's approval.
      trust: e.trust.state,
      ...(e.trust.state === "trusted" ? {} : { trust_reason: e.trust.reason, approve_with: e.trust.approve }),
      status: up?.status ?? (e.trust.state === "trusted" ? "stopped" : "needs approval"),
      restarts: up?.restarts ?? 0,
      last_error: up?.lastError,
      tool_count: tools?.length,
    };
  }

  return async (frame: RpcFrame, run: RunScope) => {
    const method = frame.method as RpcMethod;
    const schema = PARAMS[method];
    if (!schema) throw new UpstreamError("bad_request", `unknown request ${JSON.stringify(frame.method)}`);
    const parsed = schema.safeParse(frame.params ?? {});
    if (!parsed.success) {
      throw new UpstreamError("bad_request", formatIssues(parsed.error.issues));
    }
    return (handlers[method] as (p: unknown, run: RunScope) => Promise<unknown>)(parsed.data, run);
  };
}

function notLoaded(server: string): UpstreamError {
  return new UpstreamError(
    "not_loaded",
    `server ${server} is not loaded in this session: call run_python with servers=[${JSON.stringify(server)}] (loaded servers stay loaded for later calls)`,
    { server },
  );
}

export function capabilitySummary(pool: UpstreamPool, loaded: ReadonlySet<string>): string {
  const servers = pool.entries();
  const lines = [
    `${servers.length} MCP server(s) configured${servers.length ? `: ${servers.map((s) => `${s.name}${loaded.has(s.name) ? " (loaded)" : s.trust.state === "trusted" ? "" : " (needs the user's approval)"}`).join(", ")}` : ""}.`,
    ...HELPER_LINES,
  ];
  return lines.join("\n");
}

export const HELPER_LINES = [
  "from mcp import runtime:",
  ...RUNTIME_HELPERS.filter((h) => h.call).map((h) => `  ${h.call.padEnd(64)} ${h.does}`.trimEnd()),
  "Load servers with run_python(servers=[...]); then await mcp_<alias>.<tool>(**kwargs),",
  "mcp_servers['name'], or from mcp.servers.<alias> import *; help(mcp_<alias>.<tool>) shows the signature.",
  "Results: structuredContent -> dict; JSON text -> parsed value; other text -> str; images/audio -> McpImage/McpAudio",
  "(.data bytes, .mime_type); an upstream error raises McpToolError (.server, .tool, .message).",
  "Some tools wait for the user's approval; a refusal (by policy or the user) raises McpPolicyError (.decided_by).",
];
