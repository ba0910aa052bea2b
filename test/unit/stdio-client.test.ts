/**
 * The transport over a stdio server's process (src/upstream/stdio-client.ts), with real processes:
 * server-everything from npm through the SDK's Client, a process spawned before its transport existed,
 * a message over the limit, and a server that ignores being asked to stop.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { inheritedEnvironment, launchWith, StdioClient, StdioProcess } from "../../src/upstream/stdio-client.ts";
import { CALL_TOOL_RESULT } from "../../src/upstream/wire-reading.ts";
import { ROOT } from "../support/env.ts";
import { fileSays } from "../support/events.ts";

const EVERYTHING = join(ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");

const launch = (command: string, args: string[], env: Record<string, string> = {}) => launchWith({ type: "stdio", command, args, env }, {});

const spawnNow = (command: string, args: string[]) => {
  const l = launch(command, args);
  return () => Promise.resolve(new StdioProcess(l));
};

describe("StdioClient", () => {
  test("a real server is read through it, a large result included", async () => {
    const client = new Client({ name: "t", version: "0" });
    await client.connect(new StdioClient(spawnNow("node", [EVERYTHING]), 1 << 24));
    try {
      const r = await client.callTool({ name: "echo", arguments: { message: "hé".repeat(40_000) } }, CALL_TOOL_RESULT as never);
      expect((r.content as { text: string }[])[0]!.text).toContain("hé".repeat(40_000));
    } finally {
      await client.close();
    }
  }, 30_000);

  test("takes a process spawned before it: what it wrote to stderr meanwhile is kept, and it answers", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcx-stdio-"));
    const ready = join(dir, "ready");
    const script = `process.stderr.write("said before anyone listened\\n"); require("fs").writeFileSync(${JSON.stringify(ready)}, "1"); import(${JSON.stringify(EVERYTHING)});`;
    const proc = new StdioProcess(launch("node", ["-e", script]));
    await fileSays(ready, (t) => t === "1");
    const transport = new StdioClient(() => Promise.resolve(proc), 1 << 24);
    let stderr = "";
    transport.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const client = new Client({ name: "t", version: "0" });
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("echo");
      expect(stderr).toContain("said before anyone listened");
    } finally {
      await client.close();
    }
  }, 30_000);

  test("a process that ended before it was taken closes the connection instead of leaving it waiting", async () => {
    const proc = new StdioProcess(launch("node", ["-e", "process.exit(0)"]));
    await new Promise<void>((resolve) => proc.child.once("close", () => resolve()));
    const transport = new StdioClient(() => Promise.resolve(proc), 1 << 24);
    const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
    await transport.start();
    await closed;
    await expect(transport.send({ jsonrpc: "2.0", id: 1, method: "ping" })).rejects.toThrow("Not connected");
  });

  test("a message over the limit: an error saying so, and the server is stopped", async () => {
    // Prints one 2 MiB line, then waits to be stopped.
    const transport = new StdioClient(
      spawnNow("node", ["-e", "process.stdout.write('x'.repeat(2 * 1024 * 1024) + '\\n'); setInterval(() => {}, 1000)"]),
      1024 * 1024,
    );
    const errors: string[] = [];
    transport.onerror = (e) => errors.push(e.message);
    const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
    await transport.start();
    await closed;
    expect(errors.join("\n")).toContain("ReadBuffer exceeded maximum size of 1048576 bytes");
  });

  test("close() goes on to SIGKILL for a server that ignores its stdin ending and SIGTERM", async () => {
    const transport = new StdioClient(spawnNow("node", ["-e", "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)"]), 1 << 20);
    await transport.start();
    const pid = transport.pid!;
    const proc = transport.process!;
    await transport.close();
    await new Promise<void>((resolve) => (proc.exited ? resolve() : proc.child.once("close", () => resolve())));
    expect(proc.child.signalCode).toBe("SIGKILL");
    expect(() => process.kill(pid, 0)).toThrow();
  }, 10_000);
});

describe("what a server inherits", () => {
  test("the SDK's list of variables, and never an exported shell function", () => {
    const env = inheritedEnvironment({ HOME: "/h", PATH: "/bin", SECRET_TOKEN: "s", SHELL: "() { :; }", USER: "u" });
    expect(env).toEqual({ HOME: "/h", PATH: "/bin", USER: "u" });
  });
});
