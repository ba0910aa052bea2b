/**
 * The guard that outlives a killed bridge (src/host/watchdog.ts), with real processes: a stand-in
 * bridge is SIGKILLed, and the guard removes its containers through the engine CLI (a fake that
 * records its arguments: no engine here) and kills the upstream server it registered.
 */
import { describe, expect, test } from "bun:test";
import { processAlive } from "../support/processes.ts";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../support/env.ts";
import { fileSays } from "../support/events.ts";

describe("watchdog", () => {
  test("SIGKILL of the bridge: its containers are removed by label and its upstream is killed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcx-guard-"));
    const log = join(dir, "engine.log");
    const engine = join(dir, "fake-engine");
    writeFileSync(engine, `#!/bin/sh\necho "$*" >> '${log}'\n[ "$1" = ps ] && echo c1 && echo c2\nexit 0\n`);
    chmodSync(engine, 0o755);
    const upstream = Bun.spawn(["sleep", "300"], { stdout: "ignore" });
    const bridge = Bun.spawn(
      ["bun", join(ROOT, "test", "fixtures", "watchdog-bridge.ts"), "io.mcp-code-exec.owner=h:1", engine, String(upstream.pid)],
      { stdout: "pipe", env: process.env },
    );
    const reader = bridge.stdout.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("ready\n");
    expect(processAlive(upstream.pid)).toBe(true);
    bridge.kill("SIGKILL");
    await upstream.exited;
    expect(upstream.signalCode).toBe("SIGKILL");
    // The guard's last step: the engine is asked to remove what it listed.
    const said = await fileSays(log, (text) => text.includes("rm -f"));
    expect(said).toBe("ps -aq --filter label=io.mcp-code-exec.owner=h:1\nrm -f c1 c2\n");
  });

  test("an upstream the bridge saw end is not touched: by the time the bridge dies, its pid may be someone else's", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcx-guard-"));
    const log = join(dir, "engine.log");
    const engine = join(dir, "fake-engine");
    writeFileSync(engine, `#!/bin/sh\necho "$*" >> '${log}'\nexit 0\n`);
    chmodSync(engine, 0o755);
    const other = Bun.spawn(["sleep", "300"], { stdout: "ignore" });
    const bridge = Bun.spawn(["bun", join(ROOT, "test", "fixtures", "watchdog-bridge.ts"), "l", engine, String(other.pid), "ended"], {
      stdout: "pipe",
      env: process.env,
    });
    await bridge.stdout.getReader().read();
    bridge.kill("SIGKILL");
    // The guard asks the engine only after it has dealt with the upstreams: by then it would have killed it.
    await fileSays(log, (text) => text.includes("ps -aq"));
    expect(processAlive(other.pid)).toBe(true);
    other.kill();
  });
});
