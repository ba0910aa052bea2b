/** Path helpers shared by the client readers: `~`, environment variables, Claude's folders. */
import * as fs from "node:fs";
import * as path from "node:path";

export interface SourceContext {
  env: Record<string, string | undefined>;
  home: string;
  cwd: string;
  platform: NodeJS.Platform;
}

/** Expand a leading `~` (alone, `~/...`, or `~\...` on Windows) to `home`. */
export function expandHome(p: string, home: string): string {
  if (p === "~") return home;
  if (p.startsWith("~/") || p.startsWith("~\\")) return path.join(home, p.slice(2));
  return p;
}

/** Read an env var; case-insensitive on Windows like the OS itself. */
export function envValue(env: Record<string, string | undefined>, name: string, platform: NodeJS.Platform): string | undefined {
  const direct = env[name];
  if (direct !== undefined || platform !== "win32") return direct;
  const upper = name.toUpperCase();
  for (const [k, v] of Object.entries(env)) if (k.toUpperCase() === upper && v !== undefined) return v;
  return undefined;
}

export function claudeDesktopConfigPath(ctx: SourceContext): string {
  const { home, platform } = ctx;
  if (platform === "darwin") return path.join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json");
  if (platform === "win32") {
    const appData = envValue(ctx.env, "APPDATA", platform) || path.join(home, "AppData", "Roaming");
    return path.join(appData, "Claude", "claude_desktop_config.json");
  }
  const xdg = envValue(ctx.env, "XDG_CONFIG_HOME", platform);
  return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(home, ".config"), "Claude", "claude_desktop_config.json");
}

/**
 * A folder path as clients' records are compared with it: `/` separators, no trailing ones, and case
 * folded where the platform's file system ignores it (macOS, Windows).
 */
export function normalizeDir(p: string, platform: NodeJS.Platform): string {
  let s = p.replace(/\\/g, "/");
  if (s.length > 1) s = s.replace(/\/+$/, "");
  return platform === "win32" || platform === "darwin" ? s.toLowerCase() : s;
}

/** `dir` relative to `folder` when it is that folder or inside it ("" for the folder itself), else undefined. */
export function insideFolder(folder: string, dir: string): string | undefined {
  const rel = path.relative(path.resolve(folder), path.resolve(dir));
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel)) ? rel : undefined;
}

/**
 * `parents` (a folder, then each parent) up to the first that holds `.git`, and that repository root;
 * without one, every folder given and no root.
 */
export function upToRepoRoot(parents: string[], exists: (p: string) => boolean): { dirs: string[]; root?: string } {
  const dirs: string[] = [];
  for (const d of parents) {
    dirs.push(d);
    if (exists(path.join(d, ".git"))) return { dirs, root: d };
  }
  return { dirs };
}

/** Key of `projects` in ~/.claude.json that denotes `cwd` (exact, then normalised). */
export function findProjectKey(keys: string[], cwd: string, platform: NodeJS.Platform): string | undefined {
  let real = cwd;
  try {
    real = fs.realpathSync(cwd);
  } catch {
    // keep cwd
  }
  const norm = (p: string) => normalizeDir(p, platform);
  const wanted = new Set([norm(cwd), norm(real)]);
  return keys.find((k) => k === cwd) ?? keys.find((k) => k === real) ?? keys.find((k) => wanted.has(norm(k)));
}
