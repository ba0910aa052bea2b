/**
 * The speed part of `mcp-code-exec doctor`: which engine and OCI runtime start a sandbox fastest on this
 * host. Every working engine, and for podman every other OCI runtime installed (crun, runc), starts the
 * same hardened container (every flag, the seccomp profile, `python3 -c pass`) a few times, round by
 * round so the host's load hits each alike; the medians are compared with what the bridge uses now.
 */
import type { ContainerSpec } from "../../adapters/types.ts";
import type { Config } from "../config/env.ts";
import { runCommand, which } from "../host/process.ts";
import type { Selected } from "../engines/registry.ts";
import { containerSpec } from "../session/container-spec.ts";
import { fallbackImage } from "../session/image-choice.ts";
import type { Check } from "./doctor-engines.ts";

const ROUNDS = 3;
/** A choice must be at least this much faster to be worth a tip. */
const WORTH_IT = 0.15;
const OTHER_RUNTIMES = ["crun", "runc"];

interface Candidate {
  label: string;
  /** How the user would pick it. */
  setting: string;
  selected: Selected;
  ociRuntime: string | undefined;
  current: boolean;
}

export async function speedChecks(args: {
  chosen: Selected;
  available: Selected[];
  config: Config;
  env: Record<string, string>;
  seccompProfile?: string;
}): Promise<Check[]> {
  const { chosen, config } = args;
  const candidates: Candidate[] = [
    { label: describeChoice(chosen, config.ociRuntime), setting: "", selected: chosen, ociRuntime: config.ociRuntime, current: true },
  ];
  for (const other of args.available) {
    if (other.adapter.name === chosen.adapter.name || other.adapter.ensureRunning) continue; // a VM is not a like-for-like choice
    candidates.push({
      label: other.adapter.name,
      setting: `MCP_BRIDGE_RUNTIME=${other.adapter.name}`,
      selected: other,
      ociRuntime: undefined,
      current: false,
    });
  }
  if (chosen.adapter.name === "podman") {
    const current = config.ociRuntime ?? chosen.info.details.ociRuntime;
    for (const rt of OTHER_RUNTIMES) {
      if (rt === current || !which(rt, args.env.PATH)) continue;
      candidates.push({
        label: `podman with ${rt}`,
        setting: `MCP_BRIDGE_OCI_RUNTIME=${rt}`,
        selected: chosen,
        ociRuntime: rt,
        current: false,
      });
    }
  }
  if (candidates.length === 1) return [];

  const times = new Map<Candidate, number[]>();
  const failed = new Map<Candidate, string>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const c of candidates) {
      if (failed.has(c)) continue;
      const r = await startOnce(c, config, args.env, args.seccompProfile);
      if (typeof r === "string") failed.set(c, r);
      else (times.get(c) ?? times.set(c, []).get(c)!).push(r);
    }
  }
  const median = (c: Candidate) => {
    const xs = [...(times.get(c) ?? [])].sort((a, b) => a - b);
    return xs.length ? xs[Math.floor(xs.length / 2)]! : Number.NaN;
  };
  const parts = candidates.map((c) =>
    failed.has(c)
      ? `${c.label}: does not start here (${failed.get(c)})`
      : `${c.label}${c.current ? " (in use)" : ""}: ${Math.round(median(c))} ms`,
  );
  const check: Check = {
    name: "sandbox start time",
    ok: true,
    detail: `median of ${ROUNDS} starts of the same hardened container: ${parts.join("; ")}`,
  };
  const now = median(candidates[0]!);
  const best = candidates.filter((c) => !c.current && !failed.has(c)).sort((a, b) => median(a) - median(b))[0];
  if (best && Number.isFinite(now) && median(best) < now * (1 - WORTH_IT)) {
    check.tip = `${best.setting} starts sandboxes ${Math.round((1 - median(best) / now) * 100)}% faster here (${Math.round(median(best))} ms against ${Math.round(now)} ms): the first call of every conversation waits for one start`;
  }
  return [check];
}

function describeChoice(s: Selected, ociRuntime: string | undefined): string {
  const rt = ociRuntime ?? s.info.details.ociRuntime;
  return rt && rt !== "unknown" ? `${s.adapter.name} with ${rt}` : s.adapter.name;
}

/** Milliseconds from spawn to exit, or why the start failed (its last line). */
async function startOnce(
  c: Candidate,
  config: Config,
  env: Record<string, string>,
  seccompProfile: string | undefined,
): Promise<number | string> {
  // The image each engine would run: the configured one, or the offline image where that is missing (as sessions do).
  const adapter = c.selected.adapter;
  const image = (await adapter.imageExists(config.image).catch(() => false)) ? config.image : await fallbackImage(config, adapter);
  if (!image) return `no image: ${config.image} is not in ${adapter.name}`;
  const spec: ContainerSpec = {
    ...containerSpec(config, seccompProfile),
    image,
    ociRuntime: c.ociRuntime,
    command: ["python3", "-c", "pass"],
  };
  const [command, ...rest] = await adapter.runArgv(spec);
  const t0 = performance.now();
  const r = await runCommand(command!, rest, { env, timeoutMs: 60_000 });
  const ms = performance.now() - t0;
  if (r.exitCode === 0) return ms;
  await adapter.remove(spec.name).catch(() => {});
  // The line that says what failed (docker ends with "Run 'docker run --help' for more information").
  const lines = `${r.stderr}\n${r.stdout}`.trim().split("\n").filter(Boolean);
  const said = lines.find((l) => /error/i.test(l)) ?? lines.at(-1);
  return (said ?? `exit ${r.exitCode}`).replace(/^(docker: )?Error( response from daemon)?: /, "").slice(0, 200);
}
