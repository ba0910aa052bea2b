/**
 * The parts of installs that stand between hostile sandbox code and the host: requirement parsing,
 * unpacking hostile wheels (built here: `..`, absolute paths, symlinks, RECORD lies, size bombs), the
 * flags of the approval question, the platform uv resolves for, and the ModuleNotFoundError answer.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { installForm, riskFlags } from "../../src/packages/ask-install.ts";
import { moduleNotFoundHint } from "../../src/packages/hint.ts";
import { nearestName, parseRequirement, requirementString } from "../../src/packages/requirement.ts";
import { POPULAR } from "../../src/packages/popular.ts";
import { uvPlatform } from "../../src/packages/uv.ts";
import { unpackWheel } from "../../src/packages/wheel.ts";
import { makeWheel } from "../support/make-wheel.ts";

const LIMITS = { maxEntries: 1000, maxTotalBytes: 1 << 20 };

describe("requirements from the sandbox", () => {
  test("names, extras and specifiers are rebuilt from checked parts", () => {
    expect(requirementString(parseRequirement(" rich [jupyter] >= 13 , <14 "))).toBe("rich[jupyter]>=13,<14");
    expect(requirementString(parseRequirement("numpy==1.26.*"))).toBe("numpy==1.26.*");
    expect(parseRequirement("Scikit_Learn~=1.7").key).toBe("scikit-learn");
  });

  test("an import name becomes its distribution, from the table", () => {
    expect(parseRequirement("sklearn")).toMatchObject({ name: "scikit-learn", importName: "sklearn" });
    expect(parseRequirement("cv2>=4")).toMatchObject({ name: "opencv-python-headless", specifier: ">=4" });
    expect(parseRequirement("yaml").name).toBe("PyYAML");
    expect(parseRequirement("rich").importName).toBeUndefined();
  });

  test.each([
    "--index-url=http://evil/",
    "-e .",
    "rich @ https://evil/rich.whl",
    "file:///etc/passwd",
    "../../etc",
    "/abs/path.whl",
    "C:\\x.whl",
    "rich; python_version < '4'",
    "rich --extra-index-url http://evil",
    "rich>=1.0.*",
    "rich===",
    "",
    "a".repeat(201),
    "ri ch",
    "rich[--x]",
  ])("%p is refused", (bad) => {
    expect(() => parseRequirement(bad)).toThrow(/requirement|option|name|package/);
  });

  test("nearest real name, or none", () => {
    expect(nearestName("scikit-lern", POPULAR)).toBe("scikit-learn");
    expect(nearestName("reqeusts", POPULAR)).toBe("requests");
    expect(nearestName("zzqxv-nothing-like-it", POPULAR)).toBeUndefined();
  });
});

describe("unpacking wheels", () => {
  const dir = mkdtempSync(join(tmpdir(), "mcx-wheels-"));

  test("a good wheel lands whole in its folder", async () => {
    const w = makeWheel(dir, "good", "1.0", { "good/__init__.py": "X = 1\n" });
    const r = await unpackWheel(w, join(dir, "site-good"), LIMITS);
    expect(r.files).toBe(4);
    expect(readdirSync(join(dir, "site-good")).sort()).toEqual(["good", "good-1.0.dist-info"]);
  });

  test.each([
    ["an entry that climbs out", { name: "../escape.py", data: "x" }, /outside its folder/],
    ["an absolute entry", { name: "/tmp/abs.py", data: "x" }, /outside its folder/],
    ["a backslash entry", { name: "..\\escape.py", data: "x" }, /outside its folder/],
    ["a symlink", { name: "link", data: "/etc/passwd", mode: 0o120777 }, /symbolic links/],
    ["a file RECORD does not list", { name: "extra.py", data: "x" }, /not listed in its RECORD/],
  ])("%s is refused and nothing is written", async (_what, entry, why) => {
    const w = makeWheel(mkdtempSync(join(dir, "bad-")), "bad", "1.0", { "bad.py": "" }, { extra: [entry] });
    const dest = join(dir, `site-${Math.random()}`);
    await expect(unpackWheel(w, dest, LIMITS)).rejects.toThrow(why);
    expect(existsSync(dest)).toBe(false);
    expect(existsSync(join(dir, "escape.py"))).toBe(false);
  });

  test("a file that does not match its RECORD hash is refused", async () => {
    const w = makeWheel(mkdtempSync(join(dir, "lie-")), "lie", "1.0", { "lie.py": "X = 1\n" }, { recordLies: { "lie.py": "sha256=AAAA" } });
    await expect(unpackWheel(w, join(dir, "site-lie"), LIMITS)).rejects.toThrow(/does not match the hash its RECORD lists/);
  });

  test("a wheel that unpacks past the size cap is refused", async () => {
    const w = makeWheel(mkdtempSync(join(dir, "big-")), "big", "1.0", { "big.py": "#".repeat(2 << 20) });
    await expect(unpackWheel(w, join(dir, "site-big"), LIMITS)).rejects.toThrow(/more than 1 MiB/);
  });
});

describe("the approval question", () => {
  const now = new Date("2026-06-01T00:00:00Z");
  const wheel = (name: string, uploadTime?: string) => ({
    name,
    version: "1.0",
    url: "https://x/y.whl",
    sha256: "0".repeat(64),
    size: 2_000_000,
    uploadTime,
  });

  test("a name one edit from a popular one and a young release are flagged; an old popular one is not", () => {
    const flags = riskFlags({
      downloads: [wheel("reqeusts", "2026-05-30T00:00:00Z"), wheel("requests", "2020-01-01T00:00:00Z")],
      cooldownDays: 14,
      now,
    });
    expect(flags.map((f) => f.name)).toEqual(["reqeusts", "reqeusts"]);
    expect(flags[0]!.why).toContain('"requests"');
    expect(flags[1]!.why).toContain("released 2 day(s) ago");
  });

  test("the form lists what was asked, the dependencies, sizes and the total", () => {
    const form = installForm({
      asked: ["rich"],
      downloads: [wheel("rich"), wheel("pygments")],
      index: "https://user:secret@mirror.example/simple",
      cooldownDays: 14,
      now,
    });
    expect(form.message).toContain("Asked for:\n  rich 1.0  1.9 MB");
    expect(form.message).toContain("Dependencies:\n  pygments 1.0  1.9 MB");
    expect(form.message).toContain("Total download: 3.8 MB");
    expect(form.message).not.toContain("secret");
  });
});

test("uv's platform for the sandbox's machine and C library", () => {
  expect(uvPlatform("x86_64", "glibc", "2.36")).toBe("x86_64-manylinux_2_36");
  expect(uvPlatform("aarch64", "glibc", "2.29")).toBe("aarch64-manylinux_2_28");
  expect(uvPlatform("x86_64", "glibc", "2.24")).toBe("x86_64-manylinux_2_17");
  expect(uvPlatform("x86_64", "glibc", "2.41")).toBe("x86_64-manylinux_2_40");
  expect(uvPlatform("x86_64", "musl", "1.2")).toBe("x86_64-unknown-linux-musl");
});

test("a ModuleNotFoundError is answered per the install setting", () => {
  const err = { type: "ModuleNotFoundError", message: "No module named 'sklearn'", traceback: "" };
  const settings = {
    mode: "ask" as const,
    always: [],
    wheelhouse: undefined,
    index: "https://pypi.org/simple",
    cooldownDays: 14,
    maxBytes: 1,
    uv: undefined,
  };
  expect(moduleNotFoundHint(err, settings, undefined)).toContain('runtime.install("scikit-learn")');
  expect(moduleNotFoundHint(err, { ...settings, mode: "deny" }, undefined)).toContain("MCP_BRIDGE_INSTALL=deny");
  expect(moduleNotFoundHint(err, settings, "the docker engine does not see this machine's folders")).toContain("cannot reach this sandbox");
  expect(moduleNotFoundHint({ ...err, message: "No module named 'sklearn.nope'" }, settings, undefined)).toBeUndefined();
});
