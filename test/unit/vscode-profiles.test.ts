/**
 * VS Code's user MCP servers come from the profile the folder opens in (src/config/clients/vscode.ts).
 * The files are written here the way VS Code's UserDataProfilesService keeps them (fake: VS Code itself
 * cannot run here): `profileAssociations.workspaces` in `User/globalStorage/storage.json` maps a folder's
 * file URI to a profile id, whose servers are in `User/profiles/<id>/mcp.json`.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { discoverServers, type Discovery } from "../../src/config/servers.ts";

let root: string;
let home: string;
let cwd: string;
let user: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "vscode-profiles-"));
  home = join(root, "home");
  cwd = join(root, "my work", "app ü"); // a space and a non-ASCII letter: percent-encoded in the URI
  user = join(home, ".config", "Code", "User");
  mkdirSync(cwd, { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const write = (file: string, value: unknown) => {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(value));
};
const discover = (): Discovery => discoverServers({ env: {}, home, cwd, platform: "linux", managedDir: join(root, "none") });
const names = (d: Discovery) => d.servers.map((s) => `${s.name} <- ${s.source}`);

test("a folder associated with a profile: that profile's mcp.json, not the default one", () => {
  write(join(user, "mcp.json"), { servers: { everyday: { command: "a" } } });
  write(join(user, "profiles", "-6a3fb3a1", "mcp.json"), { servers: { work: { command: "w" } } });
  write(join(user, "globalStorage", "storage.json"), {
    userDataProfiles: [{ location: "-6a3fb3a1", name: "Work" }],
    profileAssociations: { workspaces: { [pathToFileURL(cwd).href]: "-6a3fb3a1" }, emptyWindows: {} },
  });
  expect(names(discover())).toEqual([`work <- ${join(user, "profiles", "-6a3fb3a1", "mcp.json")}`]);
});

test("no association, the default profile's id, or an id that is not a folder name: the default mcp.json", () => {
  write(join(user, "mcp.json"), { servers: { everyday: { command: "a" } } });
  write(join(user, "profiles", "-1", "mcp.json"), { servers: { other: { command: "o" } } });
  const associate = (id: string, folder = cwd) =>
    write(join(user, "globalStorage", "storage.json"), { profileAssociations: { workspaces: { [pathToFileURL(folder).href]: id } } });
  const everyday = [`everyday <- ${join(user, "mcp.json")}`];
  associate("-1", join(root, "elsewhere"));
  expect(names(discover())).toEqual(everyday);
  associate("__default__profile__");
  expect(names(discover())).toEqual(everyday);
  associate("../../../etc");
  expect(names(discover())).toEqual(everyday);
});
