/**
 * Hardening flags shared by every OCI engine CLI (podman, docker, nerdctl speak the same dialect).
 * Each flag is here on purpose; tests assert on every one, from the command line and from inside.
 */
import type { ContainerSpec } from "./types.ts";

export function hardeningFlags(spec: ContainerSpec): string[] {
  const flags = [
    "--name",
    spec.name,
    "--rm",
    "-i",
    // No --init: the entrypoint's own PID 1 (entrypoint/init.py) reaps orphans and enforces the
    // lifetime cap, so no engine init helper (catatonit, tini) has to be installed on the host.
    "--pull",
    "never",
    "--network",
    "none",
    "--read-only",
    "--cap-drop",
    "ALL",
    "--security-opt",
    "no-new-privileges",
    "--user",
    spec.user,
    "--memory",
    spec.memory,
    "--memory-swap",
    spec.memory,
    "--pids-limit",
    String(spec.pids),
    "--cpus",
    String(spec.cpus),
    "--tmpfs",
    `/tmp:rw,nosuid,nodev,size=${spec.tmpfsSize},mode=1777`,
    "--shm-size",
    spec.shmSize,
    "--ulimit",
    `nofile=${spec.ulimits.nofile}:${spec.ulimits.nofile}`,
    "--ulimit",
    `nproc=${spec.ulimits.nproc}:${spec.ulimits.nproc}`,
    "--ipc",
    "private",
    "--hostname",
    "sandbox",
    "--workdir",
    "/tmp",
    "--log-driver",
    "none",
    // Stopped from outside (`stop`, a daemon restart, a shutdown), the sandbox is killed at once: its
    // init ignores SIGTERM on purpose (code inside must not end it early), so the default signal only
    // makes the engine wait out its 10 s grace first.
    "--stop-signal",
    "SIGKILL",
  ];
  for (const m of spec.mounts ?? []) {
    if (m.source.includes(",") || m.target.includes(",")) throw new Error(`mount paths must not contain commas: ${m.source}`);
    flags.push("--mount", `type=bind,source=${m.source},target=${m.target}${m.readonly ? ",readonly" : ""}`);
  }
  if (spec.seccompProfile) flags.push("--security-opt", `seccomp=${spec.seccompProfile}`);
  if (spec.ociRuntime) flags.push("--runtime", spec.ociRuntime);
  for (const [k, v] of Object.entries(spec.labels)) flags.push("--label", `${k}=${v}`);
  for (const [k, v] of Object.entries(spec.env)) flags.push("--env", `${k}=${v}`);
  return flags;
}

/** The full `run` argv for a docker-compatible CLI. */
export function runArgv(binary: string, spec: ContainerSpec, extra: string[] = [], global: string[] = []): string[] {
  return [binary, ...global, "run", ...extra, ...hardeningFlags(spec), spec.image, ...spec.command];
}

/** gVisor: the sandbox has no network, so runsc needs no network stack at all. */
export function isGvisor(ociRuntime: string | undefined): boolean {
  return ociRuntime !== undefined && /(^|\/)runsc[^/]*$/.test(ociRuntime);
}

/** Parse `--format '{{json .Labels}}'`-style label output of docker (k=v,k=v) or podman (a map). */
export function parseLabels(raw: unknown): Record<string, string> {
  if (raw && typeof raw === "object") {
    return Object.fromEntries(Object.entries(raw as Record<string, unknown>).map(([k, v]) => [k, String(v)]));
  }
  if (typeof raw !== "string" || raw === "") return {};
  const out: Record<string, string> = {};
  for (const part of raw.split(",")) {
    const eq = part.indexOf("=");
    if (eq > 0) out[part.slice(0, eq)] = part.slice(eq + 1);
  }
  return out;
}
