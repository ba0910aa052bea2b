/**
 * A real OCI image registry on loopback for tests: Debian's docker-registry (the CNCF distribution
 * registry), its own storage, no auth, plain HTTP. Engines reach it as an insecure registry: docker
 * treats 127.0.0.0/8 so by default; podman has the ports of OCI_REGISTRY_PORTS marked insecure in
 * /etc/containers/registries.conf.d/ by scripts/setup.sh (a registry's port is part of its name there,
 * so the ports are fixed: the range the setup script configures).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitFor } from "./engines.ts";

/** The loopback ports scripts/setup.sh marks insecure for podman; one per suite that runs a registry. */
export const OCI_REGISTRY_PORTS = { pull: 47400, bench: 47402, unused: 47409 } as const;

export interface OciRegistry {
  /** host:port, the prefix of the registry's image names. */
  host: string;
  stop(): Promise<void>;
}

export async function startOciRegistry(port: number): Promise<OciRegistry> {
  const dir = mkdtempSync(join(tmpdir(), "mcp-code-exec-oci-registry-"));
  const host = `127.0.0.1:${port}`;
  writeFileSync(
    join(dir, "config.yml"),
    [
      "version: 0.1",
      "log: { level: warn }",
      "storage:",
      `  filesystem: { rootdirectory: ${join(dir, "storage")} }`,
      "  delete: { enabled: true }",
      `http: { addr: "${host}" }`,
      "",
    ].join("\n"),
  );
  const proc = Bun.spawn(["docker-registry", "serve", join(dir, "config.yml")], { stdout: "pipe", stderr: "pipe" });
  let output = "";
  const collect = async (s: ReadableStream<Uint8Array>) => {
    for await (const chunk of s) output += new TextDecoder().decode(chunk);
  };
  void collect(proc.stdout);
  void collect(proc.stderr);
  const up = await waitFor(async () => {
    if (proc.exitCode !== null) return true;
    const r = await fetch(`http://${host}/v2/`).catch(() => undefined);
    return r?.status === 200;
  }, 20_000);
  if (!up || proc.exitCode !== null) {
    proc.kill();
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`docker-registry did not answer on ${host} (exit ${proc.exitCode}): ${output.slice(-800)}`);
  }
  return {
    host,
    async stop() {
      proc.kill();
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
