/**
 * The RuntimeAdapter contract: one suite every adapter must pass. Real engines run it here (podman,
 * docker); engines that cannot run on this machine run it against recorded-argument fakes.
 */
import { describe, expect, test } from "bun:test";
import type { ContainerSpec, RuntimeAdapter } from "../../adapters/types.ts";
import { EngineUnavailableError } from "../../src/errors.ts";
import { spawnChild } from "../../src/host/process.ts";
import { silentLogger } from "../../src/log.ts";
import { containerCommand } from "../../src/sandbox/bootstrap.ts";
import { Sandbox } from "../../src/sandbox/sandbox.ts";
import { SANDBOX_ENV } from "../../src/session/container-spec.ts";

export interface ContractTarget {
  /** A fresh adapter (creating one must not run anything). */
  make(): RuntimeAdapter;
  /** The same adapter pointed at a binary that does not exist. */
  makeMissing(): RuntimeAdapter;
  image: string;
  engineEnv: Record<string, string>;
  /** Whether containers really start (false for fakes, which only record arguments). */
  real: boolean;
  /** What a missing engine's error says (default: the CLI is "not found on PATH"). */
  missing?: RegExp;
  /** Settings every started sandbox gets (gVisor: { ociRuntime: "runsc" }). */
  spec?: Partial<ContainerSpec>;
  /**
   * For engines with an API (adapter.open): the hardening the engine holds for a started sandbox,
   * read back from it; resolves to the settings that are missing (none: []).
   */
  hardeningProblems?: (spec: ContainerSpec) => Promise<string[]>;
}

export function specFor(image: string, overrides: Partial<ContainerSpec> = {}): ContainerSpec {
  return {
    name: `mcp-code-exec-contract-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
    image,
    labels: { "io.mcp-code-exec": "1", "io.mcp-code-exec.contract": String(process.pid) },
    user: "65534:65534",
    memory: "256m",
    pids: 64,
    cpus: 1,
    tmpfsSize: "16m",
    shmSize: "8m",
    ulimits: { nofile: 512, nproc: 512 },
    env: SANDBOX_ENV,
    command: containerCommand(600),
    ...overrides,
  };
}

export function adapterContract(name: string, target: ContractTarget): void {
  describe(`RuntimeAdapter contract: ${name}`, () => {
    test("probe names the engine, its binary and version, and is memoised", async () => {
      const adapter = target.make();
      const info = await adapter.probe();
      expect(info.engine).toBe(adapter.name);
      expect(info.binary.startsWith("/")).toBe(true);
      expect(info.version).toMatch(/\d+\.\d+/);
      const again = await adapter.probe();
      expect(again).toBe(info);
    });

    test("a missing binary is EngineUnavailableError with an install hint", async () => {
      const err = await target
        .makeMissing()
        .probe()
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EngineUnavailableError);
      expect((err as EngineUnavailableError).render()).toMatch(target.missing ?? /not found on PATH/);
      expect((err as EngineUnavailableError).hint).toMatch(/install|set MCP_BRIDGE_RUNTIME/i);
    });

    test("imageExists tells present from absent", async () => {
      const adapter = target.make();
      await adapter.ensureRunning?.();
      expect(await adapter.imageExists(target.image)).toBe(true);
      expect(await adapter.imageExists("mcp-code-exec-absent:0")).toBe(false);
    });

    // An engine with an API starts sandboxes without a CLI: its hardening is read back from the
    // engine in the next case instead.
    const api = target.make().open !== undefined;
    test.skipIf(api)(
      `runArgv carries every hardening flag, then the image, then the command${api ? " (skipped: this engine starts sandboxes through its API; the next case reads its hardening back)" : ""}`,
      async () => {
        const adapter = target.make();
        const spec = specFor(target.image, { ociRuntime: "runc" });
        const argv = await adapter.runArgv(spec);
        const joined = argv.join(" ");
        for (const flag of [
          "--rm",
          "-i",
          "--network none",
          "--read-only",
          "--cap-drop ALL",
          "--security-opt no-new-privileges",
          "--user 65534:65534",
          "--memory 256m",
          "--memory-swap 256m",
          "--pids-limit 64",
          "--cpus 1",
          "--tmpfs /tmp:rw,nosuid,nodev,size=16m,mode=1777",
          "--shm-size 8m",
          "--ulimit nofile=512:512",
          "--ulimit nproc=512:512",
          `--name ${spec.name}`,
          "--label io.mcp-code-exec=1",
          "--runtime runc",
          "--pull never",
        ]) {
          expect(joined).toContain(flag);
        }
        expect(argv.filter((a) => a === "--volume" || a === "-v" || a === "--mount")).toEqual([]);
        const envFlags = argv.flatMap((a, i) => (a === "--env" ? [argv[i + 1]!] : []));
        expect(envFlags.sort()).toEqual(
          Object.entries(SANDBOX_ENV)
            .map(([k, v]) => `${k}=${v}`)
            .sort(),
        );
        const imageAt = argv.indexOf(target.image);
        expect(argv.slice(imageAt + 1)).toEqual(spec.command);
      },
    );

    test("a started sandbox runs code, is listed by label, and remove() stops it", async () => {
      const adapter = target.make();
      const spec = specFor(target.image, target.spec);
      await adapter.ensureRunning?.();
      const box = await Sandbox.start({
        adapter,
        spec,
        spawn: spawnChild,
        engineEnv: target.engineEnv,
        log: silentLogger,
        startTimeoutMs: 60_000,
      });
      try {
        const { result } = box.run("import os\nos.getuid()", 4096);
        expect((await result).value).toBe("65534");
        if (target.hardeningProblems) expect(await target.hardeningProblems(spec)).toEqual([]);
        if (target.real) {
          const listed = await adapter.list(`io.mcp-code-exec.contract=${process.pid}`);
          const row = listed.find((c) => c.name === spec.name);
          expect(row?.running).toBe(true);
          expect(row?.labels["io.mcp-code-exec"]).toBe("1");
        }
      } finally {
        await adapter.remove(spec.name);
      }
      await box.exited;
      expect(box.alive).toBe(false);
      if (target.real)
        expect((await adapter.list(`io.mcp-code-exec.contract=${process.pid}`)).some((c) => c.name === spec.name)).toBe(false);
    });

    // Only engines in a VM have ensureRunning: for the others the case is skipped, and says so.
    const hasEnsure = target.make().ensureRunning !== undefined;
    test.skipIf(!hasEnsure)(
      `ensureRunning is safe to call at once and again${hasEnsure ? "" : " (skipped: this engine has no ensureRunning)"}`,
      async () => {
        const adapter = target.make();
        await Promise.all([adapter.ensureRunning!(), adapter.ensureRunning!()]);
        await adapter.ensureRunning!();
        expect(await adapter.imageExists(target.image)).toBe(true);
      },
    );

    test("removing a container that does not exist is not an error", async () => {
      const adapter = target.make();
      await expect(adapter.remove("mcp-code-exec-never-existed")).resolves.toBeUndefined();
      expect(() => adapter.removeSync("mcp-code-exec-never-existed")).not.toThrow();
    });

    test("imageHint says how to get the image", () => {
      const hint = target.make().imageHint("python:3.13-slim");
      // A command a user of the binary can run (no path in our source tree); the built-in engines'
      // hints name `mcp-code-exec image ...` (test/unit/doctor-fixes.test.ts).
      expect(hint).toMatch(/`[^`]*(pull|load|build)[^`]*`/);
      expect(hint).not.toContain("scripts/");
    });
  });
}
