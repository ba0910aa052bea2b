/**
 * TEST ONLY, never shipped, never selectable: an "engine" that runs the real entrypoint as a local
 * python3 process, so Session, Sandbox, the request handler and the whole Python side run in about a
 * second with no engine and no image. It is NOT a sandbox: no isolation, no limits (the hardening
 * flags are ignored). Each "container" gets its own temp folder as HOME, TMPDIR and output folder, and
 * its own process group, which remove() kills.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ContainerSpec, ContainerSummary, EngineInfo, RuntimeAdapter } from "../../adapters/types.ts";
import { EngineUnavailableError } from "../../src/errors.ts";
import type { Selected } from "../../src/engines/registry.ts";

// The distribution python3 (what the sandbox image has), not a version manager's shim on PATH.
const PYTHON = Bun.which("python3", { PATH: `/usr/bin:/bin:${process.env.PATH ?? ""}` });

interface Local {
  dir: string;
  labels: Record<string, string>;
}

/** The adapter, what a Session's `engine` dependency returns, and the next removal as an event to wait for. */
export function localPythonEngine(): { adapter: RuntimeAdapter; selected: () => Promise<Selected>; nextRemoval(): Promise<string> } {
  const live = new Map<string, Local>();
  const removals: Array<(name: string) => void> = [];
  const info: EngineInfo = { engine: "local-python (test only)", binary: PYTHON ?? "python3", version: "", details: { isolation: "none" } };
  const pidOf = (name: string): number | undefined => {
    const l = live.get(name);
    if (!l) return undefined;
    try {
      return Number(readFileSync(join(l.dir, "pid"), "utf8"));
    } catch {
      return undefined;
    }
  };
  const adapter: RuntimeAdapter = {
    name: "local-python",
    async probe() {
      if (!PYTHON) throw new EngineUnavailableError("local-python", "python3 not found", "install python3");
      return info;
    },
    async runArgv(spec: ContainerSpec) {
      const dir = mkdtempSync(join(tmpdir(), "mcx-local-"));
      mkdirSync(join(dir, "outputs"));
      live.set(spec.name, { dir, labels: spec.labels });
      const env = {
        ...spec.env,
        HOME: dir,
        TMPDIR: dir,
        MPLCONFIGDIR: join(dir, ".matplotlib"),
        MCP_SANDBOX_OUTPUT_DIR: join(dir, "outputs"),
        PATH: "/usr/bin:/bin",
      };
      // Its own process group (so remove() reaches every descendant), its pid in a file, then the
      // container command exactly as an engine would run it: `python3 -I -c BOOTSTRAP LIFETIME`.
      const [, ...pythonArgs] = spec.command;
      const lead = `import os; os.setpgid(0, 0); open(${JSON.stringify(join(dir, "pid"))}, "w").write(str(os.getpid())); os.chdir(${JSON.stringify(dir)}); os.execv(${JSON.stringify(PYTHON)}, ["python3", *${JSON.stringify(pythonArgs)}])`;
      return ["/usr/bin/env", "-i", ...Object.entries(env).map(([k, v]) => `${k}=${v}`), PYTHON!, "-c", lead];
    },
    async imageExists() {
      return true;
    },
    async remove(name) {
      this.removeSync(name);
    },
    removeSync(name) {
      for (const told of removals.splice(0)) told(name);
      const pid = pidOf(name);
      if (pid) {
        try {
          process.kill(-pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
      const l = live.get(name);
      if (l) rmSync(l.dir, { recursive: true, force: true });
      live.delete(name);
    },
    async list(label) {
      const [k, v] = label.split("=");
      const out: ContainerSummary[] = [];
      for (const [name, l] of live) {
        if (l.labels[k!] !== v) continue;
        const pid = pidOf(name);
        let running = false;
        try {
          running = pid !== undefined && process.kill(pid, 0);
        } catch {
          running = false;
        }
        out.push({ name, labels: l.labels, running });
      }
      return out;
    },
    imageHint: () => "the local-python test engine needs no image",
  };
  return {
    adapter,
    selected: async () => ({ adapter, info: await adapter.probe() }),
    nextRemoval: () => new Promise<string>((resolve) => removals.push(resolve)),
  };
}
