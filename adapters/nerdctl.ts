/**
 * containerd through the nerdctl CLI. nerdctl speaks docker's flags; where it differs (checked against
 * nerdctl's command reference), the shared hardening flags are adapted after the probe:
 * - `--log-driver none` exists only since nerdctl 2.0 (1.7 answers "unknown logging driver"); the probe
 *   reads the log drivers `nerdctl info` lists and drops the flag when `none` is not one of them. Such
 *   an old nerdctl may keep the sandbox's output in its json log: doctor shows `logDrivers` and says so;
 * - `--runtime runsc` means the runc shim running a binary named runsc; gVisor's own containerd shim is
 *   `io.containerd.runsc.v1`, so a bare runsc becomes that.
 * Everything else (`--pull never`, `--memory-swap`, `--ipc private`, `--security-opt`, `--tmpfs` options,
 * `--ulimit`, `--pids-limit`, `--shm-size`) is accepted as docker spells it.
 */
import { createCliAdapter, imageHint, unavailableOrFailed, type CliEngineProfile } from "./cli-engine.ts";
import { isGvisor } from "./oci-flags.ts";
import type { AdapterOptions, EngineInfo, RuntimeAdapter } from "./types.ts";

/** Messages of a nerdctl whose containerd is not running or not reachable. */
const NOT_ANSWERING = [
  /cannot access containerd socket/i,
  /rootless containerd not running/i,
  /connection refused/i,
  /permission denied/i,
  /context deadline exceeded/i,
  /no such file or directory.*sock/i,
];
const NOT_ANSWERING_HINT =
  "start containerd (`systemctl start containerd`, or `containerd-rootless-setuptool.sh install` for rootless), or set MCP_BRIDGE_RUNTIME=podman";

export default function nerdctl(options: AdapterOptions): RuntimeAdapter {
  return createCliAdapter(NERDCTL_PROFILE, options);
}

const NERDCTL_PROFILE: CliEngineProfile = {
  name: "nerdctl",
  binary: "nerdctl",
  installHint:
    "install nerdctl with containerd (a nerdctl-full release, or Rancher Desktop / Lima), or set MCP_BRIDGE_RUNTIME=podman or docker",
  async probe(run) {
    const v = await run(["version", "--format", "{{json .}}"]);
    if (v.exitCode !== 0) throw unavailableOrFailed("nerdctl", v, NOT_ANSWERING, NOT_ANSWERING_HINT);
    const info = await run(["info", "--format", "{{json .}}"]);
    if (info.exitCode !== 0) throw unavailableOrFailed("nerdctl", info, NOT_ANSWERING, NOT_ANSWERING_HINT);
    const version = JSON.parse(v.stdout) as {
      Client?: { Version?: string };
      Server?: { Components?: Array<{ Name?: string; Version?: string }> };
    };
    const facts = JSON.parse(info.stdout) as {
      ServerVersion?: string;
      CgroupVersion?: string;
      CgroupDriver?: string;
      Plugins?: { Log?: string[] };
    };
    const containerd = version.Server?.Components?.find((c) => c.Name === "containerd")?.Version ?? facts.ServerVersion ?? "unknown";
    const warnings = [
      ...(facts.Plugins?.Log?.includes("none")
        ? []
        : ["no `none` log driver (nerdctl < 2.0): sandbox output may be kept in nerdctl's log; upgrade nerdctl"]),
    ];
    return {
      version: (version.Client?.Version ?? "unknown").replace(/^v/, ""),
      details: {
        containerd,
        cgroupVersion: facts.CgroupVersion ?? "unknown",
        cgroupDriver: facts.CgroupDriver ?? "unknown",
        logDrivers: (facts.Plugins?.Log ?? []).join(","),
        ...(warnings.length > 0 ? { warning: warnings.join("; ") } : {}),
      },
    };
  },
  runFlags: nerdctlRunFlags,
  imageExistsArgs: (image) => ["image", "inspect", "--format", "{{.Id}}", image],
  removeArgs: (name) => ["rm", "--force", name],
  listArgs: (label) => ["ps", "--all", "--no-trunc", "--filter", `label=${label}`, "--format", "{{json .}}"],
  imageHint,
};

/** The shared hardening flags in nerdctl's dialect, given what its probe found. */
export function nerdctlRunFlags(flags: string[], _spec: unknown, info: Pick<EngineInfo, "details">): string[] {
  let out = flags;
  const drivers = (info.details.logDrivers ?? "").split(",");
  if (!drivers.includes("none")) out = dropFlag(out, "--log-driver");
  out = mapFlagValue(out, "--runtime", (r) => (isGvisor(r) && !r.includes("/") ? "io.containerd.runsc.v1" : r));
  return out;
}

/** `flags` without each `name` and the value that follows it (a flag this engine lacks). */
export function dropFlag(flags: string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < flags.length; i++) {
    if (flags[i] === name) i++;
    else out.push(flags[i]!);
  }
  return out;
}

/** `flags` with the value after each `name` passed through `map` (a value this engine spells differently). */
export function mapFlagValue(flags: string[], name: string, map: (value: string) => string): string[] {
  return flags.map((f, i) => (i > 0 && flags[i - 1] === name ? map(f) : f));
}
