/**
 * Deleting a sandbox synchronously, from an exit handler where nothing asynchronous runs any more:
 * curl, with the credentials written to a private folder for the call. Best effort only: a sandbox this
 * misses is ended by its lease (leases.ts) within a minute.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCommandSync, which } from "../../src/host/process.ts";
import type { KubeCredentials } from "./credentials.ts";

export function removeSandboxSync(creds: KubeCredentials, paths: string[]): void {
  const curl = which("curl");
  if (!curl) return;
  const dir = mkdtempSync(join(tmpdir(), "mcp-code-exec-kube-"));
  try {
    const args = ["-sS", "-m", "3", "-o", "/dev/null", "-X", "DELETE", "-H", "Content-Type: application/json"];
    args.push(
      "--data",
      JSON.stringify({ kind: "DeleteOptions", apiVersion: "v1", gracePeriodSeconds: 0, propagationPolicy: "Background" }),
    );
    const file = (name: string, text: string | undefined) => {
      if (!text) return undefined;
      writeFileSync(join(dir, name), text, { mode: 0o600 });
      return join(dir, name);
    };
    const ca = file("ca.pem", creds.tls.ca);
    const cert = file("cert.pem", creds.tls.cert);
    const key = file("key.pem", creds.tls.key);
    if (ca) args.push("--cacert", ca);
    if (creds.tls.insecure) args.push("--insecure");
    if (cert && key) args.push("--cert", cert, "--key", key);
    const token = creds.token?.();
    const config = token ? file("headers", `header = "Authorization: Bearer ${token}"\n`) : undefined;
    if (config) args.push("--config", config);
    for (const path of paths) runCommandSync(curl, [...args, creds.server + path], { env: {}, timeoutMs: 4000 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
