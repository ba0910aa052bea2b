/** Podman (rootful or rootless) on the local machine. */
import { createCliAdapter, imageHint, unavailableOrFailed, type CliEngineProfile } from "./cli-engine.ts";
import { isGvisor } from "./oci-flags.ts";
import type { AdapterOptions, RuntimeAdapter } from "./types.ts";

export default function podman(options: AdapterOptions): RuntimeAdapter {
  return createCliAdapter(PODMAN_PROFILE, options);
}

/** How podman is spoken to; podman-machine.ts reuses it behind `--connection`. */
export const PODMAN_PROFILE: CliEngineProfile = {
  name: "podman",
  binary: "podman",
  installHint: "install podman (Debian: apt-get install podman runc) or set MCP_BRIDGE_RUNTIME=docker",
  async probe(run) {
    const r = await run(["info", "--format", "json"]);
    if (r.exitCode !== 0) {
      throw unavailableOrFailed(
        "podman",
        r,
        [/cannot connect/i, /connection refused/i, /no such file or directory.*sock/i],
        "start podman's service or machine (macOS: `podman machine start`), or set MCP_BRIDGE_RUNTIME=docker",
      );
    }
    const info = JSON.parse(r.stdout) as {
      version?: { Version?: string };
      host?: { cgroupVersion?: string; cgroupManager?: string; ociRuntime?: { name?: string }; security?: { rootless?: boolean } };
    };
    return {
      version: info.version?.Version ?? "unknown",
      details: {
        cgroupVersion: info.host?.cgroupVersion ?? "unknown",
        cgroupManager: info.host?.cgroupManager ?? "unknown",
        ociRuntime: info.host?.ociRuntime?.name ?? "unknown",
        rootless: String(info.host?.security?.rootless ?? "unknown"),
      },
    };
  },
  // runsc's own network setup fails on some hosts ("cannot run with network enabled in root
  // network namespace"); with --network none there is nothing for it to set up anyway.
  // oci-seccomp: apply the bridge's seccomp profile inside gVisor too.
  globalFlags: (spec) => (isGvisor(spec.ociRuntime) ? ["--runtime-flag", "network=none", "--runtime-flag", "oci-seccomp"] : []),
  // A local podman hands fds to the container through conmon and the OCI runtime (--preserve-fds), so
  // frames skip the CLI's and conmon's stdio relay. Not for a remote service (CONTAINER_HOST, a
  // connection), and not under gVisor, whose runsc does not pass them (session/sandbox-start.ts).
  passesFds: (env) => !env.CONTAINER_HOST && !env.CONTAINER_CONNECTION,
  runFlags: (flags, spec) => (spec.channelFd === undefined ? flags : [...flags, "--preserve-fds", String(spec.channelFd - 2)]),
  imageExistsArgs: (image) => ["image", "exists", image],
  removeArgs: (name) => ["rm", "--force", "--time", "0", "--ignore", name],
  listArgs: (label) => ["ps", "--all", "--filter", `label=${label}`, "--format", "json"],
  imageHint,
};
