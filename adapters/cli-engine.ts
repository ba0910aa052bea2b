/**
 * The machinery podman, docker and nerdctl share: find the CLI, run it without a shell, memoise the
 * probe, and turn "not installed" / "daemon not reachable" into EngineUnavailableError so selection
 * can move on. Each engine file supplies only what differs.
 */
import { BridgeError, EngineUnavailableError } from "../src/errors.ts";
import { runCommand, runCommandSync, spawnChild, which, type CommandResult } from "../src/host/process.ts";
import { probeKey } from "../src/engines/probe-cache.ts";
import { hardeningFlags, parseLabels } from "./oci-flags.ts";
import type { AdapterOptions, ContainerSpec, ContainerSummary, EngineInfo, RuntimeAdapter } from "./types.ts";

export interface CliEngineProfile {
  name: string;
  /** Default binary name on PATH. */
  binary: string;
  installHint: string;
  /**
   * Ask the engine for its version; throw EngineUnavailableError when it does not answer. A probe that
   * had to find the engine's endpoint itself (a socket its CLI does not know) returns the global flags
   * that reach it: every later command carries them.
   */
  probe(run: Run, binary: string): Promise<Omit<EngineInfo, "engine" | "binary"> & { connectFlags?: string[] }>;
  imageExistsArgs(image: string): string[];
  removeArgs(name: string): string[];
  /** `ps` arguments printing JSON (one array, or one object per line). */
  listArgs(label: string): string[];
  /** Extra `run` flags this engine needs before the shared hardening flags. */
  runExtra?: string[];
  /** Global CLI flags (before `run`) this spec needs on this engine. */
  globalFlags?(spec: ContainerSpec): string[];
  /** Global CLI flags before every subcommand (`podman --connection NAME`). */
  commandPrefix?: string[];
  /**
   * Adapt the shared hardening flags to this engine's dialect, knowing what its probe learned (a flag
   * it lacks, a value it spells differently). runArgv probes first when this is set.
   */
  runFlags?(flags: string[], spec: ContainerSpec, info: EngineInfo): string[];
  imageHint(image: string, binary: string): string;
  /** The engine hands a spec's channelFd to the container (RuntimeAdapter.passesFds), given its environment. */
  passesFds?(env: Record<string, string>): boolean;
  /** RuntimeAdapter.sharesHostSockets: the engine's containers can reach a socket in our temp folder. */
  sharesHostSockets?(info: EngineInfo): boolean;
}

export type Run = (args: string[], timeoutMs?: number) => Promise<CommandResult>;

const PROBE_TIMEOUT_MS = 20_000;

/** A RuntimeAdapter for a docker-compatible CLI described by `profile`. */
export function createCliAdapter(profile: CliEngineProfile, options: AdapterOptions): RuntimeAdapter {
  let prefix = profile.commandPrefix ?? [];
  let probed: Promise<EngineInfo> | undefined;
  let binary: string | undefined;
  let cacheKey: string | undefined;

  const resolveBinary = (): string => {
    if (binary) return binary;
    const found = which(options.binary ?? profile.binary, options.env.PATH);
    if (!found) {
      throw new EngineUnavailableError(
        profile.name,
        `${options.binary ?? profile.binary} not found on PATH (looked in ${options.env.PATH || "(empty)"})`,
        profile.installHint,
      );
    }
    binary = found;
    return found;
  };

  const run: Run = (args, timeoutMs = PROBE_TIMEOUT_MS) =>
    runCommand(resolveBinary(), [...prefix, ...args], { env: options.env, timeoutMs });

  const checked = async (args: string[], what: string): Promise<CommandResult> => {
    const r = await run(args);
    if (r.exitCode !== 0) {
      throw new BridgeError(
        "ENGINE_FAILED",
        `${what} failed: \`${[profile.binary, ...prefix, ...args].join(" ")}\` exited ${r.exitCode ?? "by signal"}${r.timedOut ? " (timed out)" : ""}: ${r.stderr.trim().slice(0, 500)}`,
        { source: profile.name },
      );
    }
    return r;
  };

  const adapter: RuntimeAdapter = {
    name: profile.name,
    passesFds: profile.passesFds?.(options.env) === true,
    sharesHostSockets: (info) => profile.sharesHostSockets?.(info) === true,
    probe() {
      probed ??= (async () => {
        const bin = resolveBinary();
        const cache = options.probeCache;
        cacheKey = cache && probeKey(profile.name, bin, options.env);
        const hit = cacheKey ? cache!.get(cacheKey) : undefined;
        if (hit && hit.info.engine === profile.name && hit.info.binary === bin) {
          if (hit.connectFlags) prefix = [...(profile.commandPrefix ?? []), ...hit.connectFlags];
          return { ...hit.info, cached: true };
        }
        const { connectFlags, ...found } = await profile.probe(run, bin);
        if (connectFlags) prefix = [...(profile.commandPrefix ?? []), ...connectFlags];
        const info: EngineInfo = { engine: profile.name, binary: bin, ...found };
        if (cacheKey) cache!.set(cacheKey, { info, connectFlags });
        return info;
      })();
      // A failed probe may succeed later (daemon started): do not memoise failures.
      probed.catch(() => {
        probed = undefined;
      });
      return probed;
    },
    forgetProbe() {
      probed = undefined;
      prefix = profile.commandPrefix ?? [];
      if (cacheKey) options.probeCache?.delete(cacheKey);
      cacheKey = undefined;
    },
    async runArgv(spec: ContainerSpec) {
      let flags = hardeningFlags(spec);
      const info = await adapter.probe(); // learns the endpoint flags, and the engine's dialect
      if (profile.runFlags) flags = profile.runFlags(flags, spec, info);
      const global = [...prefix, ...(profile.globalFlags?.(spec) ?? [])];
      return [resolveBinary(), ...global, "run", ...(profile.runExtra ?? []), ...flags, spec.image, ...spec.command];
    },
    async imageExists(image) {
      const r = await run(profile.imageExistsArgs(image));
      return r.exitCode === 0;
    },
    async remove(name) {
      await run(profile.removeArgs(name), 30_000);
    },
    removeSync(name) {
      try {
        runCommandSync(resolveBinary(), [...prefix, ...profile.removeArgs(name)], { env: options.env, timeoutMs: 10_000 });
      } catch {
        // best effort at exit
      }
    },
    async list(label) {
      const r = await checked(profile.listArgs(label), "listing containers");
      return parseContainerList(r.stdout);
    },
    imageHint(image) {
      return profile.imageHint(image, profile.binary);
    },
    pull(image, onLine, opts) {
      return pullWith(resolveBinary(), [...prefix, "pull", image], options.env, profile.name, onLine, opts.timeoutMs);
    },
    cliArgv() {
      return [resolveBinary(), ...prefix];
    },
  };
  return adapter;
}

/**
 * `ENGINE pull IMAGE`, its output passed on line by line as it comes (layers fetched, written), killed
 * after `timeoutMs`. A failure carries the engine's last lines, which say why (no route, unknown
 * image, denied).
 */
async function pullWith(
  binary: string,
  args: string[],
  env: Record<string, string>,
  engine: string,
  onLine: (line: string) => void,
  timeoutMs: number,
): Promise<void> {
  const child = spawnChild(binary, args, { env });
  child.closeStdin();
  const tail: string[] = [];
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill("SIGKILL");
  }, timeoutMs);
  (timer as { unref?: () => void }).unref?.();
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    let buffered = "";
    const emit = (raw: string) => {
      // Progress bars redraw with carriage returns; each redraw counts as a line.
      for (const piece of raw.split("\r")) {
        const line = piece.trim();
        if (!line) continue;
        tail.push(line);
        if (tail.length > 12) tail.shift();
        onLine(line);
      }
    };
    for await (const chunk of stream) {
      buffered += decoder.decode(chunk, { stream: true });
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) emit(line);
    }
    emit(buffered);
  };
  const [, , code] = await Promise.all([pump(child.stdout), pump(child.stderr), child.exited]);
  clearTimeout(timer);
  if (code === 0) return;
  const why = timedOut ? `no result within ${Math.round(timeoutMs / 1000)}s (MCP_BRIDGE_PULL_TIMEOUT)` : tail.slice(-4).join(" / ");
  throw new BridgeError("IMAGE_PULL", `\`${engine} pull\` exited ${code ?? "by signal"}: ${why.slice(0, 800)}`, { source: engine });
}

/** Accepts podman's JSON array and docker's JSON-object-per-line output. */
export function parseContainerList(stdout: string): ContainerSummary[] {
  const text = stdout.trim();
  if (!text) return [];
  let rows: unknown[];
  if (text.startsWith("[")) rows = JSON.parse(text) as unknown[];
  else
    rows = text
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as unknown);
  return rows.map((row) => {
    const r = row as Record<string, unknown>;
    const names = r.Names;
    const name = Array.isArray(names) ? String(names[0] ?? "") : String(names ?? r.Name ?? "");
    const state = String(r.State ?? r.Status ?? "").toLowerCase();
    return { name, labels: parseLabels(r.Labels), running: state.startsWith("running") || state.startsWith("up") };
  });
}

/**
 * How a user of the binary gets a missing image into this engine: commands of ours, never a path in
 * our source tree (binary users have none).
 */
export function imageHint(image: string, engineBinary: string): string {
  const build =
    "build it with `mcp-code-exec image build` (Linux: from Debian and PyPI, or with --offline from a local Debian mirror and wheelhouse)";
  const load = "load it with `mcp-code-exec image load FILE` (a file from `mcp-code-exec image save FILE` on another machine)";
  if (image.includes("mcp-code-exec-sandbox"))
    return `pull it with \`mcp-code-exec image pull\` where a registry is reachable; where none is, ${build} or ${load}`;
  return `run \`mcp-code-exec image pull\` (or \`${engineBinary} pull ${image}\`); with no registry, unset MCP_BRIDGE_IMAGE and get the default sandbox image: ${build}, or ${load}`;
}

/** Classify a failed probe: a daemon that is not there is "unavailable", anything else is an error. */
export function unavailableOrFailed(engine: string, r: CommandResult, patterns: RegExp[], hint: string): Error {
  const text = `${r.stderr}\n${r.stdout}`.trim();
  if (r.timedOut || patterns.some((p) => p.test(text))) {
    return new EngineUnavailableError(engine, `${engine} is installed but not answering: ${firstLine(text) || "timed out"}`, hint);
  }
  return new BridgeError("ENGINE_FAILED", `\`${engine} ${r.args.join(" ")}\` failed (exit ${r.exitCode}): ${text.slice(0, 800)}`, {
    source: engine,
    hint,
  });
}

function firstLine(s: string): string {
  return (
    s
      .split("\n")
      .find((l) => l.trim())
      ?.trim() ?? ""
  );
}
