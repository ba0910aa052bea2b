/**
 * `mcp-code-exec packages add|list|verify|gc`: the package store and the wheelhouse, for people.
 *   add REQ...   resolve on this (connected) machine and download the wheels, with their dependencies and
 *                the pinned uv wheel, into the wheelhouse, recording each file's SHA-256 in wheelhouse.json:
 *                how an air-gapped machine gets packages (copy the folder, set MCP_BRIDGE_WHEELHOUSE)
 *   list         what the store holds (installed before) and what the wheelhouse offers
 *   verify       re-hash every wheel and every unpacked file; exit 1 on any that changed
 *   gc           remove what nothing refers to (half-written folders, the resolver's cache); --all: everything
 */
import { existsSync, mkdirSync, readdirSync, rmSync, copyFileSync } from "node:fs";
import { join } from "node:path";
import { homedir } from "node:os";
import { loadConfig } from "../config/env.ts";
import { BridgeError } from "../errors.ts";
import { downloadWheel, hashFile } from "../packages/fetch-wheel.ts";
import { parseRequirements, requirementString } from "../packages/requirement.ts";
import { PackageStore, readWheelhouse, writeWheelhouse } from "../packages/store.ts";
import { hostPython, hostUvWheel, locateUv, resolveWith, uvEnv } from "../packages/uv.ts";
import { verifyUnpacked } from "../packages/wheel.ts";

export interface PackagesOptions {
  wheelhouse?: string;
  python?: string;
  platform?: string;
  index?: string;
  all?: boolean;
  json?: boolean;
}

type Out = (s: string) => void;

export async function packages(
  action: string,
  args: string[],
  opts: PackagesOptions,
  env: Record<string, string | undefined> = process.env,
  out: Out = (s) => process.stdout.write(s),
): Promise<number> {
  const config = loadConfig(env, env.HOME || homedir());
  const store = new PackageStore(config.stateDir);
  switch (action) {
    case "add":
      return add(args, opts, config.packages, config.stateDir, env, out);
    case "list":
      return list(store, opts.wheelhouse ?? config.packages.wheelhouse, opts.json === true, out);
    case "verify":
      return verify(store, opts.wheelhouse ?? config.packages.wheelhouse, out);
    case "gc":
      return gc(store, opts.all === true, out);
    default:
      throw new BridgeError("INVALID_INPUT", `unknown packages action "${action}"`, { hint: "use add, list, verify or gc" });
  }
}

async function add(
  args: string[],
  opts: PackagesOptions,
  settings: ReturnType<typeof loadConfig>["packages"],
  stateDir: string,
  env: Record<string, string | undefined>,
  out: Out,
): Promise<number> {
  const dir = opts.wheelhouse ?? settings.wheelhouse;
  if (!dir) throw new BridgeError("INVALID_INPUT", "no wheelhouse to fill", { hint: "pass --wheelhouse DIR or set MCP_BRIDGE_WHEELHOUSE" });
  const reqs = parseRequirements(args).map(requirementString);
  mkdirSync(dir, { recursive: true });
  const index = opts.index ?? settings.index;
  const store = new PackageStore(stateDir);
  store.ensure();
  const uv = await locateUv({ stateDir, env, explicit: settings.uv, index });
  const work = join(store.dirs.tmp, `add-${process.pid}`);
  mkdirSync(work, { recursive: true });
  try {
    const target = { python: opts.python ?? "3.13", platform: opts.platform ?? "x86_64-manylinux_2_36" };
    const r = await resolveWith(
      { uv, env: uvEnv(env, store.dirs.uvCache), work, python: hostPython(env) },
      reqs,
      target,
      { findLinks: [dir], index },
      [],
    );
    const manifest = readWheelhouse(dir) ?? {};
    for (const w of r.wheels) {
      const got = w.url.startsWith("file:")
        ? { path: new URL(w.url).pathname, ...(await hashFile(new URL(w.url).pathname)) }
        : await downloadWheel(w, dir, settings.maxBytes);
      const file = got.path.split("/").pop()!;
      manifest[file] = { sha256: got.sha256, size: got.size };
      out(`${w.name} ${w.version}  ${file}  sha256:${got.sha256.slice(0, 16)}…\n`);
    }
    // The resolver itself, for a machine that has no uv: the bridge unpacks it from here.
    const pinned = hostUvWheel();
    const uvSrc = pinned && [join(dir, pinned.file), join(store.dirs.tmp, pinned.file)].find((p) => existsSync(p));
    if (pinned && uvSrc && !existsSync(join(dir, pinned.file))) copyFileSync(uvSrc, join(dir, pinned.file));
    if (pinned && existsSync(join(dir, pinned.file)))
      manifest[pinned.file] = { sha256: pinned.sha256, size: (await hashFile(join(dir, pinned.file))).size };
    writeWheelhouse(dir, manifest);
    out(
      `${r.wheels.length} wheel(s) for Python ${target.python} on ${target.platform} in ${dir} (wheelhouse.json records their SHA-256)\n`,
    );
    return 0;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function list(store: PackageStore, wheelhouse: string | undefined, json: boolean, out: Out): number {
  const stored = Object.values(store.read()).sort((a, b) => a.name.localeCompare(b.name));
  const house = wheelhouse && existsSync(wheelhouse) ? (readWheelhouse(wheelhouse) ?? {}) : {};
  if (json) {
    out(`${JSON.stringify({ store: stored, wheelhouse: house }, null, 1)}\n`);
    return 0;
  }
  out(`Installed before (${store.dirs.root}):\n`);
  for (const w of stored) out(`  ${w.name} ${w.version}  sha256:${w.sha256.slice(0, 16)}…  from ${w.source}  ${w.added.slice(0, 10)}\n`);
  if (!stored.length) out("  (nothing yet)\n");
  if (wheelhouse) {
    out(`Wheelhouse (${wheelhouse}):\n`);
    for (const [file, f] of Object.entries(house)) out(`  ${file}  sha256:${f.sha256.slice(0, 16)}…\n`);
    if (!Object.keys(house).length) out("  (no wheelhouse.json: `mcp-code-exec packages add` writes it)\n");
  }
  return 0;
}

async function verify(store: PackageStore, wheelhouse: string | undefined, out: Out): Promise<number> {
  const problems: string[] = [];
  let checked = 0;
  for (const w of Object.values(store.read())) {
    const path = join(store.dirs.wheels, w.file);
    if (existsSync(path)) {
      checked++;
      const got = await hashFile(path);
      if (got.sha256 !== w.sha256) problems.push(`${path}: SHA-256 ${got.sha256} is not the recorded ${w.sha256}`);
    }
    const site = join(store.dirs.site, w.site);
    if (existsSync(site)) {
      checked++;
      problems.push(...(await verifyUnpacked(site)));
    }
  }
  if (wheelhouse && existsSync(wheelhouse)) {
    const manifest = readWheelhouse(wheelhouse);
    const wheels = readdirSync(wheelhouse).filter((f) => f.endsWith(".whl"));
    if (!manifest && wheels.length)
      out(
        `note: ${wheelhouse} has no wheelhouse.json, so its ${wheels.length} wheel(s) cannot be checked (\`packages add\` records them)\n`,
      );
    for (const file of manifest ? wheels : []) {
      checked++;
      const want = manifest?.[file];
      if (!want) {
        problems.push(`${join(wheelhouse, file)}: not in wheelhouse.json (added by hand?): installs refuse it`);
        continue;
      }
      const got = await hashFile(join(wheelhouse, file));
      if (got.sha256 !== want.sha256) problems.push(`${join(wheelhouse, file)}: SHA-256 ${got.sha256} is not the recorded ${want.sha256}`);
    }
  }
  for (const p of problems) out(`TAMPERED  ${p}\n`);
  out(
    problems.length
      ? `${problems.length} problem(s) in ${checked} checked\n`
      : `ok: ${checked} wheel(s) and folder(s) match their SHA-256\n`,
  );
  return problems.length ? 1 : 0;
}

function gc(store: PackageStore, all: boolean, out: Out): number {
  if (all) {
    rmSync(store.dirs.root, { recursive: true, force: true });
    out(`removed ${store.dirs.root} (sessions running now lose what they installed)\n`);
    return 0;
  }
  const known = Object.values(store.read());
  const sites = new Set(known.map((w) => w.site));
  const files = new Set(known.map((w) => w.file));
  let removed = 0;
  for (const d of existsSync(store.dirs.site) ? readdirSync(store.dirs.site) : [])
    if (!sites.has(d)) rmSync(join(store.dirs.site, d), { recursive: true, force: true }), removed++;
  for (const f of existsSync(store.dirs.wheels) ? readdirSync(store.dirs.wheels) : [])
    if (!files.has(f)) rmSync(join(store.dirs.wheels, f), { force: true }), removed++;
  for (const d of [store.dirs.tmp, store.dirs.uvCache]) if (existsSync(d)) rmSync(d, { recursive: true, force: true }), removed++;
  out(`removed ${removed} unreferenced item(s) from ${store.dirs.root}\n`);
  return 0;
}
