/**
 * What one sandbox container is made of: its name, labels, limits, environment and command. Built from
 * the configuration alone; engines turn it into their own flags (adapters/).
 */
import { hostname } from "node:os";
import type { ContainerSpec } from "../../adapters/types.ts";
import type { Config } from "../config/env.ts";
import { containerCommand } from "../sandbox/bootstrap.ts";
import { CONTAINER_PACKAGES } from "../packages/store.ts";
import { sha256Hex } from "../host/hash.ts";

/** Label every container of ours carries; the owner label says which bridge process started it. */
export const OWNER_LABEL = "io.mcp-code-exec.owner";
export const MARK_LABEL = "io.mcp-code-exec";
/**
 * The session a sandbox belongs to (its handle) and a digest of its principal: an engine whose sandboxes
 * outlive their bridge (kubernetes) lets another bridge find and adopt a session's sandbox by these.
 */
export const SESSION_LABEL = "io.mcp-code-exec.session";
export const PRINCIPAL_LABEL = "io.mcp-code-exec.principal";

/** Which session a sandbox is for: its handle and principal (the principal is labelled by digest only). */
export interface SandboxIdentity {
  handle: string;
  principal: string;
}

/** The labels that name `identity` on its sandbox. */
export function identityLabels(identity: SandboxIdentity): Record<string, string> {
  return { [SESSION_LABEL]: identity.handle, [PRINCIPAL_LABEL]: sha256Hex(identity.principal).slice(0, 32) };
}

/** The sandbox's whole environment: fixed values, nothing from the bridge's own environment. */
export const SANDBOX_ENV: Record<string, string> = {
  HOME: "/tmp",
  TMPDIR: "/tmp",
  LANG: "C.UTF-8",
  PYTHONDONTWRITEBYTECODE: "1",
  PYTHONUNBUFFERED: "1",
  MPLBACKEND: "Agg",
  MPLCONFIGDIR: "/tmp/.matplotlib",
};

/** `<host>:<pid>` of this bridge: the startup sweep removes containers whose owner is gone. */
export function ownerId(): string {
  return `${hostname()}:${process.pid}`;
}

let containerCounter = 0;

/**
 * A new container's spec; `seccompProfile` is the profile file on the engine's host, when there is one;
 * `channel` what the protocol runs over instead of stdin/stdout: an fd the engine passes
 * (ContainerSpec.channelFd), or a socket in a host folder mounted read-only (ContainerSpec.channelSocket).
 */
export function containerSpec(
  config: Config,
  seccompProfile?: string,
  channel?: { fd: number } | { hostDir: string; mountAt: string; socket: string },
  packagesDir?: string,
  identity?: SandboxIdentity,
): ContainerSpec {
  const channelFd = channel && "fd" in channel ? channel.fd : undefined;
  const socket = channel && "socket" in channel ? channel : undefined;
  const mounts = [
    ...(config.workspace ? [{ source: config.workspace, target: "/workspace", readonly: config.workspaceMode !== "rw" }] : []),
    ...(socket ? [{ source: socket.hostDir, target: socket.mountAt, readonly: true }] : []),
    // The package store (src/packages/store.ts): read-only, so code cannot change what another session imports.
    ...(packagesDir ? [{ source: packagesDir, target: CONTAINER_PACKAGES, readonly: true }] : []),
  ];
  const rand = Math.random().toString(36).slice(2, 8);
  return {
    name: `mcp-code-exec-${process.pid}-${++containerCounter}-${rand}`,
    image: config.image,
    labels: { [MARK_LABEL]: "1", [OWNER_LABEL]: ownerId(), ...(identity ? identityLabels(identity) : {}) },
    user: config.user,
    memory: config.memory,
    pids: config.pids,
    cpus: config.cpus,
    tmpfsSize: config.tmpfsSize,
    shmSize: config.shmSize,
    ulimits: { nofile: 1024, nproc: 1024 },
    env: SANDBOX_ENV,
    mounts: mounts.length ? mounts : undefined,
    ociRuntime: config.ociRuntime,
    seccompProfile,
    channelFd,
    channelSocket: socket?.socket,
    command: containerCommand(config.lifetimeSec, channelFd ?? socket?.socket),
  };
}
