/**
 * Where container engines live when PATH does not say. Clients started from the Dock or a desktop
 * launcher (Claude Desktop, Cursor, VS Code) give MCP servers a minimal PATH (`/usr/bin:/bin:/usr/sbin:
 * /sbin` on macOS), so the engine CLIs their installers put elsewhere (Homebrew, Docker Desktop,
 * OrbStack, Rancher Desktop, Podman's installer, ~/.local/bin) must be looked for by name. The engine
 * CLI gets the user's PATH followed by these folders, so it finds its own helpers there too.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/** Install folders of engine CLIs, in the order they are tried after the user's PATH. */
export function engineSearchDirs(env: Record<string, string | undefined>, platform: NodeJS.Platform = process.platform): string[] {
  const home = env.HOME ?? "";
  const at = (...p: string[]) => (home ? [join(home, ...p)] : []);
  const common = ["/usr/local/bin", "/usr/bin", "/bin", "/usr/local/sbin", "/usr/sbin", "/sbin", ...at(".local", "bin")];
  if (platform === "darwin") {
    return [
      "/opt/homebrew/bin", // Homebrew on Apple silicon
      ...common, // Homebrew on Intel is /usr/local/bin
      "/opt/podman/bin", // Podman's macOS installer (and Podman Desktop)
      ...at(".docker", "bin"), // Docker Desktop, per-user CLI tools
      "/Applications/Docker.app/Contents/Resources/bin",
      ...at(".orbstack", "bin"),
      ...at(".rd", "bin"), // Rancher Desktop
      "/Applications/Rancher Desktop.app/Contents/Resources/resources/darwin/bin",
      "/opt/local/bin", // MacPorts
      ...at(".nix-profile", "bin"),
      "/run/current-system/sw/bin",
    ];
  }
  return [
    ...common,
    "/snap/bin",
    "/opt/podman/bin",
    ...at(".docker", "bin"),
    ...at(".rd", "bin"), // Rancher Desktop on Linux
    "/home/linuxbrew/.linuxbrew/bin",
    ...at(".nix-profile", "bin"),
    "/run/current-system/sw/bin",
    "/var/lib/flatpak/exports/bin",
  ];
}

/** The user's PATH, then every install folder not already on it. */
export function enginePath(env: Record<string, string | undefined>, platform: NodeJS.Platform = process.platform): string {
  return extendPath(env.PATH, engineSearchDirs(env, platform));
}

/** A PATH value, then each of `dirs` not already on it (no empty or repeated entries). */
export function extendPath(path: string | undefined, dirs: string[]): string {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const dir of [...(path ?? "").split(":"), ...dirs]) {
    if (!dir || seen.has(dir)) continue;
    seen.add(dir);
    out.push(dir);
  }
  return out.join(":");
}

/**
 * Docker sockets that desktop engines create outside the default /var/run/docker.sock, for when the
 * docker CLI cannot reach its default and the user named no host or context of their own.
 */
export function dockerSocketCandidates(env: Record<string, string | undefined>, uid = process.getuid?.()): string[] {
  const home = env.HOME ?? "";
  // Clients that start MCP servers with a short list of variables (the MCP SDK's default: HOME, LOGNAME,
  // PATH, SHELL, TERM, USER) leave XDG_RUNTIME_DIR out; on Linux it is /run/user/<uid>.
  const runtimeDir = env.XDG_RUNTIME_DIR || userRuntimeDir(uid);
  const config = env.XDG_CONFIG_HOME || (home && join(home, ".config"));
  const paths = [
    home && join(home, ".docker", "run", "docker.sock"), // Docker Desktop (macOS)
    home && join(home, ".docker", "desktop", "docker.sock"), // Docker Desktop (Linux)
    home && join(home, ".orbstack", "run", "docker.sock"),
    home && join(home, ".colima", "default", "docker.sock"),
    config && join(config, "colima", "default", "docker.sock"),
    home && join(home, ".rd", "docker.sock"), // Rancher Desktop (moby)
    home && join(home, ".lima", "docker", "sock", "docker.sock"),
    runtimeDir && join(runtimeDir, "docker.sock"), // rootless dockerd
  ];
  return paths.filter((p): p is string => Boolean(p));
}

/** /run/user/<uid>, a Linux login session's XDG_RUNTIME_DIR (none for root, which has no rootless engine). */
function userRuntimeDir(uid = process.getuid?.()): string | undefined {
  return process.platform === "linux" && uid !== undefined && uid > 0 ? `/run/user/${uid}` : undefined;
}

/** That folder where it exists and is this user's own (systemd-logind makes it at login), else undefined. */
export function sessionRuntimeDir(
  uid = process.getuid?.(),
  stat: (p: string) => { uid: number; isDirectory(): boolean } = statSync,
): string | undefined {
  const dir = userRuntimeDir(uid);
  if (!dir) return undefined;
  try {
    const st = stat(dir);
    return st.isDirectory() && st.uid === uid ? dir : undefined;
  } catch {
    return undefined;
  }
}

/** The docker context the user's own CLI would use: DOCKER_HOST, DOCKER_CONTEXT or config.json's currentContext. */
export function dockerUserChoice(env: Record<string, string | undefined>): string | undefined {
  if (env.DOCKER_HOST) return `DOCKER_HOST=${env.DOCKER_HOST}`;
  if (env.DOCKER_CONTEXT) return `DOCKER_CONTEXT=${env.DOCKER_CONTEXT}`;
  const dir = env.DOCKER_CONFIG || (env.HOME && join(env.HOME, ".docker"));
  if (!dir) return undefined;
  try {
    const current = (JSON.parse(readFileSync(join(dir, "config.json"), "utf8")) as { currentContext?: unknown }).currentContext;
    if (typeof current === "string" && current && current !== "default") return `context ${current} (${join(dir, "config.json")})`;
  } catch {
    // no config file, or not JSON: the CLI's default
  }
  return undefined;
}

/** Candidates that exist now. */
export function existingSockets(paths: string[]): string[] {
  return paths.filter((p) => existsSync(p));
}
