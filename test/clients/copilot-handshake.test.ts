/**
 * GitHub Copilot CLI (1.0.102, its own Rust MCP client) launching the compiled bridge as `config add`
 * registers it. Copilot CLI needs a GitHub sign-in to run a model turn, which this machine cannot do, but
 * its interactive session starts every MCP server before any sign-in: it is run in a pseudo-terminal
 * until the bridge has answered its tools/list, with the bridge's stdin and stdout copied to files.
 * Copilot CLI asks `server/discover` first and, answered, speaks protocol revision 2026-07-28 with the
 * bridge: no `initialize`, `_meta` on each request (before the bridge spoke it, Copilot CLI fell back to
 * `initialize` at 2025-11-25).
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY } from "../support/binary.ts";
import { bridgeEnv, ROOT } from "../support/env.ts";
import { run } from "../support/run.ts";
import { BIN } from "./clients.ts";
import { write } from "./plugin-support.ts";

const home = mkdtempSync(join(tmpdir(), "mcx-copilot-hs-"));
const project = join(home, "project");
const wireIn = join(home, "to-bridge.jsonl");
const wireOut = join(home, "from-bridge.jsonl");
afterAll(() => rmSync(home, { recursive: true, force: true }));

// Runs the interactive CLI in a pseudo-terminal until the bridge's answer to tools/list is on file (or 60 s).
const PTY = `
import os, pty, select, signal, sys, time
argv, done_file = sys.argv[2:], sys.argv[1]
pid, fd = pty.fork()
if pid == 0:
    os.environ.update(TERM="xterm-256color", COLUMNS="120", LINES="40")
    os.execv(argv[0], argv)
end = time.time() + 60
while time.time() < end:
    if select.select([fd], [], [], 0.2)[0]:
        try: os.read(fd, 65536)
        except OSError: break
    if os.path.exists(done_file) and '"run_python"' in open(done_file).read():
        break
os.kill(pid, signal.SIGTERM)
time.sleep(0.5)
try: os.kill(pid, signal.SIGKILL)
except ProcessLookupError: pass
`;

const lines = (file: string) =>
  existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l.trim())
        .map(
          (l) =>
            JSON.parse(l) as { id?: number; method?: string; params?: Record<string, unknown>; result?: unknown; error?: { code: number } },
        )
    : [];

test("Copilot CLI starts the bridge, speaks revision 2026-07-28 with it (server/discover, no initialize) and lists run_python", async () => {
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, LANG: "C.UTF-8" };
  write(join(project, "README.md"), "a project\n");
  const added = await run([BINARY, "config", "add", "--client", "copilot-cli"], { cwd: project, env: bridgeEnv(env) });
  expect(added.code).toBe(0);
  // The entry `config add` wrote, with its stdio copied on the way (a shell between the client and the bridge).
  const entry = JSON.parse(readFileSync(join(home, ".copilot", "mcp-config.json"), "utf8")).mcpServers["code-exec"];
  expect(entry).toMatchObject({ type: "local", command: BINARY, tools: ["*"] });
  write(join(home, ".copilot", "mcp-config.json"), {
    mcpServers: {
      "code-exec": {
        ...entry,
        command: "sh",
        args: ["-c", `tee ${wireIn} | ${BINARY} | tee ${wireOut}`],
        env: { ...bridgeEnv(), HOME: home, MCP_BRIDGE_PREWARM: "0", MCP_BRIDGE_STATE_DIR: join(home, "state") },
      },
    },
  });
  const r = await run(["python3", "-c", PTY, wireOut, join(BIN, "copilot")], {
    cwd: project,
    env: { ...env, XDG_CACHE_HOME: join(ROOT, "node_modules", ".cache", "copilot-cli") },
  });
  expect(r.code).toBe(0);
  const sent = lines(wireIn);
  const got = lines(wireOut);
  const answer = (id: number | undefined) => got.find((m) => m.id === id);
  const discover = sent.find((m) => m.method === "server/discover");
  expect(discover?.params?._meta).toMatchObject({ "io.modelcontextprotocol/protocolVersion": "2026-07-28" });
  expect(answer(discover!.id)?.result).toMatchObject({
    resultType: "complete",
    supportedVersions: expect.arrayContaining(["2026-07-28"]),
    _meta: { "io.modelcontextprotocol/serverInfo": { name: "mcp-code-exec" } },
  });
  expect(sent.map((m) => m.method)).not.toContain("initialize");
  const list = sent.find((m) => m.method === "tools/list");
  expect(list?.params?._meta).toMatchObject({
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name: "copilot-cli" },
  });
  const listed = answer(list!.id)?.result as { resultType: string; tools: Array<{ name: string }> };
  expect(listed.resultType).toBe("complete");
  expect(listed.tools.map((t) => t.name)).toEqual(["run_python"]);
  // Copilot CLI's own log: it took the bridge for a 2026-07-28 server.
  const logs = readdirSync(join(home, ".copilot", "logs")).map((f) => readFileSync(join(home, ".copilot", "logs", f), "utf8"));
  expect(logs.join("\n")).toMatch(/Service initialized as client .*ProtocolVersion\(\\"2026-07-28\\"\).*mcp-code-exec/);
}, 120_000);
