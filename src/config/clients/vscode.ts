/**
 * VS Code: the workspace's `.vscode/mcp.json` (project scope) and the user profile's `mcp.json` (user
 * scope), both `servers` maps with `inputs`. Workspace first. `${env:X}`, `${workspaceFolder}`,
 * `${workspaceFolderBasename}`, `${userHome}` expand; `${input:id}` is a prompt only VS Code can
 * answer, so it must be supplied (MCP_BRIDGE_INPUT_ID or our config's "inputs"). env values may be
 * numbers; `envFile` is read; `oauth.clientId` names a client registered ahead of time. VS Code keeps enable/disable state and workspace trust outside the file.
 * The user file is the profile's: a folder VS Code opens in a profile of its own (`profileAssociations`
 * in `globalStorage/storage.json`) has its servers in that profile's `profiles/<id>/mcp.json`.
 */
import * as path from "node:path";
import { normalizeDir } from "../server-sources.ts";
import { mapEntries, type EntryOptions } from "./entry.ts";
import type { Candidate, ClientReader, ReadContext } from "./types.ts";

const OPTS: EntryOptions = { urlType: "http", envNumbers: true, envFile: true, oauth: "vscode" };

export function vscodeUserDir(ctx: Pick<ReadContext, "appConfigDir">): string {
  return path.join(ctx.appConfigDir(), "Code", "User");
}

export const vscode: ClientReader = {
  id: "vscode",
  read(ctx) {
    const out: Candidate[] = [];
    for (const [file, scope] of [
      [path.join(ctx.cwd, ".vscode", "mcp.json"), "project"],
      [path.join(profileDir(ctx), "mcp.json"), "user"],
    ] as const) {
      const data = ctx.read(file, "json", scope);
      if (data) out.push(...mapEntries(ctx, file, data.servers, ["servers"], { scope, syntax: "vscode" }, OPTS));
    }
    return out;
  },
};

/**
 * The user-data folder of the profile VS Code opens this folder in: `User/profiles/<id>` when
 * `profileAssociations.workspaces` in `User/globalStorage/storage.json` names one for the folder's URI
 * (as VS Code's UserDataProfilesService stores them), else `User` (the default profile).
 */
function profileDir(ctx: ReadContext): string {
  const user = vscodeUserDir(ctx);
  const storage = ctx.peek(path.join(user, "globalStorage", "storage.json"));
  const workspaces = (storage?.profileAssociations as { workspaces?: unknown } | undefined)?.workspaces;
  if (!workspaces || typeof workspaces !== "object") return user;
  const here = normalizeDir(ctx.cwd, ctx.platform);
  for (const [uri, id] of Object.entries(workspaces as Record<string, unknown>)) {
    if (typeof id !== "string" || id === "__default__profile__" || !/^[\w.-]+$/.test(id)) continue;
    const folder = fileUriPath(uri, ctx.platform);
    if (folder !== undefined && normalizeDir(folder, ctx.platform) === here) return path.join(user, "profiles", id);
  }
  return user;
}

/** The local path of a `file://` URI (VS Code writes folder URIs percent-encoded), or undefined. */
function fileUriPath(uri: string, platform: NodeJS.Platform): string | undefined {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return undefined;
  }
  if (u.protocol !== "file:") return undefined;
  const p = decodeURIComponent(u.pathname);
  return platform === "win32" ? p.replace(/^\/([A-Za-z]:)/, "$1").replace(/\//g, "\\") : p;
}
