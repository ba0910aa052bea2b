#!/usr/bin/env bun
/** mcp-code-exec: the command line. Errors are mapped to exit codes here and nowhere else. */
import { cac } from "cac";
import { VERSION } from "./app.ts";
import { envTable } from "./config/env.ts";
import { BridgeError, renderError } from "./errors.ts";

const cli = cac("mcp-code-exec");

cli
  .command("[...args]", "Serve MCP over stdio (same as `run`)")
  .action(async (args: string[]) => {
    if (args.length > 0) fail(new BridgeError("INVALID_INPUT", `unknown command "${args[0]}"`, { hint: "see `mcp-code-exec --help`" }));
    await (await import("./cli/serve.ts")).serve();
  });

cli.command("run", "Serve MCP over stdio: the one tool run_python").action(async () => {
  await (await import("./cli/serve.ts")).serve();
});

cli
  .command("exec [file]", "Run Python once (from -c, a file, or stdin) and print the result")
  .option("-c, --code <code>", "Python source to run")
  .option("-t, --timeout <seconds>", "Timeout in seconds")
  .option("--json", "Print the result as JSON")
  .option("-s, --servers <names>", "MCP servers to load, comma-separated")
  .example("mcp-code-exec exec -c 'import sys; sys.version'")
  .example("echo 'print(6*7)' | mcp-code-exec exec")
  .action(async (file: string | undefined, opts: { code?: string; timeout?: string; json?: boolean; servers?: string }) => {
    const timeout = opts.timeout === undefined ? undefined : Number(opts.timeout);
    if (timeout !== undefined && !(timeout > 0)) fail(new BridgeError("INVALID_INPUT", `--timeout must be a positive number; got "${opts.timeout}"`));
    const code = opts.code === undefined ? undefined : String(opts.code);
    const servers = opts.servers === undefined ? undefined : String(opts.servers).split(",").map((s) => s.trim()).filter(Boolean);
    const status = await (await import("./cli/exec.ts")).exec({ code, file, timeout, json: opts.json, servers });
    process.exit(status);
  });

cli
  .command("doctor", "Check the engine, the image and every hardening flag on this host")
  .option("--json", "Machine-readable report")
  .action(async (opts: { json?: boolean }) => {
    const status = await (await import("./cli/doctor.ts")).doctor({ json: opts.json });
    process.exit(status);
  });

cli
  .command("servers", "List the MCP servers found in your config files, where each came from, and any problems")
  .option("--json", "Machine-readable list")
  .option("--tools", "Start each server once and count its tools")
  .action(async (opts: { json?: boolean; tools?: boolean }) => {
    const status = await (await import("./cli/servers.ts")).servers(opts);
    process.exit(status);
  });

cli.help((sections) => {
  sections.push({
    title: "Environment",
    body: envTable()
      .map((r) => `  ${r.name.padEnd(34)} ${r.description}${r.default ? ` (default: ${r.default})` : ""}`)
      .join("\n"),
  });
  return sections;
});
cli.version(VERSION);

function fail(err: unknown): never {
  process.stderr.write(`${renderError(err)}\n`);
  process.exit(err instanceof BridgeError && err.code === "INVALID_INPUT" ? 2 : 1);
}

try {
  cli.parse(process.argv, { run: false });
  await cli.runMatchedCommand();
} catch (err) {
  fail(err);
}
