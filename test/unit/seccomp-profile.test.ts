/**
 * The seccomp profile file the engines read: named after its content, and written again before a start
 * whenever the file on disk is no longer the embedded profile (deleted, truncated, edited).
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import PROFILE from "../../adapters/seccomp.json" with { type: "json" };
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
});
