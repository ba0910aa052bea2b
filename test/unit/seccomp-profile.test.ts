/**
 * The seccomp profile file the engines read: named after its content, and written again before a start
 * whenever the file on disk is no longer the embedded profile (deleted, truncated, edited); where the
 * state dir cannot be written, to a folder of the process's own, and an error that says what to do where
 * neither can.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import PROFILE from "../../adapters/seccomp.json" with { type: "json" };
import { BridgeError } from "../../src/errors.ts";
import { seccompProfilePath } from "../../src/sandbox/seccomp.ts";

const dir = () => mkdtempSync(join(tmpdir(), "seccomp-"));

describe("seccompProfilePath", () => {
  test("writes the embedded profile under a name that changes with its content", () => {
    const d = dir();
    const path = seccompProfilePath(d);
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual(PROFILE);
    expect(basename(path)).toMatch(/^seccomp-[0-9a-f]{12}\.json$/);
    const gvisor = seccompProfilePath(d, { gvisor: true });
    expect(gvisor).not.toBe(path);
    expect(JSON.parse(readFileSync(gvisor, "utf8")).syscalls).not.toEqual(PROFILE.syscalls);
  });

  test("a deleted, truncated or edited file is written again; an intact one is left as it is", () => {
    const d = dir();
    const path = seccompProfilePath(d);
    const good = readFileSync(path, "utf8");
    const inode = statSync(path).ino;
    expect(seccompProfilePath(d)).toBe(path);
    expect(statSync(path).ino).toBe(inode);

    rmSync(path);
    expect(readFileSync(seccompProfilePath(d), "utf8")).toBe(good);

    writeFileSync(path, good.slice(0, 100));
    expect(readFileSync(seccompProfilePath(d), "utf8")).toBe(good);

    // Same size, one syscall allowed that the profile refuses: the kind of edit a size check misses.
    writeFileSync(path, good.replace('"SCMP_ACT_ERRNO"', '"SCMP_ACT_ALLOW"'));
    expect(readFileSync(path, "utf8")).not.toBe(good);
    expect(readFileSync(seccompProfilePath(d), "utf8")).toBe(good);
  });

  describe("a state dir that cannot be written (its parent is a file: as root, permissions would not stop a write)", () => {
    const tmp = process.env.TMPDIR;
    afterEach(() => {
      process.env.TMPDIR = tmp;
    });
    const unwritable = () => {
      const d = dir();
      writeFileSync(join(d, "file"), "");
      return join(d, "file", "state");
    };

    // Runs first: the fallback folder is made once per process, on the first fallback.
    test("and no temporary folder either: an error naming both places and what to do", () => {
      const state = unwritable();
      const file = join(dir(), "not-a-dir");
      writeFileSync(file, "");
      process.env.TMPDIR = file;
      let thrown: unknown;
      try {
        seccompProfilePath(state);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(BridgeError);
      expect((thrown as BridgeError).message).toBe(
        `cannot write the sandbox's seccomp profile: not to the state dir ${state} (ENOTDIR), nor to ${file} (ENOTDIR)`,
      );
      expect((thrown as BridgeError).hint).toContain("MCP_BRIDGE_STATE_DIR");
    });

    test("the profile goes to a fresh folder of the process's own, said once", () => {
      const told: { stateDir: string; error: string; path: string }[] = [];
      const state = unwritable();
      const path = seccompProfilePath(state, { onFallback: (why) => told.push(why) });
      expect(path.startsWith(join(tmpdir(), `mcp-code-exec-own-${process.pid}-`))).toBe(true);
      expect(JSON.parse(readFileSync(path, "utf8"))).toEqual(PROFILE);
      expect(statSync(join(path, "..")).mode & 0o777).toBe(0o700);
      expect(told).toEqual([{ stateDir: state, error: "ENOTDIR", path }]);
      // Again, and from another unwritable state dir: the same file, nothing said twice.
      expect(seccompProfilePath(unwritable(), { onFallback: (why) => told.push(why) })).toBe(path);
      expect(told.length).toBe(1);
      // Edited there, it is written again before use, as in the state dir.
      writeFileSync(path, "{}");
      expect(JSON.parse(readFileSync(seccompProfilePath(state), "utf8"))).toEqual(PROFILE);
    });
  });
});
