/**
 * The attack suite, against every engine configuration we support here: podman, docker, and gVisor
 * (runsc) under both. Each attack's outcome is asserted from inside (its verdict) and from outside:
 * the bridge answers the next call, the canary files are unchanged, nothing of the sandbox outlives it.
 * A deliberately weakened sandbox must FAIL the same checks, so a suite that passes by accident is caught.
 * With MCP_TEST_WRITE_SECURITY_TABLE=1 the results table in docs/security.md is regenerated.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startBridge, type BridgeHandle, type RunResult } from "../support/bridge.ts";
import { listOurContainers, plainRunFlags, waitFor } from "../support/engines.ts";
import { ENGINES, IMAGE, ROOT } from "../support/env.ts";
import { ATTACKS, fill, type Attack } from "./attacks.ts";
import { kubeEnv } from "../support/kube.ts";
import { runWeakened } from "./weakened.ts";

const GVISOR = (process.env.MCP_TEST_GVISOR ?? "1") !== "0";
/** Attacks on what the sandbox's init does (reaping, surviving signals), for configs that only change the init. */
const INIT_ATTACKS = ["double-fork-daemon", "orphan-zombies", "signal-the-init"];
interface Config {
  name: string;
  engine: string;
  env: Record<string, string>;
  /** Only these attacks (all when absent). */
  only?: string[];
}
/**
 * The kubernetes engine on the test cluster (scripts/kube-up.sh): runc pods, and gVisor pods (the
 * RuntimeClass gvisor, run by gVisor's containerd shim that scripts/kube-build.sh builds).
 */
const KUBE: Config[] =
  (process.env.MCP_TEST_KUBE ?? "1") !== "0"
    ? [
        { name: "kubernetes", engine: "kubernetes", env: kubeEnv() },
        ...(GVISOR
          ? [{ name: "kubernetes+gVisor", engine: "kubernetes", env: kubeEnv({ MCP_BRIDGE_OCI_RUNTIME: "runsc", MCP_BRIDGE_PIDS: "512" }) }]
          : []),
      ]
    : [];
const CONFIGS: Config[] = [
  ...KUBE,
  ...ENGINES.flatMap((engine): Config[] => [
    { name: engine, engine, env: {} },
    ...(GVISOR ? [{ name: `${engine}+gVisor`, engine, env: { MCP_BRIDGE_OCI_RUNTIME: "runsc", MCP_BRIDGE_PIDS: "512" } }] : []),
    // Podman's init helper (catatonit) made unavailable, as on hosts that installed podman without
    // recommends: the sandbox must not need it.
    ...(engine === "podman"
      ? [{ name: "podman, no init helper", engine, env: { CONTAINERS_CONF: noInitHelperConf() }, only: INIT_ATTACKS }]
      : []),
  ]),
];

/** A containers.conf like the system's, with init_path pointing nowhere. */
function noInitHelperConf(): string {
  const file = join(mkdtempSync(join(tmpdir(), "mcx-noinit-")), "containers.conf");
  let conf = "";
  try {
    conf = readFileSync("/etc/containers/containers.conf", "utf8");
  } catch {
    // no system file: podman's defaults plus ours
  }
  conf = /^\[engine\]/m.test(conf)
    ? conf.replace(/^\[engine\]\n/m, '[engine]\ninit_path = "/nonexistent/catatonit"\n')
    : `${conf}\n[engine]\ninit_path = "/nonexistent/catatonit"\n`;
  writeFileSync(file, conf);
  return file;
}
const RESULTS = new Map<string, Map<string, string>>(); // attack id -> config -> cell

export interface Outcome {
  contained: boolean;
  detail: string;
}

/** Judge one run: the verdict from inside, or how the bridge ended it. */
export function judge(
  attack: Attack,
  r: {
    value?: string;
    error?: { type: string; message: string };
    stdoutDropped?: number;
    stdoutLength?: number;
    sessionReset?: string;
    timedOut?: boolean;
  },
  cap: number,
): Outcome {
  if (attack.id === "stdout-flood" || attack.id === "huge-line") {
    const ok = (r.stdoutDropped ?? 0) > 10 * 1024 * 1024 && (r.stdoutLength ?? 0) <= cap;
    return { contained: ok, detail: `${r.stdoutLength} bytes kept, ${r.stdoutDropped} dropped` };
  }
  const m = r.value ? /^\{'contained': (True|False), 'detail': (.*)\}$/s.exec(r.value) : null;
  if (m) return { contained: m[1] === "True", detail: m[2]!.slice(1, -1) };
  if (attack.mustFinish && r.timedOut) return { contained: false, detail: "timed out before its check ran: nothing was verified" };
  if (r.error && (r.timedOut || r.sessionReset || r.error.type === "MemoryError")) {
    return {
      contained: true,
      detail: r.timedOut
        ? `timed out; ${r.sessionReset ? "sandbox killed, session reset" : "interrupted, session kept"}`
        : `${r.error.type}: ${r.error.message.slice(0, 120)}`,
    };
  }
  return { contained: false, detail: `unexpected: ${r.error ? `${r.error.type}: ${r.error.message}` : r.value}` };
}

function fromBridge(res: RunResult) {
  const s = res.structured;
  return {
    value: s.value as string | undefined,
    error: s.error as { type: string; message: string } | undefined,
    stdoutDropped: s.stdout_dropped_bytes as number | undefined,
    stdoutLength: typeof s.stdout === "string" ? Buffer.byteLength(s.stdout) : 0,
    sessionReset: s.session_reset as string | undefined,
    timedOut: s.timed_out as boolean | undefined,
  };
}

const hashOf = (p: string) => createHash("sha256").update(readFileSync(p)).digest("hex");

/** The slowest of back-to-back MCP pings over `ms` (each waits for the one before). */
async function worstPing(bridge: BridgeHandle, ms: number): Promise<number> {
  let worst = 0;
  const until = performance.now() + ms;
  while (performance.now() < until) {
    const t0 = performance.now();
    await bridge.client.ping();
    worst = Math.max(worst, performance.now() - t0);
    await Bun.sleep(20);
  }
  return worst;
}
const pgrep = (pattern: string) => Bun.spawnSync(["pgrep", "-f", pattern]).stdout.toString().trim();

describe.each(CONFIGS)("attacks on $name", ({ name, engine, env, only }) => {
  const canary = `canary-${Math.random().toString(36).slice(2)}`;
  const home = mkdtempSync(join(tmpdir(), "mcx-sec-"));
  /** The bridge's working directory: the user's project, which nothing may touch. */
  const project = mkdtempSync(join(tmpdir(), "mcx-sec-project-"));
  const canaryFiles = [join(home, ".ssh", "id_ed25519"), join(home, ".config", "mcp", "servers", "secrets.json")];
  let bridge: BridgeHandle;
  let hashes: string[];

  beforeAll(async () => {
    mkdirSync(join(home, ".ssh"), { recursive: true });
    writeFileSync(canaryFiles[0]!, `-----BEGIN OPENSSH PRIVATE KEY-----\n${canary}\n`);
    mkdirSync(join(home, ".config", "mcp", "servers"), { recursive: true });
    writeFileSync(
      canaryFiles[1]!,
      JSON.stringify({
        mcpServers: { flaky: { command: "bun", args: [join(ROOT, "test", "fixtures", "flaky-server.ts")], env: { API_KEY: canary } } },
      }),
    );
    hashes = canaryFiles.map(hashOf);
    bridge = await startBridge(
      {
        ...env,
        HOME: home,
        MCP_BRIDGE_RUNTIME: engine,
        MCP_BRIDGE_STATE_DIR: join(home, "state"),
        MCP_TEST_SECRET: canary,
        AWS_SECRET_ACCESS_KEY: canary,
      },
      { cwd: project },
    );
  }, 60_000);

  afterAll(async () => {
    await bridge?.close();
  });

  for (const attack of ATTACKS.filter((a) => !only || only.includes(a.id))) {
    test(`${attack.family}: ${attack.id} — ${attack.title}`, async () => {
      const code = fill(attack.code, { canary, hostHome: home, bridgePid: bridge.pid });
      const res = await bridge.run(code, { timeout: attack.timeout ?? 15, servers: attack.servers });
      let outcome = attack.judgeResult
        ? attack.judgeResult({
            text: res.text,
            structured: res.structured,
            bytes: JSON.stringify(res.raw).length,
            images: res.raw.content.filter((c) => c.type === "image").length,
          })
        : judge(attack, fromBridge(res), 64 * 1024);
      if (attack.after && outcome.contained) {
        // From outside while it goes on: the bridge answers pings, then stops the sandbox and says so.
        const worst = await worstPing(bridge, attack.after.watchMs);
        const next = await bridge.run("'after'");
        const told = next.text.includes(attack.after.nextNote);
        outcome = {
          contained: worst < 1000 && told && next.structured.value === "'after'",
          detail: `${outcome.detail}; pings answered within ${Math.round(worst)} ms throughout; next call: ${told ? "sandbox stopped and the loss reported" : `NOT told: ${next.text.slice(0, 200)}`}`,
        };
      }
      if (attack.id === "cpu-spin" && !outcome.contained && env.MCP_BRIDGE_OCI_RUNTIME) {
        // Inside gVisor the guest's clock and accounting do not show the host's CPU throttling; the
        // limit is the host cgroup's, so check that from the host.
        const [c] = (await listOurContainers(engine)).filter((x) => x.owner.endsWith(`:${bridge.pid}`));
        const nano = Bun.spawnSync([engine, "inspect", "--format", "{{.HostConfig.NanoCpus}}", c!.name]).stdout.toString().trim();
        outcome = {
          contained: nano === "1000000000",
          detail: `guest sees ${outcome.detail}; host cgroup limit ${Number(nano) / 1e9} CPU (engine inspect)`,
        };
      }
      const cell = `${outcome.contained ? "contained" : "**NOT CONTAINED**"}: ${outcome.detail}`;
      if (!RESULTS.has(attack.id)) RESULTS.set(attack.id, new Map());
      RESULTS.get(attack.id)!.set(name, cell);
      expect(outcome.contained ? "contained" : `NOT CONTAINED: ${outcome.detail}`).toBe("contained");
      if (!attack.mayReset && !attack.timeout) expect(res.structured.session_reset).toBeUndefined();
      // From outside: the bridge answers, and the session works (fresh if the attack cost it).
      const alive = await bridge.run("'alive'");
      expect(alive.structured.value).toBe("'alive'");
      if (attack.control) {
        const control = await bridge.run(fill(attack.control, { canary, hostHome: home, bridgePid: bridge.pid }), { timeout: 30 });
        // The whole answer when it has no value (an error), so a failure says what went wrong.
        expect(control.structured.value ?? control.text).toStartWith("{'contained': True");
      }
    });
  }

  test("from the host: canaries unchanged, nothing of the sandbox outlives the bridge", async () => {
    expect(canaryFiles.map(hashOf)).toEqual(hashes);
    // Nothing appeared in the bridge's working directory (the user's project): conmon writes `oom` into
    // its own after the memory bomb, so the engine CLI must not run there.
    expect(readdirSync(project)).toEqual([]);
    const pid = bridge.pid;
    await bridge.close();
    expect(await waitFor(async () => !(await listOurContainers(engine)).some((c) => c.owner.endsWith(`:${pid}`)), 30_000)).toBe(true);
    expect(await waitFor(async () => pgrep("sleep 31337") === "", 15_000)).toBe(true);
  });
});

/** Code that stops what it can of the sandbox's own enforcement: its init, and the runtime's way out. */
const FIGHT =
  "import os, signal\ntry:\n    os.kill(1, signal.SIGSTOP)\nexcept OSError:\n    pass\nos._exit = lambda *a: None\nimport _thread\n_thread.interrupt_main = lambda *a: None\n'fighting'";

describe.each(CONFIGS.filter((c) => !c.only))("code that fights the lifetime cap and the bridge's death, on $name", ({ engine, env }) => {
  const mine = async (pid: number) => (await listOurContainers(engine)).filter((c) => c.owner.endsWith(`:${pid}`));

  test("the lifetime cap holds with the sandbox's init stopped (gVisor lets code stop it)", async () => {
    const bridge = await startBridge({ ...env, MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_CONTAINER_LIFETIME: "8" });
    try {
      expect((await bridge.run(FIGHT)).structured.value).toBe("'fighting'");
      expect(await waitFor(async () => (await mine(bridge.pid)).length === 0, 30_000)).toBe(true);
      const next = await bridge.run("'fighting' == _");
      expect(next.text).toContain("lifetime cap");
    } finally {
      await bridge.close();
    }
  }, 90_000);

  test("SIGKILL of the bridge: the sandbox is gone within seconds, init stopped, exit patched, GIL held", async () => {
    const bridge = await startBridge({ ...env, MCP_BRIDGE_RUNTIME: engine });
    await bridge.run(FIGHT);
    const [c] = await mine(bridge.pid);
    expect(c).toBeDefined();
    void bridge.run("import re\nre.match(r'(a+)+$', 'a' * 64 + 'b')", { timeout: 120 }).catch(() => {});
    await Bun.sleep(1000);
    process.kill(bridge.pid, "SIGKILL");
    expect(await waitFor(async () => !(await listOurContainers(engine)).some((x) => x.name === c!.name), 20_000)).toBe(true);
    await bridge.close();
  }, 90_000);
});

describe.skipIf(!ENGINES.includes("podman"))("the no-init-helper configuration", () => {
  test("really has no init helper: podman's own --init fails under it", () => {
    const conf = CONFIGS.find((c) => c.name === "podman, no init helper")!.env.CONTAINERS_CONF!;
    const r = Bun.spawnSync(["podman", "run", "--rm", "--init", ...plainRunFlags("podman"), IMAGE, "true"], {
      env: { ...process.env, CONTAINERS_CONF: conf },
    });
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr.toString()).toMatch(/init/i);
  });
});

describe("a deliberately weakened sandbox fails the suite", () => {
  test("root, capabilities, writable root, no seccomp, no no-new-privileges: the checks catch it", async () => {
    const engine = ENGINES[0]!;
    const failed = await runWeakened(
      engine,
      ATTACKS.filter((a) => !a.bridgeOnly && a.family !== "resources"),
      judge,
    );
    // Each of these must be reported NOT contained; if any passes, the check is not checking.
    console.log(`weakened sandbox: NOT contained: ${failed.join(", ")}`);
    expect(failed).toEqual(
      expect.arrayContaining([
        "raw-socket",
        "write-system-dirs",
        "proc-sys-writes",
        "setuid-binaries",
        "capabilities",
        "mount-remount",
        "user-namespaces",
        "dangerous-syscalls",
      ]),
    );
  });
});

afterAll(() => {
  const configs = CONFIGS.map((c) => c.name);
  const lines = [
    `| attack | family | ${configs.join(" | ")} |`,
    `| --- | --- | ${configs.map(() => "---").join(" | ")} |`,
    ...ATTACKS.map(
      (a) =>
        `| ${a.id}: ${a.title} | ${a.family} | ${configs.map((c) => (RESULTS.get(a.id)?.get(c) ?? "not run").replaceAll("|", "\\|").replaceAll("\n", " ")).join(" | ")} |`,
    ),
  ];
  const table = lines.join("\n");
  if (process.env.MCP_TEST_WRITE_SECURITY_TABLE === "1") {
    const doc = join(ROOT, "docs", "security.md");
    const text = readFileSync(doc, "utf8");
    const start = "<!-- attack-table:start -->";
    const end = "<!-- attack-table:end -->";
    const stamp = `Generated by \`MCP_TEST_WRITE_SECURITY_TABLE=1 bun test test/security\` on ${new Date().toISOString().slice(0, 10)}.`;
    writeFileSync(doc, `${text.slice(0, text.indexOf(start) + start.length)}\n${stamp}\n\n${table}\n${text.slice(text.indexOf(end))}`);
  }
});
