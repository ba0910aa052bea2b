/**
 * A worked example of an external engine adapter: the docker CLI, with one extra label on every
 * sandbox (`io.example.wrapped-by=docker-wrapper`) so its containers are easy to find.
 *
 *   MCP_BRIDGE_ADAPTER=/absolute/path/to/docker-wrapper.ts mcp-code-exec doctor
 *
 * It imports nothing from the bridge at run time (the `import type` below vanishes when the file is
 * loaded), so it works beside the compiled binary: the hardening flags and the error classes come
 * from `options.kit`. Copy it and change what your engine needs; docs/engines.md has the contract.
 */
import { execFile, execFileSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import type { AdapterFactory, ContainerSpec, ContainerSummary, EngineInfo, RuntimeAdapter } from "../../adapters/types.ts";

const EXTRA_LABELS = { "io.example.wrapped-by": "docker-wrapper" };

const dockerWrapper: AdapterFactory = (options) => {
  const kit = options.kit;
  if (!kit) throw new Error("docker-wrapper: load me through MCP_BRIDGE_ADAPTER (the bridge passes options.kit)");
  const wanted = options.binary ?? "docker";
  let probed: Promise<EngineInfo> | undefined;

  const binary = (): string => {
    const found = findOnPath(wanted, options.env.PATH ?? "");
    if (!found)
      throw new kit.EngineUnavailableError("docker-wrapper", `${wanted} not found on PATH`, "install Docker, or unset MCP_BRIDGE_ADAPTER");
    return found;
  };
  const docker = (args: string[], timeout = 20_000) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(binary(), args, { env: options.env, timeout, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      });
    });

  const adapter: RuntimeAdapter = {
    name: "docker-wrapper",
    probe() {
      probed ??= (async () => {
        const bin = binary();
        const r = await docker(["version", "--format", "{{json .}}"]);
        if (r.code !== 0) {
          if (/cannot connect|daemon running|error during connect/i.test(r.stderr)) {
            throw new kit.EngineUnavailableError(
              "docker-wrapper",
              `docker is installed but not answering: ${r.stderr.trim().split("\n")[0]}`,
              "start the Docker daemon",
            );
          }
          throw new kit.BridgeError("ENGINE_FAILED", `docker version failed (exit ${r.code}): ${r.stderr.trim()}`, {
            source: "docker-wrapper",
          });
        }
        const v = JSON.parse(r.stdout) as { Server?: { Version?: string } | null };
        return {
          engine: "docker-wrapper",
          binary: bin,
          version: v.Server?.Version ?? "unknown",
          details: { labels: Object.keys(EXTRA_LABELS).join(",") },
        };
      })();
      probed.catch(() => {
        probed = undefined;
      });
      return probed;
    },
    async runArgv(spec: ContainerSpec) {
      // The shared hardening flags, with our label added: never build the security flags yourself.
      return kit.runArgv(binary(), { ...spec, labels: { ...spec.labels, ...EXTRA_LABELS } });
    },
    async imageExists(image) {
      return (await docker(["image", "inspect", "--format", "{{.Id}}", image])).code === 0;
    },
    async remove(name) {
      await docker(["rm", "--force", name], 30_000);
    },
    removeSync(name) {
      try {
        execFileSync(binary(), ["rm", "--force", name], { env: options.env, timeout: 10_000, stdio: "ignore" });
      } catch {
        // best effort while the bridge exits
      }
    },
    async list(label) {
      const r = await docker(["ps", "--all", "--no-trunc", "--filter", `label=${label}`, "--format", "{{json .}}"]);
      if (r.code !== 0) throw new kit.BridgeError("ENGINE_FAILED", `docker ps failed: ${r.stderr.trim()}`, { source: "docker-wrapper" });
      return r.stdout
        .split("\n")
        .filter(Boolean)
        .map((line) => summary(JSON.parse(line) as Record<string, string>));
    },
    imageHint(image) {
      return `run \`docker pull ${image}\` (offline: \`docker load -i FILE\`)`;
    },
  };
  return adapter;
};

export default dockerWrapper;

/** docker ps prints labels as "k=v,k=v" and the state as "running", "exited", ... */
function summary(row: Record<string, string>): ContainerSummary {
  const labels: Record<string, string> = {};
  for (const part of (row.Labels ?? "").split(",")) {
    const eq = part.indexOf("=");
    if (eq > 0) labels[part.slice(0, eq)] = part.slice(eq + 1);
  }
  return { name: row.Names ?? "", labels, running: (row.State ?? "").toLowerCase() === "running" };
}

function findOnPath(command: string, path: string): string | undefined {
  const candidates = command.includes("/")
    ? [command]
    : path
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, command));
  return candidates.find((p) => {
    try {
      accessSync(p, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
