/**
 * The resolver: uv, run on the host for the sandbox's Python and platform (never inside the sandbox).
 * Why uv and not pip: one static binary that needs no pip and no virtualenv on the host, resolves for
 * another Python and platform (--python-version, --python-platform), takes what the sandbox already
 * has into account (stubs of its distributions in a --target folder), and writes a PEP 751 lock with
 * each wheel's URL, size, upload time and SHA-256 before anything is downloaded: what the approval
 * question shows. It resolves in tens of milliseconds where pip takes seconds.
 *
 * Where uv comes from, first found: MCP_BRIDGE_UV; a copy this bridge unpacked before
 * ($STATE/packages/tools/uv-<version>/uv); `uv` on PATH; the pinned uv wheel in the wheelhouse (how an
 * air-gapped machine gets it: `packages add` puts it there); else the pinned wheel from the package
 * index, checked against the SHA-256 below. uv needs some python3 on the host to start (any version:
 * it resolves for the sandbox's, not for that one).
 */
import { chmod, mkdir, readdir, rename, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { arch, platform } from "node:os";
import { createSha256 } from "../host/hash.ts";
import { runCommand, which } from "../host/process.ts";
import { ZipReader } from "./zip-reader.ts";

export const UV_VERSION = "0.13.9";

/** The uv wheels this bridge accepts, by host: file name and SHA-256 as PyPI lists them. */
export const UV_WHEELS: Record<string, { file: string; sha256: string }> = {
  "linux-x64": {
    file: "uv-0.13.9-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    sha256: "d7f459fe4fd247d830351c75686d3996ace3c6f3f728eb0e85a30b7ada0cef19",
  },
  "linux-arm64": {
    file: "uv-0.13.9-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64.whl",
    sha256: "5435c5ce14a56431208ca0996416d310f1598e8c2c8ba707688985a16bb82dbe",
  },
  "darwin-x64": {
    file: "uv-0.13.9-py3-none-macosx_10_12_x86_64.whl",
    sha256: "c16ed11e013557536b3e60065f1b912f6407bd6518e041b961e23ef9e6b4fbf5",
  },
  "darwin-arm64": {
    file: "uv-0.13.9-py3-none-macosx_11_0_arm64.whl",
    sha256: "66c512266d633bef48384a1f53003f41f2a8e7b36fe6e7fbfd3e0fd52d96fa63",
  },
};

export function hostUvWheel(): { file: string; sha256: string } | undefined {
  return UV_WHEELS[`${platform()}-${arch()}`];
}

export class ResolverError extends Error {
  constructor(
    message: string,
    readonly kind: "resolver_missing" | "not_found" | "no_solution" | "resolver_failed",
    readonly missing?: string,
  ) {
    super(message);
  }
}

export interface UvLocation {
  stateDir: string;
  env: Record<string, string | undefined>;
  /** MCP_BRIDGE_UV */
  explicit?: string;
  wheelhouse?: string;
  /** The PEP 503 index to fetch the pinned wheel from, when downloads are allowed at all. */
  index?: string;
  fetch?: typeof fetch;
}

/** The path of a uv binary to run; throws ResolverError (resolver_missing) saying how to get one. */
export async function locateUv(loc: UvLocation): Promise<string> {
  if (loc.explicit) {
    if (!existsSync(loc.explicit)) throw new ResolverError(`MCP_BRIDGE_UV=${loc.explicit} does not exist`, "resolver_missing");
    return loc.explicit;
  }
  const dir = join(loc.stateDir, "packages", "tools", `uv-${UV_VERSION}`);
  const mine = join(dir, "uv");
  if (existsSync(mine)) return mine;
  const onPath = which("uv", loc.env.PATH);
  if (onPath) return onPath;
  const pinned = hostUvWheel();
  if (!pinned)
    throw new ResolverError(
      `no uv for ${platform()}-${arch()} is pinned: install uv and set MCP_BRIDGE_UV to its path`,
      "resolver_missing",
    );
  if (loc.wheelhouse && existsSync(join(loc.wheelhouse, pinned.file))) {
    await extractUv(join(loc.wheelhouse, pinned.file), pinned.sha256, dir);
    return mine;
  }
  if (loc.index) {
    const file = await downloadPinned(loc.index, pinned, join(loc.stateDir, "packages", "tmp"), loc.fetch ?? fetch);
    await extractUv(file, pinned.sha256, dir);
    return mine;
  }
  throw new ResolverError(
    `installs need uv (the resolver) and none was found: run \`mcp-code-exec packages add\` on a connected machine (it puts ${pinned.file} in the wheelhouse), put uv on PATH, or set MCP_BRIDGE_UV`,
    "resolver_missing",
  );
}

async function downloadPinned(
  index: string,
  pinned: { file: string; sha256: string },
  tmpDir: string,
  doFetch: typeof fetch,
): Promise<string> {
  const page = new URL("uv/", index.endsWith("/") ? index : `${index}/`);
  const res = await doFetch(page, { headers: { Accept: "text/html" } });
  if (!res.ok) throw new ResolverError(`cannot fetch uv from ${page}: HTTP ${res.status}`, "resolver_missing");
  const html = await res.text();
  const href = [...html.matchAll(/href=["']([^"']+)["'][^>]*>\s*([^<]+?)\s*</g)].find((m) => m[2] === pinned.file)?.[1];
  if (!href) throw new ResolverError(`the index ${index} has no ${pinned.file}`, "resolver_missing");
  const wheel = await doFetch(new URL(href.replaceAll("&amp;", "&"), page));
  if (!wheel.ok) throw new ResolverError(`cannot fetch ${pinned.file}: HTTP ${wheel.status}`, "resolver_missing");
  const bytes = new Uint8Array(await wheel.arrayBuffer());
  const got = createSha256().update(bytes).digest("hex");
  if (got !== pinned.sha256)
    throw new ResolverError(
      `${pinned.file} from ${index} has SHA-256 ${got}, not the pinned ${pinned.sha256}: refused`,
      "resolver_missing",
    );
  await mkdir(tmpDir, { recursive: true });
  const path = join(tmpDir, pinned.file);
  await writeFile(path, bytes);
  return path;
}

async function extractUv(wheel: string, sha256: string, dir: string): Promise<void> {
  const { readFile } = await import("node:fs/promises");
  const got = createSha256()
    .update(await readFile(wheel))
    .digest("hex");
  if (got !== sha256) throw new ResolverError(`${wheel} has SHA-256 ${got}, not the pinned ${sha256}: refused`, "resolver_missing");
  const zip = await ZipReader.open(wheel, { maxEntries: 100, maxTotalBytes: 256 * 1024 * 1024 });
  try {
    const entry = zip.entries.find((e) => /^uv-[^/]+\.data\/scripts\/uv$/.test(e.name));
    if (!entry) throw new ResolverError(`${wheel} holds no uv binary`, "resolver_missing");
    const data = await zip.read(entry);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const tmp = join(dir, `uv.part-${process.pid}`);
    await writeFile(tmp, data, { mode: 0o755 });
    await chmod(tmp, 0o755);
    await rename(tmp, join(dir, "uv"));
  } finally {
    await zip.close();
  }
}

/** What the resolver resolves for: the sandbox's Python and platform. */
export interface Target {
  python: string;
  /** uv's --python-platform, e.g. x86_64-manylinux_2_36. */
  platform: string;
}

/** The sandbox's machine and C library as uv names a platform. */
export function uvPlatform(machine: string, libc: string, libcVersion: string): string {
  const cpu = machine === "arm64" ? "aarch64" : machine === "amd64" ? "x86_64" : machine;
  if (libc === "musl") return `${cpu}-unknown-linux-musl`;
  const minor = Number(/^2\.(\d+)/.exec(libcVersion)?.[1] ?? 17);
  // uv knows manylinux_2_17, 2_28 and 2_31 to 2_40: the highest of those this C library satisfies.
  const known = minor >= 31 ? Math.min(40, minor) : minor >= 28 ? 28 : 17;
  return `${cpu}-manylinux_2_${known}`;
}

export interface Source {
  /** Folders of wheels (the wheelhouse, the bridge's own cache of wheels). */
  findLinks: string[];
  /** A PEP 503 index; absent: local folders only. */
  index?: string;
}

export interface LockedWheel {
  name: string;
  version: string;
  url: string;
  sha256: string;
  size?: number;
  uploadTime?: string;
}

export interface Resolution {
  /** What would be added (name, version), in uv's order. */
  add: Array<{ name: string; version: string }>;
  /** Distributions the sandbox has that would be replaced by another version. */
  replaced: Array<{ name: string; version: string }>;
  wheels: LockedWheel[];
}

export interface RunUv {
  uv: string;
  env: Record<string, string>;
  /** A scratch folder of this resolution's own. */
  work: string;
  /** The python3 uv starts with (only a formality: it resolves for `target`). */
  python?: string;
}

/**
 * A python3 for uv to start with, from the usual places before PATH: a version manager's shim first on
 * PATH (pyenv's is a shell script) costs uv a second per call.
 */
export function hostPython(env: Record<string, string | undefined>): string | undefined {
  for (const p of ["/usr/bin/python3", "/usr/local/bin/python3", "/opt/homebrew/bin/python3"]) if (existsSync(p)) return p;
  return which("python3", env.PATH) ?? undefined;
}

function common(target: Target, source: Source, python?: string): string[] {
  return [
    ...(python ? ["--python", python] : []),
    "--python-version",
    target.python,
    "--python-platform",
    target.platform,
    "--only-binary",
    ":all:",
    "--no-config",
    "--no-python-downloads",
    "--quiet",
    ...source.findLinks.flatMap((f) => ["--find-links", f]),
    ...(source.index ? ["--default-index", source.index] : ["--no-index"]),
  ];
}

/** Resolve `requirements` for `target` on top of what the sandbox has (`installed`); nothing is downloaded. */
export async function resolveWith(
  run: RunUv,
  requirements: string[],
  target: Target,
  source: Source,
  installed: Array<{ name: string; version: string }>,
): Promise<Resolution> {
  const stubs = join(run.work, "installed");
  await mkdir(stubs, { recursive: true });
  for (const d of installed) {
    const info = join(stubs, `${d.name.replace(/[^A-Za-z0-9.]+/g, "_")}-${d.version.replace(/[^A-Za-z0-9.+!]+/g, "_")}.dist-info`);
    await mkdir(info, { recursive: true });
    await writeFile(join(info, "METADATA"), `Metadata-Version: 2.1\nName: ${d.name}\nVersion: ${d.version}\n`);
    await writeFile(join(info, "RECORD"), "");
    await writeFile(join(info, "INSTALLER"), "mcp-code-exec\n");
  }
  const plan = await uv(run, [
    "pip",
    "install",
    "--dry-run",
    "--output-format",
    "json",
    "--target",
    stubs,
    ...common(target, source, run.python),
    "--",
    ...requirements,
  ]);
  const changes = (JSON.parse(plan.stdout) as { changes?: Array<{ name: string; version: string; action: string }> }).changes ?? [];
  const add = changes.filter((c) => c.action === "installed").map(({ name, version }) => ({ name, version }));
  const replaced = changes.filter((c) => c.action === "uninstalled").map(({ name, version }) => ({ name, version }));
  if (!add.length) return { add, replaced, wheels: [] };
  const pins = join(run.work, "pins.txt");
  await writeFile(pins, add.map((a) => `${a.name}==${a.version}\n`).join(""));
  const lockDir = join(run.work, "lock");
  await mkdir(lockDir, { recursive: true });
  await uv(run, [
    "pip",
    "compile",
    pins,
    "--no-deps",
    "--format",
    "pylock.toml",
    "-o",
    join(lockDir, "pylock.toml"),
    ...common(target, source, run.python),
  ]);
  const { readFile } = await import("node:fs/promises");
  const { parse } = await import("smol-toml");
  const lock = parse(await readFile(join(lockDir, "pylock.toml"), "utf8")) as {
    packages?: Array<{
      name: string;
      version: string;
      wheels?: Array<{ url?: string; path?: string; size?: number; "upload-time"?: unknown; hashes?: { sha256?: string } }>;
    }>;
  };
  const wheels: LockedWheel[] = [];
  for (const p of lock.packages ?? []) {
    const w = p.wheels?.[0];
    const url = w?.url ?? (w?.path ? `file://${w.path}` : undefined);
    if (!w || !url || !w.hashes?.sha256)
      throw new ResolverError(`the resolver gave no wheel with a SHA-256 for ${p.name} ${p.version}`, "resolver_failed");
    const up = w["upload-time"];
    wheels.push({
      name: p.name,
      version: p.version,
      url,
      sha256: w.hashes.sha256,
      ...(typeof w.size === "number" ? { size: w.size } : {}),
      ...(up ? { uploadTime: up instanceof Date ? up.toISOString() : String(up) } : {}),
    });
  }
  return { add, replaced, wheels };
}

async function uv(run: RunUv, args: string[]): Promise<{ stdout: string }> {
  const r = await runCommand(run.uv, args, { env: run.env, cwd: run.work, timeoutMs: 120_000 });
  if (r.exitCode === 0) return { stdout: r.stdout };
  const text = r.stderr
    .split("\n")
    .filter((l) => !/^Using CPython|^Resolved \d|^hint: Wheels are required/.test(l))
    .join("\n")
    .trim();
  const missing = /Because ([A-Za-z0-9._-]+) was not found in the (?:package registry|provided package locations)/.exec(text)?.[1];
  if (missing) throw new ResolverError(text, "not_found", missing);
  if (/No interpreter found/.test(text))
    throw new ResolverError(
      "uv needs a python3 on this machine to start (any version: it resolves for the sandbox's): install python3, or run `uv python install`",
      "resolver_missing",
    );
  if (/No solution found/.test(text)) throw new ResolverError(text.replace(/^error: /, ""), "no_solution");
  throw new ResolverError(`uv failed (exit ${r.exitCode}${r.timedOut ? ", timed out" : ""}): ${text.slice(0, 2000)}`, "resolver_failed");
}

/** The environment uv runs with: what reaching an index needs (proxies, certificates), nothing else. */
export function uvEnv(env: Record<string, string | undefined>, cacheDir: string): Record<string, string> {
  const keep = [
    "PATH",
    "HOME",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SYSTEMROOT",
    "TMPDIR",
  ];
  const out: Record<string, string> = { UV_CACHE_DIR: cacheDir, UV_NO_PROGRESS: "1" };
  for (const k of keep) if (env[k]) out[k] = env[k]!;
  return out;
}

/** Names of the wheels in a folder (for the nearest-name answer on a local source). */
export async function wheelNames(dirs: string[]): Promise<string[]> {
  const names = new Set<string>();
  for (const d of dirs) {
    const files = await readdir(d).catch(() => [] as string[]);
    for (const f of files) if (f.endsWith(".whl")) names.add(f.split("-")[0]!);
  }
  return [...names];
}
