/** Finding an upstream server's command outside the PATH the client gave (src/upstream/command-path.ts). */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveServerCommand, toolSearchDirs } from "../../src/upstream/command-path.ts";

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "command-path-"));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const tool = (dir: string, name: string, mode = 0o755) => {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, name), "#!/bin/sh\n");
  chmodSync(join(dir, name), mode);
  return join(dir, name);
};

test("a command on PATH, or given as a path, is left as written", () => {
  const onPath = tool(join(home, "p"), "srv");
  expect(resolveServerCommand("srv", { HOME: home, PATH: join(home, "p") }, "linux")).toEqual({ command: "srv" });
  expect(resolveServerCommand("./srv", { HOME: home, PATH: "/nowhere" }, "linux")).toEqual({ command: "./srv" });
  expect(resolveServerCommand(onPath, { HOME: home, PATH: "/nowhere" }, "linux")).toEqual({ command: onPath });
});

test("one missing from PATH: the first tool folder that has it, as an executable; the server's PATH gets the folders", () => {
  tool(join(home, ".volta", "bin"), "uvx", 0o644); // not executable: skipped
  const cargo = tool(join(home, ".cargo", "bin"), "uvx");
  const r = resolveServerCommand("uvx", { HOME: home, PATH: "/nowhere" }, "linux");
  expect(r.command).toBe(cargo);
  expect(r.foundIn).toBe(join(home, ".cargo", "bin"));
  expect(r.path!.split(":")[0]).toBe("/nowhere");
  expect(r.path!.split(":")).toContain(join(home, ".cargo", "bin"));
  expect(r.path!.split(":")).toContain(join(home, ".volta", "bin"));
});

test("nvm: the newest installed version, by number", () => {
  for (const v of ["v9.0.0", "v22.2.0", "v22.11.1", "v100.0.0-rc", "v18.20.4"])
    mkdirSync(join(home, ".nvm", "versions", "node", v, "bin"), { recursive: true });
  const dirs = toolSearchDirs({ HOME: home }, "linux").filter((d) => d.includes(".nvm"));
  expect(dirs).toEqual([join(home, ".nvm", "versions", "node", "v22.11.1", "bin")]);
});

test("nowhere to be found: unchanged (the start fails naming it)", () => {
  expect(resolveServerCommand("no-such-tool-xyz", { HOME: home, PATH: "/nowhere" }, "linux")).toEqual({ command: "no-such-tool-xyz" });
});
