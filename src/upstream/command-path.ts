/**
 * Where an upstream server's command is when the bridge's PATH does not have it. The bridge reads every
 * client's servers, and the client that launched it may give a shorter PATH than the one they were
 * written for: Claude Desktop and other apps started from the Dock or a desktop launcher pass
 * `/usr/bin:/bin:/usr/sbin:/sbin`, so `npx` or `uvx` from a Claude Code or Cursor entry (written in a
 * terminal's PATH) fails with ENOENT. A bare command not on PATH is looked for, in order, in the folders
 * package managers and version managers install to; the server then gets those folders after its PATH
 * too, since `npx` itself must find `node`. What was approved (the command as written) does not change.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { engineSearchDirs, extendPath } from "../engines/locations.ts";
import { which } from "../host/process.ts";

/** Install folders of the tools MCP servers are launched with (node, npx, uvx, python, bun, deno, docker...). */
export function toolSearchDirs(env: Record<string, string | undefined>, platform: NodeJS.Platform = process.platform): string[] {
  const home = env.HOME ?? "";
  const at = (...p: string[]) => (home ? [join(home, ...p)] : []);
  return [
    ...engineSearchDirs(env, platform), // Homebrew, /usr/local/bin, ~/.local/bin (uv, pipx), Nix, ...
    ...at(".volta", "bin"),
    ...newestNvmBin(home),
    ...at(".local", "share", "fnm", "aliases", "default", "bin"),
    ...at(".fnm", "aliases", "default", "bin"),
    ...at(".asdf", "shims"),
    ...at(".local", "share", "mise", "shims"),
    ...at(".pyenv", "shims"),
    ...at(".cargo", "bin"),
    ...at(".bun", "bin"),
    ...at(".deno", "bin"),
    ...at("bin"),
  ];
}

/** nvm's newest installed node (`~/.nvm/versions/node/vX.Y.Z/bin`): nvm's default alias needs its shell code to resolve. */
function newestNvmBin(home: string): string[] {
  if (!home) return [];
  const root = join(home, ".nvm", "versions", "node");
  let versions: string[];
  try {
    versions = readdirSync(root).filter((v) => /^v\d+\.\d+\.\d+$/.test(v));
  } catch {
    return [];
  }
  const num = (v: string) => v.slice(1).split(".").map(Number) as [number, number, number];
  versions.sort((a, b) => {
    const [x, y] = [num(a), num(b)];
    return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
  });
  const newest = versions.at(-1);
  return newest ? [join(root, newest, "bin")] : [];
}

export interface ResolvedCommand {
  command: string;
  /** PATH for the server: its own, then the folders searched (undefined: unchanged). */
  path?: string;
  /** The folder a command missing from PATH was found in. */
  foundIn?: string;
}

/**
 * `command` as the server should be spawned with `env`: unchanged when it is a path or on env.PATH;
 * otherwise its absolute path in the first tool folder that has it (and a PATH with those folders).
 */
export function resolveServerCommand(
  command: string,
  env: Record<string, string | undefined>,
  platform: NodeJS.Platform = process.platform,
): ResolvedCommand {
  if (platform === "win32" || /[\\/]/.test(command) || which(command, env.PATH ?? "")) return { command };
  const dirs = toolSearchDirs(env, platform);
  for (const dir of dirs) {
    const candidate = join(dir, command);
    if (!isExecutableFile(candidate)) continue;
    return {
      command: candidate,
      path: extendPath(
        env.PATH,
        dirs.filter((d) => existsSync(d)),
      ),
      foundIn: dir,
    };
  }
  return { command };
}

function isExecutableFile(p: string): boolean {
  try {
    const st = statSync(p);
    return st.isFile() && (st.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}
