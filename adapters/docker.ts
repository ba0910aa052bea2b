/** Docker Engine (or Docker Desktop, OrbStack, Colima, Rancher Desktop) through the docker CLI. */
import { dockerSocketCandidates, dockerUserChoice, existingSockets } from "../src/engines/locations.ts";
import { createCliAdapter, imageHint, unavailableOrFailed, type Run } from "./cli-engine.ts";
import { release } from "node:os";
import type { AdapterOptions, EngineInfo, RuntimeAdapter } from "./types.ts";

const NOT_ANSWERING = [
  /cannot connect to the docker daemon/i,
  /is the docker daemon running/i,
  /permission denied.*docker\.sock/i,
  /error during connect/i,
];
const NOT_ANSWERING_HINT = "start the Docker daemon (or Docker Desktop, OrbStack, Colima), or set MCP_BRIDGE_RUNTIME=podman";
const PERMISSION_HINT =
  "this user may not use the Docker daemon's socket: add it to the docker group (`sudo usermod -aG docker $USER`, then log in again; members can act as root on this machine), use rootless Docker, or set MCP_BRIDGE_RUNTIME=podman";

export default function docker(options: AdapterOptions): RuntimeAdapter {
  return createCliAdapter(
    {
      name: "docker",
      binary: "docker",
      installHint:
        "install Docker (Debian: apt-get install docker.io; macOS: Docker Desktop, OrbStack or Colima) or set MCP_BRIDGE_RUNTIME=podman",
      async probe(run) {
        let r = await version(run);
        let connectFlags: string[] | undefined;
        const tried: string[] = [];
        if (r.exitCode !== 0 && NOT_ANSWERING.some((p) => p.test(r.stderr)) && !dockerUserChoice(options.env)) {
          // The CLI's default socket is not there and the user chose no other: desktop engines keep
          // theirs in their own folders (the CLI would find it through a context they did not set).
          for (const socket of existingSockets(dockerSocketCandidates(options.env))) {
            tried.push(socket);
            const flags = ["--host", `unix://${socket}`];
            const again = await version(run, flags);
            if (again.exitCode === 0) {
              r = again;
              connectFlags = flags;
              break;
            }
          }
        }
        if (r.exitCode !== 0) {
          const looked = tried.length ? ` (also tried ${tried.join(", ")})` : "";
          // The daemon runs, but this user may not use its socket: starting it is not the fix.
          const hint = /permission denied/i.test(r.stderr) ? PERMISSION_HINT : NOT_ANSWERING_HINT;
          throw unavailableOrFailed("docker", { ...r, stderr: `${r.stderr.trim()}${looked}` }, NOT_ANSWERING, hint);
        }
        const v = JSON.parse(r.stdout) as {
          Server?: { Version?: string; ApiVersion?: string; Os?: string; KernelVersion?: string; Platform?: { Name?: string } } | null;
          Client?: { Version?: string; Context?: string };
        };
        return {
          version: v.Server?.Version ?? "unknown",
          details: {
            api: v.Server?.ApiVersion ?? "unknown",
            client: v.Client?.Version ?? "unknown",
            endpoint: connectFlags ? connectFlags[1]! : (dockerUserChoice(options.env) ?? "the CLI's default"),
            context: v.Client?.Context ?? "default",
            platform: v.Server?.Platform?.Name || "Docker Engine",
            serverOs: v.Server?.Os ?? "unknown",
            kernel: v.Server?.KernelVersion ?? "unknown",
          },
          connectFlags,
        };
      },
      sharesHostSockets: (info) => dockerOnThisHost(info, options.env),
      imageExistsArgs: (image) => ["image", "inspect", "--format", "{{.Id}}", image],
      removeArgs: (name) => ["rm", "--force", name],
      listArgs: (label) => ["ps", "--all", "--no-trunc", "--filter", `label=${label}`, "--format", "{{json .}}"],
      imageHint,
    },
    options,
  );
}

/**
 * The daemon runs on this machine's own kernel and filesystem, so a socket in our temp folder can be
 * mounted into its containers: a local unix endpoint (no remote host, no other context), the same
 * kernel as ours (Docker Desktop, Colima, OrbStack and Lima run theirs in a VM), and not the snap,
 * whose confined daemon has a /tmp of its own.
 */
export function dockerOnThisHost(info: EngineInfo, env: Record<string, string>): boolean {
  const d = info.details;
  if (process.platform !== "linux" || d.serverOs !== "linux" || d.kernel !== release()) return false;
  if (/desktop/i.test(d.platform ?? "") || info.binary.startsWith("/snap/")) return false;
  // The endpoint as the probe found it: the CLI's own default, a socket we found, or the user's choice.
  const endpoint = (d.endpoint ?? "").replace(/^DOCKER_HOST=/, "");
  if (endpoint.startsWith("unix://")) return true;
  return endpoint === "the CLI's default" && !env.DOCKER_HOST && (d.context ?? "default") === "default";
}

function version(run: Run, flags: string[] = []) {
  return run([...flags, "version", "--format", "{{json .}}"]);
}
