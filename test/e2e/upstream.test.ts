/**
 * Upstream MCP servers from npm (and one misbehaving fixture), configured in the files real clients
 * write, reached from sandbox code through proxies in the compiled bridge.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getEncoding } from "js-tiktoken";
import { startBridge, type BridgeHandle } from "../support/bridge.ts";
import { BINARY } from "../support/binary.ts";
import { bridgeEnv, ENGINES, ROOT } from "../support/env.ts";

const NM = join(ROOT, "node_modules", "@modelcontextprotocol");
const EVERYTHING = join(NM, "server-everything", "dist", "index.js");
const MEMORY = join(NM, "server-memory", "dist", "index.js");
const FILESYSTEM = join(NM, "server-filesystem", "dist", "index.js");
const FLAKY = join(ROOT, "test", "fixtures", "flaky-server.ts");
const SECRET = `secret-${Math.random().toString(36).slice(2)}`;

interface World {
  home: string;
  cwd: string;
  files: string;
  state: string;
  httpPort: number;
  http: ReturnType<typeof Bun.spawn>;
  sse: ReturnType<typeof Bun.spawn>;
}

function write(path: string, value: unknown) {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value, null, 2));
}

async function makeWorld(): Promise<World> {
  const home = mkdtempSync(join(tmpdir(), "mcx-home-"));
  const cwd = mkdtempSync(join(tmpdir(), "mcx-proj-"));
  const files = mkdtempSync(join(tmpdir(), "mcx-files-"));
  const state = mkdtempSync(join(tmpdir(), "mcx-state-"));
  const httpPort = 20000 + Math.floor(Math.random() * 20000);
  const http = Bun.spawn(["node", EVERYTHING, "streamableHttp"], {
    env: { ...process.env, PORT: String(httpPort) },
    stdout: "ignore",
    stderr: "pipe",
  });
  const sse = Bun.spawn(["node", EVERYTHING, "sse"], {
    env: { ...process.env, PORT: String(httpPort + 1) },
    stdout: "ignore",
    stderr: "pipe",
  });
  // Claude Code project file
  write(join(cwd, ".mcp.json"), { mcpServers: { everything: { command: "node", args: [EVERYTHING] } } });
  // Cursor user file, with its ${env:VAR} substitution
  write(join(home, ".cursor", "mcp.json"), {
    mcpServers: { memory: { command: "node", args: [MEMORY], env: { MEMORY_FILE_PATH: "${env:MCX_MEMORY_FILE}", API_TOKEN: SECRET } } },
  });
  // VS Code: "servers" and "type"
  write(join(cwd, ".vscode", "mcp.json"), {
    servers: {
      filesystem: { type: "stdio", command: "node", args: [FILESYSTEM, files] },
      "everything-http": { type: "http", url: `http://127.0.0.1:${httpPort}/mcp`, headers: { Authorization: `Bearer ${SECRET}` } },
      "everything-sse": { type: "sse", url: `http://127.0.0.1:${httpPort + 1}/sse` },
    },
  });
  // our own folder
  write(join(home, ".config", "mcp", "servers", "flaky.json"), { mcpServers: { flaky: { command: "bun", args: [FLAKY] } } });
  // a broken file and a self-reference: reported/skipped, the rest still loads
  write(join(home, "MCPs", "broken.json"), '{"mcpServers": {"oops": {"command": "x",}');
  write(join(cwd, "mcp-servers", "self.json"), { mcpServers: { myself: { command: BINARY } } });
  // the HTTP servers must be listening before a bridge reaches them
  for (const port of [httpPort, httpPort + 1]) {
    for (let i = 0; i < 100; i++) {
      const ok = await fetch(`http://127.0.0.1:${port}/not-a-route`, { signal: AbortSignal.timeout(1000) }).then(
        () => true,
        () => false,
      );
      if (ok) break;
      await Bun.sleep(100);
    }
  }
  return { home, cwd, files, state, httpPort, http, sse };
}

const engine = ENGINES[0]!;
let world: World;
let bridge: BridgeHandle;
// filesystem's write_file is marked destructive, so it asks first; this client cannot answer questions,
// so the tool is named in allowTools, the way docs/approvals.md tells users to (approvals: test/e2e/approvals.test.ts).
const env = () => ({
  HOME: world.home,
  MCP_BRIDGE_RUNTIME: engine,
  MCP_BRIDGE_STATE_DIR: world.state,
  MCX_MEMORY_FILE: join(world.files, "memory.jsonl"),
  MCP_BRIDGE_ALLOW_TOOLS: "*,filesystem/write_file",
});

beforeAll(async () => {
  world = await makeWorld();
  // The project's own servers (.mcp.json, .vscode/mcp.json) start only once approved.
  for (const name of ["everything", "filesystem", "everything-http", "everything-sse"]) {
    const t = Bun.spawnSync([BINARY, "servers", "trust", name], { cwd: world.cwd, env: bridgeEnv(env()), stdout: "pipe", stderr: "pipe" });
    if (t.exitCode !== 0) throw new Error(`servers trust ${name}: ${t.stderr.toString()}`);
  }
  bridge = await startBridge(env(), { cwd: world.cwd });
}, 60_000);
afterAll(async () => {
  await bridge?.close();
  world?.http.kill();
  world?.sse.kill();
});

describe("discovery from code", () => {
  test("servers from every file format are listed, with the file that defined them", async () => {
    const r = await bridge.run(
      "from mcp import runtime\nsorted(runtime.list_servers_sync()), {s['name']: s['source'] for s in runtime.discovered_servers()}",
    );
    const [names, sources] = [r.structured.value as string, r.structured.value as string];
    expect(names).toStartWith("(['everything', 'everything-http', 'everything-sse', 'filesystem', 'flaky', 'memory'], {");
    expect(sources).toContain(`'everything': '${join(world.cwd, ".mcp.json")}'`);
    expect(sources).toContain(`'memory': '${join(world.home, ".cursor", "mcp.json")}'`);
    expect(sources).toContain(`'filesystem': '${join(world.cwd, ".vscode", "mcp.json")}'`);
    expect(sources).not.toContain("myself");
    expect(sources).not.toContain("oops");
  });

  test("describe_server names the transport and source but never env values or headers", async () => {
    const r = await bridge.run("from mcp import runtime\n(runtime.describe_server('memory'), runtime.describe_server('everything-http'))");
    const v = String(r.structured.value);
    expect(v).toContain("'env_keys': ['MEMORY_FILE_PATH', 'API_TOKEN']");
    expect(v).toContain("'arg_count': 1");
    expect(v).not.toContain("'args'");
    expect(v).toContain("'header_keys': ['Authorization']");
    expect(v).not.toContain(SECRET);
  });

  test("search ranks tools across servers by meaning", async () => {
    const r = await bridge.run(
      "from mcp import runtime\nhits = runtime.search_tool_docs_sync('add two numbers together', limit=3)\n[(h['server'], h['tool']) for h in hits]",
    );
    expect(String(r.structured.value)).toMatch(/^\[\('everything(-http)?', 'get-sum'\)/);
    // As printed: one line per hit, then how to see all of a server's tools (a miss usually names the right server).
    const printed = await bridge.run("print(runtime.search_tool_docs_sync('add two numbers together', limit=3))");
    const lines = printed.text.trim().split("\n");
    expect(lines[0]).toMatch(/^everything(-http)?\.get-sum( \(not loaded\))?: /);
    expect(lines.at(-1)).toMatch(
      /^\(not there\? runtime\.list_tools_sync\(server\) lists all of a server's tools: everything(-http)?(, [\w-]+){0,2}\)$/,
    );
    const g = await bridge.run(
      "[(h['server'], h['tool']) for h in runtime.search_tool_docs_sync('remember a fact about a person in the knowledge graph', limit=5)]",
    );
    expect(String(g.structured.value)).toContain("('memory', ");
    const typo = await bridge.run("[h['tool'] for h in runtime.search_tool_docs_sync('wriet a fiel', limit=5)]");
    expect(String(typo.structured.value)).toContain("'write_file'");
    // In Chinese ("write a file"), for tools described in English: the word list is read on this request.
    const zh = await bridge.run("[h['tool'] for h in runtime.search_tool_docs_sync('写文件', limit=3)]");
    expect(String(zh.structured.value)).toContain("'write_file'");
    // In English, for a tool described only in Chinese: its words' English is indexed with it.
    const en = await bridge.run("[h['tool'] for h in runtime.search_tool_docs_sync('look up the weather of a city by its name', limit=3)]");
    expect(String(en.structured.value)).toStartWith("['chaxun_tianqi'");
    // In Spanish and German, for tools described in English: the glossary (foreign-words.txt) is built in.
    const es = await bridge.run(
      "[h['tool'] for h in runtime.search_tool_docs_sync('¿puedes escribir un archivo nuevo con el texto hola?', limit=3)]",
    );
    expect(String(es.structured.value)).toContain("'write_file'");
    const de = await bridge.run("[h['tool'] for h in runtime.search_tool_docs_sync('Verzeichnisse auflisten bitte', limit=3)]");
    expect(String(de.structured.value)).toContain("'list_directory'");
  });

  test("docs come at three levels of detail", async () => {
    const summary = await bridge.run("from mcp import runtime\nruntime.query_tool_docs_sync('everything', 'echo')");
    expect(summary.structured.value).toBe("echo: Echoes back the input string");
    const sig = await bridge.run("runtime.query_tool_docs_sync('everything', 'echo', detail='signature')");
    expect(String(sig.structured.value)).toContain("async def echo(*, message: str):");
    const full = await bridge.run(
      "d = runtime.query_tool_docs_sync('everything', 'echo', detail='full')\nsorted(d['inputSchema']['properties'])",
    );
    expect(full.structured.value).toBe("['message']");
    const all = await bridge.run("len(runtime.list_tools_sync('filesystem')) > 5");
    expect(all.structured.value).toBe("True");
  });

  test("the capabilities resource lists the helpers and a checklist", async () => {
    const res = await bridge.client.readResource({ uri: "resource://mcp-code-exec/capabilities" });
    const text = (res.contents[0] as { text: string }).text;
    expect(text).toContain("6 MCP server(s) configured");
    expect(text).toContain("search_tool_docs_sync");
    expect(text).toContain("Checklist:");
  });
});

describe("calling upstream tools through proxies", () => {
  test("everything over stdio: mcp_<alias>, mcp_servers[...], from mcp.servers import, help()", async () => {
    const r = await bridge.run(
      "a = await mcp_everything.echo(message='hi')\nb = await mcp_servers['everything'].get_sum(a=2, b=3)\nfrom mcp.servers.everything import echo\nc = await echo(message='again')\n(a, b, c)",
      { servers: ["everything"] },
    );
    expect(r.isError).toBe(false);
    expect(r.structured.value).toBe("('Echo: hi', 'The sum of 2 and 3 is 5.', 'Echo: again')");
    const help = await bridge.run("help(mcp_everything.echo)", { servers: ["everything"] });
    expect(String(help.structured.stdout)).toContain("echo(*, message: str)");
    expect(String(help.structured.stdout)).toContain("Echoes back the input string");
  });

  test("everything over Streamable HTTP, with ${VAR}-free headers passed through", async () => {
    const r = await bridge.run("await mcp_everything_http.echo(message='over http')", { servers: ["everything-http"] });
    expect(r.structured.value).toBe("'Echo: over http'");
  });

  test("everything over SSE", async () => {
    const r = await bridge.run("await mcp_everything_sse.echo(message='over sse')", { servers: ["everything-sse"] });
    expect(r.structured.value).toBe("'Echo: over sse'");
  });

  test("a tool call that outlives MCP_BRIDGE_TOOL_TIMEOUT fails alone; the server keeps answering", async () => {
    const b = await startBridge({ ...env(), MCP_BRIDGE_TOOL_TIMEOUT: "1" }, { cwd: world.cwd });
    try {
      const r = await b.run(
        "try:\n    await mcp_flaky.sleep(seconds=5)\n    out = 'no error'\nexcept McpToolError as e:\n    out = (e.kind, str(e))\nout",
        { servers: ["flaky"] },
      );
      expect(r.structured.value).toBe("('timeout', 'flaky.sleep did not answer within 1s (MCP_BRIDGE_TOOL_TIMEOUT)')");
      expect(String((await b.run("(await mcp_flaky.ping())['pong']")).structured.value)).toBe("True");
    } finally {
      await b.close();
    }
  });

  test("memory: a knowledge graph round trip returns parsed JSON", async () => {
    const r = await bridge.run(
      "await mcp_memory.create_entities(entities=[{'name': 'Ada', 'entityType': 'person', 'observations': ['wrote the first program']}])\ng = await mcp_memory.read_graph()\n[e['name'] for e in g['entities']]",
      { servers: ["memory"] },
    );
    expect(r.structured.value).toBe("['Ada']");
    expect(readFileSync(join(world.files, "memory.jsonl"), "utf8")).toContain("Ada");
  });

  test("filesystem: write and read a file in the allowed folder on the host", async () => {
    const path = join(world.files, "note.txt");
    const r = await bridge.run(
      `await mcp_filesystem.write_file(path=${JSON.stringify(path)}, content='written from the sandbox')\nawait mcp_filesystem.read_text_file(path=${JSON.stringify(path)})`,
      { servers: ["filesystem"] },
    );
    expect(String(r.structured.value)).toContain("written from the sandbox");
    expect(readFileSync(path, "utf8")).toBe("written from the sandbox");
  });

  test("asyncio.gather runs many calls concurrently", async () => {
    const r = await bridge.run(
      "import asyncio\nrs = await asyncio.gather(*[mcp_everything.get_sum(a=i, b=i) for i in range(200)])\nlen(rs), rs[199]",
      { servers: ["everything"] },
    );
    expect(r.structured.value).toBe("(200, 'The sum of 199 and 199 is 398.')");
  });

  test("results map to Python: structured -> dict, image -> McpImage, plain text -> str; renamed keyword args", async () => {
    const r = await bridge.run(
      "s = await mcp_flaky.stats(values=[1, 2, 3.5])\nimg = await mcp_flaky.pixel()\np = await mcp_flaky.plain(from_='the sandbox')\n(s, type(img).__name__, img.mime_type, img.data[:4], p)",
      { servers: ["flaky"] },
    );
    expect(r.structured.value).toBe("({'count': 3, 'total': 6.5}, 'McpImage', 'image/png', b'\\x89PNG', 'hello from the sandbox')");
  });

  test("an upstream error result raises McpToolError with server, tool and message", async () => {
    const r = await bridge.run(
      "try:\n    await mcp_flaky.fail(why='testing')\nexcept McpToolError as e:\n    out = (e.server, e.tool, str(e))\nout",
      { servers: ["flaky"] },
    );
    expect(r.structured.value).toBe("('flaky', 'fail', 'flaky.fail returned an error: failed on purpose: testing')");
  });

  test("an upstream that crashes mid-call fails that call clearly; the next call restarts it", async () => {
    const before = await bridge.run("(await mcp_flaky.ping())['pid']", { servers: ["flaky"] });
    const r = await bridge.run("try:\n    await mcp_flaky.crash()\n    out = 'no error'\nexcept McpToolError as e:\n    out = str(e)\nout");
    expect(String(r.structured.value)).toContain("stopped during the call to crash");
    const after = await bridge.run(
      "from mcp import runtime\n(await mcp_flaky.ping())['pid'], runtime.describe_server('flaky')['restarts']",
    );
    expect(after.structured.value).not.toStartWith(`(${before.structured.value},`);
    expect(String(after.structured.value)).toEndWith(", 1)");
  });

  test("wrong keyword arguments fail in Python before anything is sent", async () => {
    const r = await bridge.run("await mcp_everything.echo(msg='typo')", { servers: ["everything"] });
    expect(r.isError).toBe(true);
    expect((r.structured.error as { message: string }).message).toContain("unexpected keyword argument 'msg' (did you mean 'message'?)");
  });

  test("a tool with no outputSchema shows the shape of results it returned (keys and types, never values)", async () => {
    const r = await bridge.run(
      "p = await mcp_flaky.ping()\nfrom mcp import runtime\n(p['pid'], runtime.query_tool_docs_sync('flaky', 'ping', detail='signature'))",
      { servers: ["flaky"] },
    );
    const value = String(r.structured.value);
    expect(value).toContain("Returns (observed, not declared): {pong: bool, pid: int");
    const pid = value.match(/^\((\d+),/)![1]!;
    const stored = readFileSync(join(world.state, "result-shapes.json"), "utf8");
    expect(stored).toContain("pid: int");
    expect(stored).not.toContain(pid);
  });

  test("arguments are checked against the input schema in the sandbox; upstream refusals raise the same error", async () => {
    const wrongEnum = await bridge.run(
      "try:\n    await mcp_everything.get_structured_content(location='Boston')\nexcept McpArgumentError as e:\n    out = (type(e).__name__, e.argument, str(e))\nout",
      { servers: ["everything"] },
    );
    expect(String(wrongEnum.structured.value)).toContain(
      "('McpArgumentError', 'location', \"everything.get_structured_content: argument 'location' must be one of 'New York', 'Chicago', 'Los Angeles' (got 'Boston')",
    );
    const wrongType = await bridge.run(
      "from mcp import McpArgumentError\ntry:\n    await mcp_everything.get_sum(a='1', b=2)\nexcept McpArgumentError as e:\n    out = str(e)\nout",
    );
    expect(String(wrongType.structured.value)).toContain("argument 'a' must be float, not str '1'");
    // None for an optional argument means "not given" (the signature says `= None`).
    const ok = await bridge.run("await mcp_everything.get_sum(a=1, b=2)");
    expect(String(ok.structured.value)).toContain("3");
    // runtime.call_tool skips the proxy's check: the upstream's own refusal comes back as the same error.
    const upstream = await bridge.run(
      "from mcp import runtime, McpArgumentError\ntry:\n    await runtime.call_tool('everything', 'get-sum', {'a': 'x', 'b': 1})\n    out = 'no error'\nexcept McpArgumentError as e:\n    out = (type(e).__name__, str(e))\nout",
    );
    expect(String(upstream.structured.value)).toStartWith("('McpArgumentError', 'everything.get-sum refused its arguments");
  });

  test("unknown tools, unloaded servers and non-object arguments get errors that say what to do", async () => {
    const unknownTool = await bridge.run("mcp_everything.ech0", { servers: ["everything"] });
    expect((unknownTool.structured.error as { message: string }).message).toContain("has no tool 'ech0'");
    const fresh = await startBridge(env(), { cwd: world.cwd });
    try {
      const name = await fresh.run("mcp_memory");
      expect((name.structured.error as { message: string }).message).toContain("servers=['memory']");
      const viaMap = await fresh.run("mcp_servers['memory']");
      expect((viaMap.structured.error as { type: string }).type).toBe("McpServerNotLoaded");
      const direct = await fresh.run("from mcp import runtime\nawait runtime.call_tool('memory', 'read_graph', {})");
      expect((direct.structured.error as { message: string }).message).toContain("not loaded in this session");
      const notObject = await fresh.run("await runtime.call_tool('flaky', 'ping', [1, 2])", { servers: ["flaky"] });
      expect((notObject.structured.error as { message: string }).message).toContain("arguments must be an object");
      const unknownServer = await fresh.run("1", { servers: ["nope"] });
      expect(unknownServer.isError).toBe(true);
      expect(unknownServer.text).toContain("unknown MCP server(s): nope");
      expect((await fresh.run("1 + 1")).structured.value).toBe("2");
    } finally {
      await fresh.close();
    }
  });
});

describe("tool lists are cached on disk", () => {
  test("a new bridge searches from the cache without starting the servers", async () => {
    const cached = readdirSync(join(world.state, "tool-cache"));
    expect(cached.length).toBeGreaterThanOrEqual(6);
    const second = await startBridge(env(), { cwd: world.cwd });
    try {
      const r = await second.run(
        "from mcp import runtime\nhits = runtime.search_tool_docs_sync('echo a message back')\n[h['tool'] for h in hits][:1], runtime.describe_server('everything')['status']",
      );
      expect(r.structured.value).toBe("(['echo'], 'stopped')");
    } finally {
      await second.close();
    }
  });
});

describe("the model's context stays small", () => {
  test("tools/list costs under 250 tokens with 0 and with 25 servers configured", async () => {
    const enc = getEncoding("o200k_base");
    const home = mkdtempSync(join(tmpdir(), "mcx-25-"));
    const servers = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`server-${i}`, { command: "node", args: [EVERYTHING] }]));
    write(join(home, ".config", "mcp", "servers", "many.json"), { mcpServers: servers });
    const empty = mkdtempSync(join(tmpdir(), "mcx-0-"));
    const counts: number[] = [];
    for (const h of [empty, home]) {
      const b = await startBridge({ HOME: h, MCP_BRIDGE_PREWARM: "0", MCP_BRIDGE_STRUCTURED_CONTENT: "0" }, { cwd: h });
      try {
        const list = await b.client.listTools();
        counts.push(enc.encode(JSON.stringify(list.tools)).length);
        expect(JSON.stringify(list.tools)).not.toContain("server-1");
      } finally {
        await b.close();
      }
    }
    expect(counts[0]).toBe(counts[1]!);
    expect(counts[0]).toBeLessThan(250);
  });
});

describe("config problems", () => {
  test("`servers` reports the broken file with its position, the self-reference as skipped, and the rest", async () => {
    const proc = Bun.spawn([BINARY, "servers", "--json"], { cwd: world.cwd, env: bridgeEnv(env()), stdout: "pipe", stderr: "pipe" });
    const out = JSON.parse(await new Response(proc.stdout).text()) as {
      servers: Array<{ name: string }>;
      skipped: Array<{ name: string; reason: string }>;
      problems: Array<{ file: string; message: string }>;
    };
    expect(await proc.exited).toBe(1);
    expect(out.servers.map((s) => s.name).sort()).toEqual([
      "everything",
      "everything-http",
      "everything-sse",
      "filesystem",
      "flaky",
      "memory",
    ]);
    expect(out.skipped.find((s) => s.name === "myself")?.reason).toContain("launches this bridge");
    const broken = out.problems.find((p) => p.file.endsWith("broken.json"));
    expect(broken?.message).toMatch(/line 1, column \d+/);
  });
});

describe.each(ENGINES)("proxies on %s", (eng) => {
  test("a proxied call works on this engine", async () => {
    const b = await startBridge({ ...env(), MCP_BRIDGE_RUNTIME: eng }, { cwd: world.cwd });
    try {
      expect(
        (await b.run("await mcp_everything.echo(message=sys_name)".replace("sys_name", `'${eng}'`), { servers: ["everything"] })).structured
          .value,
      ).toBe(`'Echo: ${eng}'`);
      expect(existsSync(join(world.state, "tool-cache"))).toBe(true);
    } finally {
      await b.close();
    }
  });
});
