#!/usr/bin/env bun
/** mcp-code-exec: the command line. Errors are mapped to exit codes here and nowhere else. */
import { cac } from "cac";
import { VERSION } from "./version.ts";
import { ENV_FAMILIES, envTable } from "./config/env.ts";
import { BridgeError, renderError } from "./errors.ts";

const cli = cac("mcp-code-exec");

cli.command("[...args]", "Serve MCP over stdio (same as `run`)").action(async (args: string[]) => {
  if (args.length > 0) fail(new BridgeError("INVALID_INPUT", `unknown command "${args[0]}"`, { hint: "see `mcp-code-exec --help`" }));
  await (await import("./cli/serve.ts")).serve();
});

cli.command("run", "Serve MCP over stdio: the one tool run_python").action(async () => {
  await (await import("./cli/serve.ts")).serve();
});

cli
  .command("serve", "Serve MCP over stdio, or with --http over Streamable HTTP at /mcp for a team (sign-in, per-user sessions)")
  .option("--http", "Serve Streamable HTTP instead of stdio")
  .option("--listen <host:port>", "Where --http listens (default MCP_BRIDGE_HTTP_LISTEN, 127.0.0.1:8931)")
  .example("MCP_BRIDGE_HTTP_TOKENS=alice=$(openssl rand -hex 24) mcp-code-exec serve --http --listen 0.0.0.0:8931")
  .action(async (opts: { http?: boolean; listen?: string }) => {
    if (!opts.http) {
      if (opts.listen !== undefined)
        fail(new BridgeError("INVALID_INPUT", "--listen needs --http", { hint: "mcp-code-exec serve --http --listen HOST:PORT" }));
      await (await import("./cli/serve.ts")).serve();
      return;
    }
    try {
      await (await import("./http/serve-http.ts")).serveHttp({ listen: opts.listen === undefined ? undefined : String(opts.listen) });
    } catch (err) {
      fail(err);
    }
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
    if (timeout !== undefined && !(timeout > 0))
      fail(new BridgeError("INVALID_INPUT", `--timeout must be a positive number; got "${opts.timeout}"`));
    const code = opts.code === undefined ? undefined : String(opts.code);
    const servers =
      opts.servers === undefined
        ? undefined
        : String(opts.servers)
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean);
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
  .command(
    "servers [action] [name]",
    "List the MCP servers found in every client's config, where each came from and whether it may start; `servers trust NAME` / `servers untrust NAME` approve a project's server",
  )
  .option("--json", "Machine-readable list")
  .option("--tools", "Start each approved server once and count its tools")
  .example("mcp-code-exec servers trust helper   # approve a server defined in the project's .mcp.json")
  .action(async (action: string | undefined, name: string | undefined, opts: { json?: boolean; tools?: boolean }) => {
    const status = await (await import("./cli/servers.ts")).servers(action, name === undefined ? undefined : String(name), opts);
    process.exit(status);
  });

cli
  .command("image <action> [file]", "Sandbox images: pull, build, fetch DIR (for --offline), save FILE, load FILE (air-gapped machines)")
  .option("--engine <engine>", "podman or docker (default: MCP_BRIDGE_RUNTIME, then auto)")
  .option("--image <image>", "Image to save or pull (default: MCP_BRIDGE_IMAGE)")
  .option("--force", "save: overwrite FILE; build: rebuild the root filesystem")
  .option("--variant <variant>", "build: batteries (Python 3.13 and 40 packages, the default) or slim (Python only)")
  .option("--offline", "build: download nothing; Debian packages from --mirror (or the cache), wheels from --wheelhouse (or the cache)")
  .option("--mirror <url>", "build, fetch: Debian mirror (default deb.debian.org; file:///DIR/debian from `image fetch DIR`)")
  .option("--wheelhouse <dir>", "build: folder of wheels (DIR/wheels from `image fetch DIR`)")
  .option(
    "--tag <image>",
    "build: name of the image (default: the bridge's default image, ghcr.io/mcp-code-exec/mcp-code-exec-sandbox:<version>)",
  )
  .option("--push <ref>", "build: also push the image to this registry reference")
  .option("--debian-unlocked", "build: take the mirror's Debian versions where they differ from the lock")
  .example(
    "mcp-code-exec image fetch /media/usb   # then, air-gapped: image build --offline --mirror file:///media/usb/debian --wheelhouse /media/usb/wheels",
  )
  .example("mcp-code-exec image save sandbox.tar   # then, on the air-gapped machine: mcp-code-exec image load sandbox.tar")
  .action(async (action: string, file: string | undefined, opts: Record<string, string | boolean | undefined>) => {
    const str = (v: unknown) => (v === undefined ? undefined : String(v));
    const status = await (await import("./cli/image.ts")).image(action, file, {
      engine: str(opts.engine),
      image: str(opts.image),
      force: opts.force === true,
      variant: str(opts.variant),
      offline: opts.offline === true,
      mirror: str(opts.mirror),
      wheelhouse: str(opts.wheelhouse),
      tag: str(opts.tag),
      push: str(opts.push),
      debianUnlocked: opts.debianUnlocked === true,
    });
    process.exit(status);
  });

cli
  .command(
    "config <what>",
    "config snippet --client C: the block to paste into a client; config add --client C: write it into the client's own file",
  )
  .option(
    "--client <client>",
    "claude-desktop, claude-code, cursor, vscode, windsurf, codex, gemini, zed, opencode, cline, continue, goose or copilot-cli",
  )
  .option("--name <name>", "Server name in the client (default code-exec)")
  .option("--json", "claude-code snippet: the .mcp.json block instead of the `claude mcp add` command")
  .option("--force", "add: replace an existing entry of that name (a backup is kept)")
  .option("--npx", "Launch through npx (`npx -y mcp-code-exec@<this version>`) instead of this binary's path")
  .example("mcp-code-exec config add --client codex")
  .action(async (what: string, opts: { client?: string; name?: string; json?: boolean; force?: boolean; npx?: boolean }) => {
    process.exit(
      await (await import("./cli/config-snippet.ts")).config(what, {
        client: opts.client,
        name: opts.name === undefined ? undefined : String(opts.name),
        json: opts.json,
        force: opts.force,
        npx: opts.npx,
      }),
    );
  });

cli
  .command("auth <action> [server]", "Sign in to remote MCP servers that use OAuth: login NAME, status [NAME], logout NAME")
  .option("--json", "status, logout: machine-readable")
  .option("--no-browser", "login: print the link instead of opening a browser (MCP_BRIDGE_BROWSER picks the browser command)")
  .option("--timeout <seconds>", "login: how long to wait for the browser (default 300)")
  .example("mcp-code-exec auth login notion")
  .action(async (action: string, server: string | undefined, opts: { json?: boolean; browser?: boolean; timeout?: string }) => {
    const timeout = opts.timeout === undefined ? undefined : Number(opts.timeout);
    if (timeout !== undefined && !(timeout > 0))
      fail(new BridgeError("INVALID_INPUT", `--timeout must be a positive number of seconds; got "${opts.timeout}"`));
    const name = server === undefined ? undefined : String(server);
    process.exit(await (await import("./cli/auth.ts")).auth(action, name, { json: opts.json, browser: opts.browser, timeout }));
  });

cli
  .command(
    "audit",
    "The audit log of proxied tool calls: time, run, call, server/tool, decision and who made it, outcome, duration, argument digest",
  )
  .option("--follow", "Keep printing calls as bridges make them")
  .option("--json", "The JSON lines as they are stored")
  .option("--lines <n>", "Only the last N calls")
  .action(async (opts: { follow?: boolean; json?: boolean; lines?: string }) => {
    const lines = opts.lines === undefined ? undefined : Number(opts.lines);
    if (lines !== undefined && !(Number.isInteger(lines) && lines >= 0))
      fail(new BridgeError("INVALID_INPUT", `--lines must be a whole number; got "${opts.lines}"`));
    process.exit(await (await import("./cli/audit.ts")).audit({ follow: opts.follow, json: opts.json, lines }));
  });

cli
  .command(
    "stats",
    "Counters of the bridges running for this user: runs, errors, timeouts, container starts, upstream restarts, proxied-call latency",
  )
  .option("--json", "Machine-readable")
  .action(async (opts: { json?: boolean }) => {
    process.exit(await (await import("./cli/stats.ts")).stats(opts));
  });

cli
  .command("skills <action> [name]", "Skills the model saved with runtime.save_skill: skills list, skills show NAME, skills rm NAME")
  .option("--json", "Machine-readable (list)")
  .action(async (action: string, name: string | undefined, opts: { json?: boolean }) => {
    process.exit((await import("./cli/skills.ts")).skills(action, name, opts));
  });

cli
  .command(
    "packages <action> [...requirements]",
    "Packages for runtime.install: packages add REQ... (fill the wheelhouse on a connected machine), list, verify, gc [--all]",
  )
  .option("--wheelhouse <dir>", "add/list/verify: the wheelhouse (default: MCP_BRIDGE_WHEELHOUSE)")
  .option("--python <version>", "add: the sandbox's Python, e.g. 3.11 (default 3.13)")
  .option("--platform <platform>", "add: the sandbox's platform as uv names it (default x86_64-manylinux_2_36)")
  .option("--index <url>", "add: the PEP 503 index to download from (default: MCP_BRIDGE_PACKAGE_INDEX)")
  .option("--all", "gc: remove the whole store")
  .option("--json", "list: machine-readable")
  .example("mcp-code-exec packages add --wheelhouse ./wheels --python 3.11 scikit-learn rich")
  .action(async (action: string, requirements: string[], opts: Record<string, unknown>) => {
    const str = (v: unknown) => (v === undefined ? undefined : String(v));
    process.exit(
      await (await import("./cli/packages.ts")).packages(action, requirements.map(String), {
        wheelhouse: str(opts.wheelhouse),
        python: str(opts.python),
        platform: str(opts.platform),
        index: str(opts.index),
        all: opts.all === true,
        json: opts.json === true,
      }),
    );
  });

cli.help((sections) => {
  sections.push({
    title: "Environment",
    body: envTable()
      .map(
        (r) =>
          `  ${r.name.padEnd(34)} ${r.description}${r.default ? ` (default: ${r.default})` : ""}${r.fileKey ? ` [settings file: ${r.fileKey}]` : ""}`,
      )
      .concat(Object.values(ENV_FAMILIES).map((d) => `  ${d}`))
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
