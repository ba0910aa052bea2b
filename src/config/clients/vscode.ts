/**
 * VS Code: the workspace's `.vscode/mcp.json` (project scope) and the user profile's `mcp.json` (user
 * scope), both `servers` maps with `inputs`. Workspace first. `${env:X}`, `${workspaceFolder}`,
 * `${workspaceFolderBasename}`, `${userHome}` expand; `${input:id}` is a prompt only VS Code can
 * answer, so it must be supplied (MCP_BRIDGE_INPUT_ID or our config's "inputs"). env values may be
 * numbers; `envFile` is read; `oauth.clientId` names a client registered ahead of time. VS Code keeps enable/disable state and workspace trust outside the file.
 */
import * as path from "node:path";
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
      [path.join(vscodeUserDir(ctx), "mcp.json"), "user"],
    ] as const) {
      const data = ctx.read(file, "json", scope);
      if (data) out.push(...mapEntries(ctx, file, data.servers, ["servers"], { scope, syntax: "vscode" }, OPTS));
    }
    return out;
  },
};
