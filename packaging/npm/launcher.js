#!/usr/bin/env node
/**
 * The `mcp-code-exec` command of the npm package. npm installed exactly one of this package's
 * optionalDependencies, @mcp-code-exec/<os>-<cpu>, chosen by its `os`/`cpu` fields; this finds that
 * package's binary and runs it with stdio inherited (MCP speaks on stdin/stdout), passes on the signals
 * an MCP client sends, and exits the way the binary exited. Plain CommonJS for any Node >= 18; no
 * dependencies. MCP_CODE_EXEC_BINARY=/path runs that binary instead.
 */
"use strict";
const { spawn } = require("node:child_process");
const path = require("node:path");

const SCOPE = "@mcp-code-exec";
const SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT"];
const INSTALL_SH = "curl -fsSL https://github.com/mcp-code-exec/mcp-code-exec/releases/latest/download/install.sh | sh";

/** A failure to find the binary, with what to do. */
class LauncherError extends Error {}

/** @mcp-code-exec/<platform>-<arch>, or why there is none. */
function platformPackage(manifest, platform = process.platform, arch = process.arch) {
  const name = `${SCOPE}/${platform}-${arch}`;
  const known = Object.keys(manifest.optionalDependencies || {});
  if (known.includes(name)) return { name, version: manifest.optionalDependencies[name] };
  const list = known.map((n) => n.slice(SCOPE.length + 1)).join(", ");
  const hint = platform === "win32" ? " On Windows, run it inside WSL." : "";
  throw new LauncherError(`mcp-code-exec has no binary for ${platform}-${arch} (there are: ${list}).${hint}`);
}

/** glibc or not, from Node's own report (only asked on the error path: it is not free). */
function isMusl() {
  if (process.platform !== "linux") return false;
  const header = process.report && process.report.getReport ? process.report.getReport().header : {};
  return !header.glibcVersionRuntime;
}

/** Absolute path of the binary to run. */
function resolveBinary(manifest, opts = {}) {
  const env = opts.env || process.env;
  if (env.MCP_CODE_EXEC_BINARY) return env.MCP_CODE_EXEC_BINARY;
  const pkg = platformPackage(manifest, opts.platform, opts.arch);
  let dir;
  try {
    dir = path.dirname(require.resolve(`${pkg.name}/package.json`, { paths: [opts.from || __dirname] }));
  } catch {
    const why = isMusl()
      ? "This Linux uses musl libc; the binaries need glibc (Debian, Ubuntu, Fedora, ... not Alpine)."
      : "npm leaves optional dependencies out with --omit=optional or --no-optional, or when the lockfile was made on another platform.";
    throw new LauncherError(
      `${pkg.name} is not installed, so there is no binary to run. ${why}\n` +
        `  Reinstall without that option (npx -y mcp-code-exec@${manifest.version}), or install the binary directly: ${INSTALL_SH}`,
    );
  }
  const found = require(path.join(dir, "package.json")).version;
  if (found !== pkg.version) {
    throw new LauncherError(
      `${pkg.name} is ${found} but this launcher is ${manifest.version}: reinstall mcp-code-exec@${manifest.version} so both match.`,
    );
  }
  return path.join(dir, "bin", "mcp-code-exec");
}

/** Run the binary; resolves never: the process exits as the child did. */
function run(binary, args) {
  // Under npx, the binary's own path lives in npm's cache: `config snippet` then offers the npx form.
  const env = process.env.npm_command === "exec" ? { ...process.env, MCP_CODE_EXEC_LAUNCHER: "npx" } : process.env;
  // The handlers come first: a signal between the spawn and them would kill this process by default and
  // leave the binary running with nobody to stop it. One that comes before the child exists waits for it.
  let child;
  let early;
  const forward = (signal) => {
    if (!child) early = signal;
    else if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  for (const s of SIGNALS) process.on(s, forward);
  child = spawn(binary, args, { stdio: "inherit", env });
  if (early) forward(early);
  // npx runs us as npm -> sh -c -> node: a SIGTERM to npm stops npm and sh, and nobody tells us. A new
  // parent means whoever started us is gone, so stop the binary as if it had been sent SIGTERM.
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    forward("SIGTERM");
  }, 500);
  watch.unref();
  child.on("error", (err) => {
    const hint =
      err.code === "EACCES" ? ` (not executable: chmod +x ${binary})` : err.code === "ENOENT" ? " (missing: reinstall mcp-code-exec)" : "";
    process.stderr.write(`[mcp-code-exec] cannot start ${binary}: ${err.message}${hint}\n`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    if (signal) {
      // Die of the same signal, so whoever started us sees what really happened.
      for (const s of SIGNALS) process.removeListener(s, forward);
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code === null ? 1 : code);
  });
}

if (require.main === module) {
  const manifest = require("../package.json");
  let binary;
  try {
    binary = resolveBinary(manifest);
  } catch (err) {
    if (!(err instanceof LauncherError)) throw err;
    process.stderr.write(`[mcp-code-exec] ${err.message}\n`);
    process.exit(1);
  }
  run(binary, process.argv.slice(2));
} else {
  module.exports = { platformPackage, resolveBinary, LauncherError };
}
