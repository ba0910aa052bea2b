/**
 * Engine registry and lazy selection (like hono's SmartRouter): nothing is probed until the first
 * sandbox is needed; then engines are tried in order, "not here" moves on, any other error propagates,
 * and the winner is remembered. Literal import thunks keep every adapter inside the compiled binary.
 */
import { BridgeError, EngineUnavailableError } from "../errors.ts";
import type { AdapterFactory, AdapterOptions, EngineInfo, RuntimeAdapter } from "../../adapters/types.ts";
import { enginePath, sessionRuntimeDir } from "./locations.ts";
import { isAdapterPath, loadExternalAdapter } from "./external-adapter.ts";

/** Built-in engines by name, each a literal import so the compiled binary carries it. */
export const ADAPTERS: Record<string, () => Promise<{ default: AdapterFactory }>> = {
  podman: () => import("../../adapters/podman.ts"),
  docker: () => import("../../adapters/docker.ts"),
  nerdctl: () => import("../../adapters/nerdctl.ts"),
  "podman-machine": () => import("../../adapters/podman-machine.ts"),
  // Never auto-selected: a cluster is chosen on purpose (MCP_BRIDGE_RUNTIME=kubernetes).
  kubernetes: () => import("../../adapters/kubernetes.ts"),
};

/** Auto-selection order: native engines first, a VM that may need starting last. */
export const AUTO_ORDER = ["podman", "docker", "nerdctl", "podman-machine"];

export interface Selected {
  adapter: RuntimeAdapter;
  info: EngineInfo;
}

export interface SelectionAttempt {
  engine: string;
  ok: boolean;
  reason?: string;
}

/** A built-in engine by name, or an external adapter by absolute file path (MCP_BRIDGE_ADAPTER). */
export async function loadAdapter(name: string, options: AdapterOptions): Promise<RuntimeAdapter> {
  if (isAdapterPath(name)) return loadExternalAdapter(name, options);
  const thunk = ADAPTERS[name];
  if (!thunk) {
    throw new BridgeError("CONFIG", `unknown container engine "${name}"`, {
      hint: `set MCP_BRIDGE_RUNTIME to one of: ${Object.keys(ADAPTERS).join(", ")}`,
    });
  }
  const mod = await thunk();
  return mod.default(options);
}

/**
 * Try engines in order; returns the first that answers, with the reasons the others were skipped.
 * `preferred` (MCP_BRIDGE_ADAPTER's path, else MCP_BRIDGE_RUNTIME) is the only engine tried when set.
 */
export async function selectEngine(
  preferred: string | undefined,
  options: AdapterOptions,
  attempts: SelectionAttempt[] = [],
): Promise<Selected> {
  const order = preferred ? [preferred] : AUTO_ORDER;
  for (const name of order) {
    const adapter = await loadAdapter(name, options);
    try {
      const info = await adapter.probe();
      attempts.push({ engine: adapter.name, ok: true });
      return { adapter, info };
    } catch (err) {
      if (!(err instanceof EngineUnavailableError)) throw err;
      attempts.push({ engine: adapter.name, ok: false, reason: err.render() });
      if (preferred) throw err;
    }
  }
  throw new BridgeError("ENGINE_UNAVAILABLE", "no container engine found", {
    hint: `tried ${attempts.map((a) => `${a.engine} (${a.reason ?? "?"})`).join("; ")}. Install podman (Debian/Ubuntu: apt-get install podman runc; macOS: brew install podman, then podman machine init --now) or Docker; \`mcp-code-exec doctor\` shows every place it looked`,
  });
}

/** The bridge's engine: selected at first use, then remembered. */
export interface EngineSelector {
  (): Promise<Selected>;
  /**
   * When the engine in use was known from the probe cache rather than asked, forget that answer (and
   * the selection) so the next call probes afresh; true if so. A sandbox that fails to start on a
   * cached answer calls this and tries once more: a daemon that moved or stopped is still noticed.
   */
  refresh(): boolean;
}

/** Memoises the selection for the life of the bridge; a failed selection is retried next time. */
export function lazyEngine(preferred: string | undefined, options: AdapterOptions): EngineSelector {
  let pending: Promise<Selected> | undefined;
  let selected: Selected | undefined;
  const select = () => {
    pending ??= selectEngine(preferred, options).then((s) => (selected = s));
    pending.catch(() => {
      pending = undefined;
    });
    return pending;
  };
  return Object.assign(select, {
    refresh(): boolean {
      if (!selected?.info.cached) return false;
      selected.adapter.forgetProbe?.();
      selected = undefined;
      pending = undefined;
      return true;
    },
  });
}

/** The environment the engine CLI gets: what it needs to find its daemon and storage, nothing else. */
export function engineEnv(env: Record<string, string | undefined>): Record<string, string> {
  const keep = [
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "TMPDIR",
    "XDG_RUNTIME_DIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "DOCKER_HOST",
    "DOCKER_CONTEXT",
    "DOCKER_CONFIG",
    "DOCKER_CERT_PATH",
    "DOCKER_TLS_VERIFY",
    "CONTAINER_HOST",
    "CONTAINER_CONNECTION",
    "CONTAINER_SSHKEY",
    "CONTAINERS_CONF",
    "CONTAINERS_STORAGE_CONF",
    "CONTAINERS_REGISTRIES_CONF",
    "REGISTRY_AUTH_FILE",
    "CONTAINERD_ADDRESS",
    "CONTAINERD_NAMESPACE",
    // kubernetes: where the cluster is and how the engine uses it (adapters/kubernetes.ts)
    "KUBECONFIG",
    "KUBERNETES_SERVICE_HOST",
    "KUBERNETES_SERVICE_PORT",
    "MCP_BRIDGE_KUBE_NAMESPACE",
    "MCP_BRIDGE_KUBE_WARM_POOL",
    "MCP_BRIDGE_KUBE_RUNTIME_CLASS",
    "MCP_BRIDGE_KUBE_SECCOMP",
    "MCP_BRIDGE_KUBE_LEASE",
    "SYSTEMROOT",
    "APPDATA",
    "LOCALAPPDATA",
    "USERPROFILE",
    "PROGRAMDATA",
  ];
  const out: Record<string, string> = {};
  for (const k of keep) {
    const v = env[k];
    if (v !== undefined) out[k] = v;
  }
  // Desktop launchers give a minimal PATH: engines are also looked for where their installers put them.
  out.PATH = enginePath(env);
  // Clients that start MCP servers with few variables leave XDG_RUNTIME_DIR out; rootless podman then
  // keeps its state elsewhere than the user's own podman does. The login session's folder, where it exists.
  if (!out.XDG_RUNTIME_DIR) {
    const dir = sessionRuntimeDir();
    if (dir) out.XDG_RUNTIME_DIR = dir;
  }
  return out;
}
