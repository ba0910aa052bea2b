/**
 * The worked example of an external adapter (examples/adapters/docker-wrapper.ts), for real through
 * docker: the adapter contract, loaded the way MCP_BRIDGE_ADAPTER loads it, and from the compiled binary.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import dockerWrapper from "../../examples/adapters/docker-wrapper.ts";
import { spawnChild } from "../../src/host/process.ts";
import { silentLogger } from "../../src/log.ts";
import { engineEnv, selectEngine } from "../../src/engines/registry.ts";
import { ADAPTER_KIT } from "../../src/engines/external-adapter.ts";
import { Sandbox } from "../../src/sandbox/sandbox.ts";
import { BINARY } from "../support/binary.ts";
import { bridgeEnv, ENGINES, IMAGE, ROOT } from "../support/env.ts";
import { adapterContract, specFor } from "./contract.ts";

const EXAMPLE = join(ROOT, "examples", "adapters", "docker-wrapper.ts");
const HAS_DOCKER = ENGINES.includes("docker");
const env = engineEnv(process.env);

describe.skipIf(!HAS_DOCKER)("example adapter docker-wrapper (real docker)", () => {
  adapterContract("docker-wrapper (example external adapter, real docker)", {
    make: () => dockerWrapper({ env, kit: ADAPTER_KIT }),
    makeMissing: () => dockerWrapper({ env, kit: ADAPTER_KIT, binary: "docker-does-not-exist" }),
    image: IMAGE,
    engineEnv: env,
    real: true,
  });

  test("loaded by path like MCP_BRIDGE_ADAPTER, its sandboxes carry the extra label", async () => {
    const { adapter } = await selectEngine(EXAMPLE, { env });
    expect(adapter.name).toBe("docker-wrapper");
    const spec = specFor(IMAGE);
    const box = await Sandbox.start({ adapter, spec, spawn: spawnChild, engineEnv: env, log: silentLogger, startTimeoutMs: 60_000 });
    try {
      expect((await box.run("6 * 7", 4096).result).value).toBe("42");
      const row = (await adapter.list("io.example.wrapped-by=docker-wrapper")).find((c) => c.name === spec.name);
      expect(row?.labels["io.mcp-code-exec"]).toBe("1");
    } finally {
      await adapter.remove(spec.name);
    }
  });

  test.skipIf(!existsSync(BINARY))("the compiled binary imports the adapter file from disk at run time", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "adapter-binary-"));
    const run = async (args: string[]) => {
      const proc = Bun.spawn([BINARY, ...args], {
        cwd,
        env: bridgeEnv({ MCP_BRIDGE_ADAPTER: EXAMPLE, MCP_BRIDGE_LOG_LEVEL: "INFO" }),
        stdout: "pipe",
        stderr: "pipe",
      });
      const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      return { stdout, stderr, code };
    };
    const exec = await run(["exec", "-c", "import os\nos.getuid()"]);
    expect(exec.stdout).toBe("[value] 65534\n");
    expect(exec.stderr).toContain("sandbox ready engine=docker-wrapper");
    const doctor = await run(["doctor"]);
    expect(doctor.stdout).toContain(`ok    selection order: ${EXAMPLE} (MCP_BRIDGE_ADAPTER)`);
    expect(doctor.stdout).toContain("ok    engine docker-wrapper: ");
    expect(doctor.stdout).toContain("All checks passed.");
    expect(doctor.code).toBe(0);
  });
});
