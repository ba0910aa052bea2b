/**
 * Where the Kubernetes engine finds its API server and how it proves who it is: the usual kubeconfig
 * (KUBECONFIG's first file, else ~/.kube/config; its current context), or, inside a pod, the service
 * account's token and CA. Client certificates and bearer tokens are supported; exec plugins and
 * auth providers are not (they run programs: say so rather than guess).
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { parse as parseYaml } from "yaml";
import type { TlsSettings } from "../../src/host/tls-client.ts";

export const IN_CLUSTER_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

export interface KubeCredentials {
  /** https://host:port, no trailing slash. */
  server: string;
  tls: TlsSettings;
  /** A bearer token, read again when it comes from a file (projected tokens rotate). */
  token?: () => string | undefined;
  /** The namespace of the context (or the service account), when it names one. */
  namespace?: string;
  /** Where these came from, for messages: a kubeconfig path or "in-cluster". */
  source: string;
}

/** Why credentials could not be found: the engine is "not here". */
export class NoCredentials extends Error {}

interface KubeconfigFile {
  "current-context"?: string;
  contexts?: Array<{ name: string; context: { cluster: string; user: string; namespace?: string } }>;
  clusters?: Array<{
    name: string;
    cluster: {
      server: string;
      "certificate-authority"?: string;
      "certificate-authority-data"?: string;
      "insecure-skip-tls-verify"?: boolean;
    };
  }>;
  users?: Array<{
    name: string;
    user: {
      "client-certificate"?: string;
      "client-certificate-data"?: string;
      "client-key"?: string;
      "client-key-data"?: string;
      token?: string;
      tokenFile?: string;
      exec?: unknown;
      "auth-provider"?: unknown;
    };
  }>;
}

/** Credentials from `env` (KUBECONFIG, HOME, KUBERNETES_SERVICE_HOST/PORT). */
export function loadCredentials(env: Record<string, string | undefined>): KubeCredentials {
  const explicit = env.KUBECONFIG?.split(":").find((p) => p.length > 0);
  const home = env.HOME ?? homedir();
  const file = explicit ?? join(home, ".kube", "config");
  if (existsSync(file)) return fromKubeconfig(file);
  if (explicit) throw new NoCredentials(`KUBECONFIG=${explicit} does not exist`);
  if (env.KUBERNETES_SERVICE_HOST && existsSync(join(IN_CLUSTER_DIR, "token"))) return inCluster(env);
  throw new NoCredentials(`no kubeconfig (KUBECONFIG unset, ${file} absent) and not inside a pod with a service account`);
}

function fromKubeconfig(file: string): KubeCredentials {
  let doc: KubeconfigFile;
  try {
    doc = parseYaml(readFileSync(file, "utf8")) as KubeconfigFile;
  } catch (err) {
    throw new Error(`${file}: not a readable kubeconfig (${(err as Error).message})`);
  }
  const ctxName = doc["current-context"];
  const ctx = doc.contexts?.find((c) => c.name === ctxName)?.context;
  if (!ctx) throw new Error(`${file}: its current-context ${JSON.stringify(ctxName ?? "")} is not among its contexts`);
  const cluster = doc.clusters?.find((c) => c.name === ctx.cluster)?.cluster;
  const user = doc.users?.find((u) => u.name === ctx.user)?.user ?? {};
  if (!cluster?.server) throw new Error(`${file}: context ${ctxName} names cluster ${ctx.cluster}, which has no server`);
  if (user.exec || user["auth-provider"])
    throw new Error(
      `${file}: user ${ctx.user} signs in through an exec plugin or auth provider, which this engine does not run; use a kubeconfig with a client certificate or a token (e.g. a service account's)`,
    );
  const base = dirname(resolve(file));
  const read = (path?: string, data?: string) =>
    data ? Buffer.from(data, "base64").toString("utf8") : path ? readFileSync(resolve(base, path), "utf8") : undefined;
  const tokenFile = user.tokenFile ? resolve(base, user.tokenFile) : undefined;
  return {
    server: cluster.server.replace(/\/+$/, ""),
    tls: {
      ca: read(cluster["certificate-authority"], cluster["certificate-authority-data"]),
      cert: read(user["client-certificate"], user["client-certificate-data"]),
      key: read(user["client-key"], user["client-key-data"]),
      insecure: cluster["insecure-skip-tls-verify"] === true,
    },
    token: user.token ? () => user.token : tokenFile ? fileToken(tokenFile) : undefined,
    namespace: ctx.namespace,
    source: file,
  };
}

function inCluster(env: Record<string, string | undefined>): KubeCredentials {
  const host = env.KUBERNETES_SERVICE_HOST!;
  const port = env.KUBERNETES_SERVICE_PORT ?? "443";
  const namespaceFile = join(IN_CLUSTER_DIR, "namespace");
  return {
    server: `https://${host.includes(":") ? `[${host}]` : host}:${port}`,
    tls: { ca: readFileSync(join(IN_CLUSTER_DIR, "ca.crt"), "utf8") },
    token: fileToken(join(IN_CLUSTER_DIR, "token")),
    namespace: existsSync(namespaceFile) ? readFileSync(namespaceFile, "utf8").trim() : undefined,
    source: "in-cluster",
  };
}

/** A token file read again at most once a minute: the kubelet rotates projected tokens. */
function fileToken(path: string): () => string | undefined {
  let value: string | undefined;
  let readAt = 0;
  return () => {
    const now = Date.now();
    if (value === undefined || now - readAt > 60_000) {
      value = readFileSync(path, "utf8").trim();
      readAt = now;
    }
    return value;
  };
}
