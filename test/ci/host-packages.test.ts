/**
 * CI must fail where a fresh machine fails. Every host program the product, the suite and the scripts
 * call must come from a Debian package that scripts/setup.sh names, from what those packages require
 * (Depends and Pre-Depends, as --no-install-recommends installs them), or from an Essential package;
 * programs from elsewhere (npm) must be installed by setup.sh itself. Checked against this machine's
 * package database, so a package installed by hand (catatonit, once) cannot hide a missing step.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../support/env.ts";

/** Every host program called, and who calls it. The scan below fails when a new one is not listed. */
const HOST_PROGRAMS: Record<string, string> = {
  podman: "engine",
  docker: "engine CLI",
  dockerd: "scripts/start-dockerd.sh",
  runc: "podman/docker OCI runtime",
  runsc: "gVisor runtime",
  conmon: "podman's container monitor",
  containerd: "dockerd",
  debootstrap: "image build",
  "docker-registry": "image pull and publish tests (a registry on loopback)",
  "dpkg-deb": "image build (the fetched folder's Debian mirror)",
  chroot: "image build",
  tar: "image build",
  bash: "image build, scripts",
  sh: "tests, install.sh",
  setsid: "start-dockerd.sh",
  setpriv: "engine-discovery test (a user outside the docker group)",
  pidof: "start-dockerd.sh",
  nohup: "start-dockerd.sh",
  pgrep: "security suite",
  pkill: "fault tests",
  kill: "tests",
  sleep: "watchdog tests",
  unshare: "release and engine-discovery tests",
  mount: "engine-discovery test",
  sha256sum: "release test",
  python3: "signature tests",
  node: "MCP Inspector CLI, npm-launched servers, the npm launcher",
  npm: "setup.sh installs bun; npm packages are published and installed",
  npx: "npx test and bench",
  bun: "everything",
  dpkg: "setup.sh",
  "apt-get": "setup.sh",
  "apt-cache": "this test",
  wget: "install.sh test",
  curl: "install.sh",
  perl: "install.sh test (shasum)",
  shasum: "install.sh test",
  chmod: "release test",
  mkdir: "client config tests",
  ruby: "Homebrew formula syntax check",
  ldd: "install.sh",
  awk: "install.sh",
  sed: "install.sh",
  uname: "install.sh",
  timeout: "Deno host process",
  cat: "an envFile that is a named pipe, read when its server starts",
  mkfifo: "named-pipe config tests",
  git: "Copilot CLI test (a real repository, whose root it reads settings from)",
  uv: "runtime.install's resolver (src/packages/uv.ts): used from PATH when there, else unpacked from its pinned wheel",
};

/** Not from a Debian package: who installs it. */
const NOT_DEBIAN: Record<string, RegExp> = {
  bun: /npm install -g bun/, // scripts/setup.sh
  // Never installed on the host: the bridge unpacks the pinned uv wheel, which the tests' index serves.
  uv: /bash scripts\/test-wheels\.sh/,
};

const hasDpkg = existsSync("/usr/bin/dpkg-query") && existsSync("/usr/bin/apt-cache");

function sh(argv: string[]): string {
  const r = Bun.spawnSync(argv, { stdout: "pipe", stderr: "pipe" });
  return r.stdout.toString();
}

/** The packages scripts/setup.sh installs. */
function namedPackages(): string[] {
  const setup = readFileSync(join(ROOT, "scripts", "setup.sh"), "utf8");
  const m = /^APT_PACKAGES=\(([^)]*)\)/m.exec(setup);
  if (!m) throw new Error("scripts/setup.sh has no APT_PACKAGES=(...) line");
  return m[1]!.split(/\s+/).filter(Boolean);
}

/**
 * Named packages, everything they require (Depends and Pre-Depends, any installed alternative, through
 * Provides), and the Essential set every Debian machine has. Walked over the installed packages.
 */
function providedPackages(named: string[]): Set<string> {
  const rows = sh(["dpkg-query", "-W", "-f", "${Package}\\t${Essential}\\t${Provides}\\t${Pre-Depends}, ${Depends}\\n"])
    .split("\n")
    .filter(Boolean);
  const deps = new Map<string, string[][]>();
  const providers = new Map<string, string[]>();
  const essential: string[] = [];
  const names = (field: string) =>
    field
      .split(",")
      .map((d) => d.trim())
      .filter(Boolean);
  for (const row of rows) {
    const [pkg, ess, provides, depends] = row.split("\t") as [string, string, string, string];
    if (ess === "yes") essential.push(pkg);
    for (const p of names(provides)) providers.set(p.replace(/\s*\(.*$/, ""), [...(providers.get(p.replace(/\s*\(.*$/, "")) ?? []), pkg]);
    deps.set(
      pkg,
      names(depends).map((d) => d.split("|").map((alt) => alt.trim().replace(/[\s:].*$/, ""))),
    );
  }
  const out = new Set<string>();
  const queue = [...named, ...essential];
  while (queue.length) {
    const pkg = queue.pop()!;
    if (out.has(pkg)) continue;
    out.add(pkg);
    for (const alternatives of deps.get(pkg) ?? []) {
      const installed = alternatives.flatMap((a) => (deps.has(a) ? [a] : (providers.get(a) ?? [])));
      queue.push(...installed);
    }
  }
  return out;
}

/** Paths that may name the same file: itself, its real path, and their /usr-merge twins. */
function variants(path: string): string[] {
  const out = new Set<string>([path]);
  try {
    out.add(realpathSync(path));
  } catch {
    // dangling: only the path itself
  }
  for (const p of [...out]) out.add(p.startsWith("/usr/") ? p.slice(4) : `/usr${p}`);
  return [...out];
}

/** The owning package of every path dpkg knows, in one query (`pkg[, pkg]: /path` per line). */
function owners(paths: string[]): Map<string, string> {
  const map = new Map<string, string>();
  const out = sh(["dpkg-query", "-S", ...new Set(paths)]);
  for (const line of out.split("\n")) {
    if (!line || line.startsWith("diversion")) continue;
    const at = line.indexOf(": ");
    if (at > 0) map.set(line.slice(at + 2).trim(), line.slice(0, at).split(",")[0]!.trim());
  }
  return map;
}

/** Programs the sources call: spawn argv literals, `which("x")`, and the scripts' own commands. */
function calledPrograms(): Set<string> {
  const found = new Set<string>();
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? (e.name === "node_modules" ? [] : walk(join(dir, e.name))) : [join(dir, e.name)],
    );
  const files = ["src", "adapters", "test", "bench", "scripts"]
    .flatMap((d) => (existsSync(join(ROOT, d)) ? walk(join(ROOT, d)) : []))
    .filter((f) => /\.(ts|sh)$/.test(f));
  // `run([...])` is a process runner in tests and scripts; in adapters it runs an engine subcommand.
  const argv =
    /(?:spawn|spawnSync|runCommand|spawnChild)\(\s*\[\s*"([a-z][\w.+-]*)"|(?:spawn|spawnSync)\(\s*"([a-z][\w.+-]*)"|\bwhich\(\s*"([a-z][\w.+-]*)"/g;
  const runner = /\brun\(\s*\[\s*"([a-z][\w.+-]*)"/g;
  for (const f of files) {
    if (f.endsWith("host-packages.test.ts")) continue;
    const text = readFileSync(f, "utf8");
    for (const m of text.matchAll(argv)) found.add((m[1] ?? m[2] ?? m[3])!);
    if (!f.includes("/adapters/") && !f.includes("/src/")) for (const m of text.matchAll(runner)) found.add(m[1]!);
  }
  return found;
}

describe.skipIf(!hasDpkg)("host packages: what CI uses, a fresh machine gets from the install steps", () => {
  test("every host program the sources call is listed here with its caller", () => {
    const unlisted = [...calledPrograms()].filter((p) => !(p in HOST_PROGRAMS) && !["mcp-code-exec"].includes(p));
    expect(unlisted).toEqual([]);
  });

  test("each comes from a package scripts/setup.sh names, what those require, or an Essential package", () => {
    const named = namedPackages();
    const provided = providedPackages(named);
    const setup = readFileSync(join(ROOT, "scripts", "setup.sh"), "utf8");
    const problems: string[] = [];
    const SYSTEM_DIRS = ["/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin"];
    const candidatesOf = (program: string) => SYSTEM_DIRS.map((d) => join(d, program)).filter((p) => existsSync(p));
    const known = owners(Object.keys(HOST_PROGRAMS).flatMap((p) => candidatesOf(p).flatMap(variants)));
    for (const [program, usedBy] of Object.entries(HOST_PROGRAMS)) {
      if (NOT_DEBIAN[program]) {
        if (!NOT_DEBIAN[program]!.test(setup)) problems.push(`${program} (${usedBy}): scripts/setup.sh no longer installs it`);
        continue;
      }
      // Some instance in the system folders must be a packaged file (PATH may put another first, e.g. pyenv).
      const found = candidatesOf(program).flatMap((c) =>
        variants(c)
          .map((v) => known.get(v))
          .filter((o): o is string => o !== undefined),
      );
      if (found.length === 0) {
        problems.push(`${program} (${usedBy}): no Debian package provides it here; add its package to APT_PACKAGES in scripts/setup.sh`);
      } else if (!found.some((o) => provided.has(o))) {
        problems.push(
          `${program} (${usedBy}): from ${[...new Set(found)].join(", ")}, which scripts/setup.sh does not install: add it to APT_PACKAGES`,
        );
      }
    }
    expect(problems).toEqual([]);
  });
});
