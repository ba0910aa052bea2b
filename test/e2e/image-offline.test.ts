/**
 * The sandbox image on a machine without a network: `mcp-code-exec image fetch DIR` puts every pinned
 * .deb (as a Debian mirror) and wheel into one folder, and `image build --offline` builds from that
 * folder inside a network namespace with no interface but loopback (`unshare -n`) and an empty cache,
 * so nothing can come from anywhere else. A wheelhouse that lacks some wheels gives an image without
 * the packages that need them (and says which); a changed wheel, or a mirror whose packages are not
 * the lock's, stops the build with what to do.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY } from "../support/binary.ts";
import { bridgeEnv, ENGINES, ROOT } from "../support/env.ts";
import { run } from "../support/run.ts";

const e = ENGINES[0] as string;
const DIR = mkdtempSync(join(tmpdir(), "mcp-code-exec-offline-"));
const FETCHED = join(DIR, "fetched");
const OFFLINE = "mcp-code-exec-sandbox:offlinetest";
const lockLines = (file: string) =>
  readFileSync(join(ROOT, "image", file), "utf8")
    .split("\n")
    .filter((l) => l && !l.startsWith("#"));
/** The binary's `image build --offline` in a fresh network namespace, with an empty cache of its own. */
const offlineBuild = (args: string[]) =>
  run(["unshare", "-n", BINARY, "image", "build", "--offline", "--engine", e, ...args], {
    cwd: DIR,
    env: bridgeEnv({ MCP_BRIDGE_IMAGE_CACHE: mkdtempSync(join(DIR, "cache-")) }),
  });

beforeAll(async () => {
  const r = await run([BINARY, "image", "fetch", FETCHED], { cwd: DIR, env: bridgeEnv() });
  expect(r.code).toBe(0);
  expect(r.stderr).toContain(
    `on the air-gapped machine: mcp-code-exec image build --offline --mirror file://${FETCHED}/debian --wheelhouse ${FETCHED}/wheels`,
  );
}, 600_000);
afterAll(async () => {
  await run([e, "rmi", "--force", OFFLINE], { env: bridgeEnv() });
  rmSync(DIR, { recursive: true, force: true });
});

describe("image fetch DIR", () => {
  test("holds every locked wheel and a Debian mirror of every locked package", () => {
    expect(readdirSync(join(FETCHED, "wheels")).sort()).toEqual(
      lockLines("wheels.lock")
        .map((l) => l.split(" ")[3] ?? "")
        .sort(),
    );
    const packages = readFileSync(join(FETCHED, "debian", "dists", "trixie", "main", "binary-amd64", "Packages"), "utf8");
    for (const l of lockLines("debian.lock")) {
      const [name, version, , sha] = l.split(" ");
      expect(packages).toContain(`Package: ${name}\n`);
      expect(packages).toContain(`Version: ${version}\n`);
      expect(packages).toContain(`SHA256: ${sha}\n`);
    }
    expect(existsSync(join(FETCHED, "debian", "dists", "trixie", "Release"))).toBe(true);
  });
});

describe("image build --offline, with no network", () => {
  test("a changed wheel in the wheelhouse stops the build before anything is built", async () => {
    const bad = join(DIR, "wheels-bad");
    cpSync(join(FETCHED, "wheels"), bad, { recursive: true });
    const victim = readdirSync(bad).find((f) => f.startsWith("tabulate-"))!;
    const bytes = readFileSync(join(bad, victim));
    bytes[bytes.length - 10] = (bytes[bytes.length - 10] ?? 0) ^ 0xff;
    writeFileSync(join(bad, victim), bytes);
    const r = await offlineBuild(["--tag", OFFLINE, "--mirror", `file://${FETCHED}/debian`, "--wheelhouse", bad]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${bad}/${victim} does not match its sha256 in image/wheels.lock`);
    expect(r.stderr).not.toContain("debootstrap (a few minutes)");
  });

  test("from the fetched folder less two wheels: the image holds the 38 packages whose wheels are all there, and works", async () => {
    const some = join(DIR, "wheels-some");
    cpSync(join(FETCHED, "wheels"), some, { recursive: true });
    for (const f of readdirSync(some)) if (/^(pyarrow|opencv_python_headless)-/.test(f)) rmSync(join(some, f));
    const r = await offlineBuild(["--tag", OFFLINE, "--mirror", `file://${FETCHED}/debian`, "--wheelhouse", some]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("left out, for want of wheels (add them to the wheelhouse): opencv-python-headless pyarrow");
    expect(r.stderr).toContain("importable 38/40; not in this image: opencv-python-headless, pyarrow");
    const inside = await run(
      [
        BINARY,
        "exec",
        "-c",
        `import importlib.util, json
m = json.load(open("/usr/share/mcp-code-exec/packages.json"))
import sklearn, pandas
print(sorted(n for n in ("pyarrow", "cv2", "sklearn") if importlib.util.find_spec(n)), "pyarrow" in {d["name"] for d in m["distributions"]})`,
      ],
      { cwd: DIR, env: bridgeEnv({ MCP_BRIDGE_RUNTIME: e, MCP_BRIDGE_IMAGE: OFFLINE }) },
    );
    expect(inside.stdout).toBe("['sklearn'] False\n");
  }, 1_200_000);

  test("a mirror whose package is not the lock's fails with the three ways out", async () => {
    // The script from a copy of the recipe whose lock names another file for one package.
    const copy = join(DIR, "recipe");
    cpSync(join(ROOT, "scripts"), join(copy, "scripts"), { recursive: true });
    cpSync(join(ROOT, "image"), join(copy, "image"), { recursive: true });
    const lock = join(copy, "image", "debian.lock");
    writeFileSync(lock, readFileSync(lock, "utf8").replace(/^(tzdata \S+ \S+ )[0-9a-f]{64}$/m, `$1${"0".repeat(64)}`));
    const r = await run(
      [
        "unshare",
        "-n",
        "bash",
        join(copy, "scripts", "build-image.sh"),
        "--variant",
        "slim",
        "--tag",
        OFFLINE,
        "--engines",
        e,
        "--offline",
      ],
      { cwd: DIR, env: bridgeEnv({ MCP_BRIDGE_IMAGE_CACHE: mkdtempSync(join(DIR, "cache-")), DEBIAN_MIRROR: `file://${FETCHED}/debian` }) },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("the Debian packages differ from image/debian.lock");
    expect(r.stderr).toMatch(/tzdata: lock \S+, mirror \S+ \(same version, other file\)/);
    expect(r.stderr).toContain("refresh the lock (scripts/lock-image.sh");
    expect(r.stderr).toContain("--debian-unlocked");
  }, 600_000);
});
