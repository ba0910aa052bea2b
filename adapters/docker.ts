/** Docker Engine (or Docker Desktop, OrbStack, Colima, Rancher Desktop) through the docker CLI. */
import { dockerSocketCandidates, dockerUserChoice, existingSockets } from "../src/engines/locations.ts";
import { createCliAdapter, imageHint, unavailableOrFailed, type Run } from "./cli-engine.ts";
import type { AdapterOptions, RuntimeAdapter } from "./types.ts";

const NOT_ANSWERING = [
  /cannot connect to the docker daemon/i,
  /is the docker daemon running/i,
  /permission denied.*docker\.sock/i,
  /error during connect/i,
];
const NOT_ANSWERING_HINT = "start the Docker daemon (or Docker Desktop, OrbStack, Colima), or set MCP_BRIDGE_RUNTIME=podman";

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
          throw unavailableOrFailed("docker", { ...r, stderr: `${r.stderr.trim()}${looked}` }, NOT_ANSWERING, NOT_ANSWERING_HINT);
        }
        const v = JSON.parse(r.stdout) as { Server?: { Version?: string; ApiVersion?: string } | null; Client?: { Version?: string } };
        return {
          version: v.Server?.Version ?? "unknown",
          details: {
            api: v.Server?.ApiVersion ?? "unknown",
            client: v.Client?.Version ?? "unknown",
            endpoint: connectFlags ? connectFlags[1]! : (dockerUserChoice(options.env) ?? "the CLI's default"),
          },
          connectFlags,
        };
      },
      imageExistsArgs: (image) => ["image", "inspect", "--format", "{{.Id}}", image],
      removeArgs: (name) => ["rm", "--force", name],
      listArgs: (label) => ["ps", "--all", "--no-trunc", "--filter", `label=${label}`, "--format", "{{json .}}"],
      imageHint,
    },
    options,
  );
}

function version(run: Run, flags: string[] = []) {
  return run([...flags, "version", "--format", "{{json .}}"]);
}
