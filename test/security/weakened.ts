/**
 * The same attacks against a sandbox with its hardening removed (root, all capabilities, writable root,
 * seccomp unconfined, no no-new-privileges). Network stays off and memory/pids limits stay on, so the
 * weakened run cannot hurt this machine. Returns the ids the suite judged NOT contained.
 */
import podman from "../../adapters/podman.ts";
import docker from "../../adapters/docker.ts";
import type { RuntimeAdapter } from "../../adapters/types.ts";
import { spawnChild } from "../../src/host/process.ts";
import { silentLogger } from "../../src/log.ts";
import { engineEnv } from "../../src/engines/registry.ts";
import { Sandbox } from "../../src/sandbox/sandbox.ts";
import { specFor } from "../adapters/contract.ts";
import { IMAGE } from "../support/env.ts";
import { fill, type Attack } from "./attacks.ts";
import type { Outcome } from "./suite.test.ts";

type Judge = (attack: Attack, r: { value?: string; error?: { type: string; message: string } }, cap: number) => Outcome;

function weaken(adapter: RuntimeAdapter): RuntimeAdapter {
  return {
    ...adapter,
    async runArgv(spec) {
      const argv = await adapter.runArgv(spec);
      const out: string[] = [];
      for (let i = 0; i < argv.length; i++) {
        const a = argv[i]!;
        const next = argv[i + 1];
        if (a === "--read-only") continue;
        if (a === "--cap-drop" || (a === "--security-opt" && next === "no-new-privileges")) {
          i++;
          continue;
        }
        if (a === "--user") {
          out.push(a, "0:0");
          i++;
          continue;
        }
        out.push(a);
      }
      const at = out.indexOf("--rm");
      out.splice(at, 0, "--cap-add", "ALL", "--security-opt", "seccomp=unconfined");
      return out;
    },
  };
}

export async function runWeakened(engine: string, attacks: Attack[], judge: Judge): Promise<string[]> {
  const env = engineEnv(process.env);
  const base = engine === "docker" ? docker({ env }) : podman({ env });
  const adapter = weaken(base);
  const start = () =>
    Sandbox.start({
      adapter,
      spec: specFor(IMAGE, { memory: "512m", pids: 128 }),
      spawn: spawnChild,
      engineEnv: env,
      log: silentLogger,
      startTimeoutMs: 60_000,
    });
  const failed: string[] = [];
  for (const attack of attacks.filter((a) => !a.mayReset)) {
    // A fresh weakened sandbox per attack: one attack's damage must not decide another's outcome.
    const box = await start();
    try {
      const { result } = box.run(fill(attack.code, { canary: "weak-canary", hostHome: "/nonexistent", bridgePid: process.pid }), 64 * 1024);
      const frame = await Promise.race([result, Bun.sleep(20_000).then(() => undefined)]).catch(() => undefined);
      if (!frame) continue;
      const outcome = judge(attack, { value: frame.value, error: frame.error }, 64 * 1024);
      if (!outcome.contained) failed.push(attack.id);
    } finally {
      await box.kill("weakened attack done");
    }
  }
  return failed;
}
