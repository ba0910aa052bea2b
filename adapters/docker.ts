/** Docker Engine (or Docker Desktop) through the docker CLI. */
import { createCliAdapter, unavailableOrFailed } from "./cli-engine.ts";
import type { AdapterOptions, RuntimeAdapter } from "./types.ts";

export default function docker(options: AdapterOptions): RuntimeAdapter {
  return createCliAdapter(
    {
      name: "docker",
      binary: "docker",
      installHint: "install Docker (Debian: apt-get install docker.io) or set MCP_BRIDGE_RUNTIME=podman",
      async probe(run) {
        const r = await run(["version", "--format", "{{json .}}"]);
        if (r.exitCode !== 0) {
          throw unavailableOrFailed("docker", r, [/cannot connect to the docker daemon/i, /is the docker daemon running/i, /permission denied.*docker\.sock/i, /error during connect/i], "start the Docker daemon (or Docker Desktop), or set MCP_BRIDGE_RUNTIME=podman");
        }
        const v = JSON.parse(r.stdout) as { Server?: { Version?: string; ApiVersion?: string } | null; Client?: { Version?: string } };
        return {
          version: v.Server?.Version ?? "unknown",
          details: { api: v.Server?.ApiVersion ?? "unknown", client: v.Client?.Version ?? "unknown" },
        };
      },
      imageExistsArgs: (image) => ["image", "inspect", "--format", "{{.Id}}", image],
      removeArgs: (name) => ["rm", "--force", name],
      listArgs: (label) => ["ps", "--all", "--no-trunc", "--filter", `label=${label}`, "--format", "{{json .}}"],
      imageHint: (image, bin) =>
        image.includes("mcp-code-exec-sandbox")
          ? "build it offline with `scripts/build-image.sh` (or load a saved one with `docker load -i FILE`)"
          : `run \`${bin} pull ${image}\`, or use the offline image: \`scripts/build-image.sh\` then MCP_BRIDGE_IMAGE=mcp-code-exec-sandbox:bookworm`,
    },
    options,
  );
}
