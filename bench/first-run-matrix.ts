/**
 * Does the first run work where users are? The compiled binary runs `exec -c 'print(1)'` for every
 * engine × the PATH a launcher gives (a shell's, an empty folder, the macOS Dock's) × the engine's init
 * helper present or made unavailable (podman: containers.conf init_path pointing at docker's tini, or
 * nowhere). Prints the table of issue 9 with the time each took.
 *
 *   bun bench/first-run-matrix.ts [--binary PATH]   (default: dist/mcp-code-exec, built first)
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { bridgeEnv, ENGINES } from "../test/support/env.ts";

const { values } = parseArgs({ args: Bun.argv.slice(2), options: { binary: { type: "string" } } });
const BINARY = values.binary ?? (await import("../test/support/binary.ts")).BINARY;
const EMPTY = mkdtempSync(join(tmpdir(), "mcx-matrix-"));
const PATHS: Record<string, string> = { shell: process.env.PATH ?? "", empty: EMPTY, "macOS launcher": "/usr/bin:/bin:/usr/sbin:/sbin" };

function podmanConf(initPath: string): string {
  let conf = "";
  try {
    conf = readFileSync("/etc/containers/containers.conf", "utf8");
  } catch {
    // podman's defaults
  }
  const line = `init_path = "${initPath}"`;
  conf = /^\[engine\]/m.test(conf) ? conf.replace(/^\[engine\]\n/m, `[engine]\n${line}\n`) : `${conf}\n[engine]\n${line}\n`;
  const file = join(mkdtempSync(join(tmpdir(), "mcx-conf-")), "containers.conf");
  writeFileSync(file, conf);
  return file;
}

const INITS: Record<string, Record<string, string>> = {
  present: { podman: podmanConf("/usr/bin/tini-static") },
  absent: { podman: podmanConf("/nonexistent/catatonit") },
};

const CONFIGS = ENGINES.flatMap((e) => [
  { name: e, engine: e, env: {} as Record<string, string> },
  { name: `${e}+gVisor`, engine: e, env: { MCP_BRIDGE_OCI_RUNTIME: "runsc", MCP_BRIDGE_PIDS: "512" } },
]);

console.log("engine | PATH | init helper | works | ms");
console.log("--- | --- | --- | --- | ---");
for (const c of CONFIGS) {
  for (const [pathName, PATH] of Object.entries(PATHS)) {
    for (const [initName, confs] of Object.entries(INITS)) {
      const conf = confs[c.engine];
      if (!conf && initName === "absent") continue; // docker's tini comes with docker.io; no --init is passed anyway
      const env = bridgeEnv({
        ...c.env,
        PATH,
        MCP_BRIDGE_RUNTIME: c.engine,
        MCP_BRIDGE_STATE_DIR: join(EMPTY, "state"),
        ...(conf ? { CONTAINERS_CONF: conf } : {}),
      });
      const t0 = performance.now();
      const r = Bun.spawnSync([BINARY, "exec", "-c", "print(1)"], { env, cwd: EMPTY, stdout: "pipe", stderr: "pipe" });
      const ms = Math.round(performance.now() - t0);
      const ok = r.exitCode === 0 && r.stdout.toString() === "1\n";
      const init = conf ? initName : "n/a (docker.io's tini; no --init passed)";
      console.log(`${c.name} | ${pathName} | ${init} | ${ok ? "yes" : `NO: ${r.stderr.toString().trim().slice(0, 120)}`} | ${ms}`);
    }
  }
}
