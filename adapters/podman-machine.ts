/**
 * Podman in a VM (`podman machine` on macOS and Windows). The probe finds the machine, ensureRunning()
 * starts it when it is stopped, and every command then goes through `podman --connection <machine>`
 * (the podman profile, unchanged). No volume has to be shared with the VM: the entrypoint travels
 * over the container's stdin. On Linux podman runs containers itself, so without a machine this
 * adapter says "not here" and selection has already used the podman adapter.
 */
import { BridgeError, EngineUnavailableError } from "../src/errors.ts";
import { runCommand, which, type CommandResult } from "../src/host/process.ts";
import { createCliAdapter } from "./cli-engine.ts";
import { PODMAN_PROFILE } from "./podman.ts";
import type { AdapterLog, AdapterOptions, ContainerSpec, EngineInfo, RuntimeAdapter } from "./types.ts";

const NAME = "podman-machine";
const START_TIMEOUT_MS = 5 * 60_000;
const POLL_MS = 1_000;

interface Machine {
  name: string;
  isDefault: boolean;
  running: boolean;
  starting: boolean;
  vmType: string;
}

export default function podmanMachine(options: AdapterOptions): RuntimeAdapter {
  const log = options.log ?? STDERR_LOG;
  let binary: string | undefined;
  let probed: Promise<EngineInfo> | undefined;
  let inner: RuntimeAdapter | undefined;
  let machineName = "";
  let starting: Promise<void> | undefined;

  const resolveBinary = (): string => {
    binary ??= which(options.binary ?? "podman", options.env.PATH) ?? undefined;
    if (!binary)
      throw new EngineUnavailableError(
        NAME,
        `${options.binary ?? "podman"} not found on PATH`,
        "install Podman Desktop or the podman CLI, then `podman machine init`",
      );
    return binary;
  };
  const run = (args: string[], timeoutMs = 20_000) => runCommand(resolveBinary(), args, { env: options.env, timeoutMs });
  const machine = async (): Promise<Machine> => {
    const r = await run(["machine", "list", "--format", "json"]);
    if (r.exitCode !== 0) throw listFailed(r);
    const found = pickMachine(r.stdout);
    if (!found) throw new EngineUnavailableError(NAME, "no podman machine exists", NO_MACHINE_HINT);
    return found;
  };
  const ready = async (): Promise<RuntimeAdapter> => {
    await adapter.probe();
    return inner!;
  };

  const adapter: RuntimeAdapter = {
    name: NAME,
    probe() {
      probed ??= (async () => {
        const bin = resolveBinary();
        const m = await machine();
        const conns = await run(["system", "connection", "list", "--format", "json"]);
        const connection = conns.exitCode === 0 ? pickConnection(m.name, conns.stdout) : undefined;
        const version = /(\d+\.\d+[\w.+-]*)/.exec((await run(["--version"])).stdout)?.[1] ?? "unknown";
        machineName = m.name;
        const commandPrefix = connection ? ["--connection", connection] : [];
        inner = createCliAdapter(
          { ...PODMAN_PROFILE, name: NAME, commandPrefix, passesFds: undefined },
          { ...options, binary: bin, probeCache: undefined },
        );
        const state = m.running ? "running" : m.starting ? "starting" : "stopped (started on first use)";
        return {
          engine: NAME,
          binary: bin,
          version,
          details: { machine: m.name, state, vmType: m.vmType, connection: connection ?? "default" },
        };
      })();
      probed.catch(() => {
        probed = undefined;
      });
      return probed;
    },
    async ensureRunning() {
      await adapter.probe();
      starting ??= startIfStopped().finally(() => {
        starting = undefined;
      });
      return starting;
    },
    async runArgv(spec: ContainerSpec) {
      return (await ready()).runArgv(spec);
    },
    async imageExists(image) {
      return (await ready()).imageExists(image);
    },
    async remove(name) {
      return (await ready()).remove(name);
    },
    removeSync(name) {
      inner?.removeSync(name);
    },
    async list(label) {
      return (await ready()).list(label);
    },
    async pull(image, onLine, opts) {
      return (await ready()).pull!(image, onLine, opts);
    },
    imageHint(image) {
      return `${PODMAN_PROFILE.imageHint(image, "podman")} (images live inside the machine: \`podman --connection ${machineName || "<machine>"} images\`)`;
    },
    cliArgv() {
      return inner?.cliArgv?.() ?? [];
    },
  };

  async function startIfStopped(): Promise<void> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    let m = await machine();
    if (m.running) return;
    if (!m.starting) {
      log.info("starting podman machine (it was stopped; this can take a minute)", { machine: m.name });
      const t0 = Date.now();
      const r = await run(["machine", "start", m.name], START_TIMEOUT_MS);
      if (r.exitCode !== 0 && !/already running/i.test(r.stderr)) {
        throw new BridgeError(
          "ENGINE_FAILED",
          `could not start podman machine ${m.name}: ${(r.stderr || r.stdout).trim().slice(-600) || `exit ${r.exitCode}`}`,
          {
            source: NAME,
            hint: `run \`podman machine start ${m.name}\` yourself to see why, or set MCP_BRIDGE_RUNTIME to another engine`,
          },
        );
      }
      log.info("podman machine started", { machine: m.name, ms: Date.now() - t0 });
    }
    // Someone else is starting it, or start returned before the VM answers: wait until it is up.
    while (!(m = await machine()).running) {
      if (Date.now() > deadline)
        throw new BridgeError("ENGINE_FAILED", `podman machine ${m.name} did not come up within ${START_TIMEOUT_MS / 1000}s`, {
          source: NAME,
          hint: "check `podman machine list` and `podman machine start`",
        });
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  return adapter;
}

const NO_MACHINE_HINT =
  process.platform === "linux"
    ? "on Linux podman runs containers without a VM: use the podman engine (MCP_BRIDGE_RUNTIME=podman)"
    : "create one with `podman machine init` (the bridge starts it when needed)";

const STDERR_LOG: AdapterLog = {
  info: (msg, fields) => process.stderr.write(`[mcp-code-exec] [${NAME}] ${msg}${fields ? ` ${JSON.stringify(fields)}` : ""}\n`),
  warn: (msg, fields) => process.stderr.write(`[mcp-code-exec] [${NAME}] ${msg}${fields ? ` ${JSON.stringify(fields)}` : ""}\n`),
};

/** A podman without machines here (root on Linux, a build without the command) is "not here". */
function listFailed(r: CommandResult): Error {
  const text = `${r.stderr}\n${r.stdout}`.trim();
  if (/as root|unknown command|unrecognized command|not supported|no such command/i.test(text)) {
    return new EngineUnavailableError(NAME, `podman machine is not available: ${text.split("\n")[0]}`, NO_MACHINE_HINT);
  }
  return new BridgeError("ENGINE_FAILED", `\`podman machine list\` failed (exit ${r.exitCode}): ${text.slice(0, 600)}`, {
    source: NAME,
    hint: "run `podman machine list` to see why",
  });
}

/** The default machine, else a running one, else the first. */
export function pickMachine(stdout: string): Machine | undefined {
  const rows = (JSON.parse(stdout.trim() || "[]") as Array<Record<string, unknown>>).map((r) => ({
    name: String(r.Name ?? "").replace(/\*$/, ""),
    isDefault: r.Default === true,
    running: r.Running === true,
    starting: r.Starting === true,
    vmType: String(r.VMType ?? "unknown"),
  }));
  return rows.find((m) => m.isDefault) ?? rows.find((m) => m.running) ?? rows[0];
}

/** The machine's connection: the default one when it belongs to the machine, else `<machine>`, else `<machine>-root`. */
export function pickConnection(machine: string, stdout: string): string | undefined {
  const conns = JSON.parse(stdout.trim() || "[]") as Array<{ Name?: string; Default?: boolean }>;
  const mine = conns.filter((c) => c.Name === machine || c.Name === `${machine}-root`);
  return (mine.find((c) => c.Default) ?? mine.find((c) => c.Name === machine) ?? mine[0])?.Name;
}
