/**
 * runtime.install() from sandbox code, end to end on the host: requirements checked (requirement.ts),
 * resolved by uv for the sandbox's Python and platform on top of what it already has (uv.ts), first
 * from local wheels only (the wheelhouse and wheels approved before: no question), else from the
 * package index, where a name the index does not have is refused with the nearest real name before
 * anyone is asked, and a download waits for the person's approval (ask-install.ts) unless
 * MCP_BRIDGE_INSTALL=allow or the user's own MCP_BRIDGE_PACKAGES asked for it. Wheels are checked
 * (fetch-wheel.ts), unpacked into the content-addressed store (wheel.ts), and the folders returned
 * for the sandbox to put on sys.path. Every install that got past the checks is one audit line.
 */
import { copyFile, link, mkdtemp, rename, rm } from "node:fs/promises";
import { existsSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AuditLog } from "../audit/audit-log.ts";
import type { PackageSettings } from "../config/env.ts";
import { maskUrl } from "../config/mask.ts";
import type { Logger } from "../log.ts";
import type { RunScope } from "../session/request-gate.ts";
import { askInstall, formatBytes, riskFlags } from "./ask-install.ts";
import { downloadWheel, localWheel, type Fetched } from "./fetch-wheel.ts";
import { POPULAR } from "./popular.ts";
import { nearestName, normalize, parseRequirements, requirementString, type Requirement } from "./requirement.ts";
import { CONTAINER_PACKAGES, PackageStore, readWheelhouse, siteName, type StoredWheel } from "./store.ts";
import {
  hostPython,
  locateUv,
  ResolverError,
  resolveWith,
  uvEnv,
  uvPlatform,
  wheelNames,
  type LockedWheel,
  type Resolution,
  type Source,
} from "./uv.ts";
import { unpackWheel } from "./wheel.ts";

/** The longest one wheel's download may take. */
const DOWNLOAD_LIMIT_MS = 30 * 60_000;

export class InstallRefused extends Error {
  constructor(
    message: string,
    readonly kind: "policy" | "bad_request" | "not_found",
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export interface InstallRequest {
  requirements: unknown[];
  /** The sandbox's interpreter and platform, as it reports them. */
  target: { python: string; machine: string; libc: string; libc_version: string };
  /** Distributions the sandbox has (the image's, and earlier installs). */
  installed: Array<{ name: string; version: string }>;
  /** The sandbox says this is MCP_BRIDGE_PACKAGES: believed only when the list is exactly that. */
  config?: boolean;
}

export interface InstalledPackage {
  name: string;
  version: string;
  sha256: string;
  /** The folder inside the sandbox to put on sys.path. */
  path: string;
  source: string;
}

export interface InstallResult {
  installed: InstalledPackage[];
  /** Asked for and already there: nothing to do. */
  present: string[];
  notes: string[];
}

export interface InstallerDeps {
  settings: PackageSettings;
  stateDir: string;
  env: Record<string, string | undefined>;
  log: Logger;
  audit?: AuditLog;
  askTimeoutMs: number;
  fetch?: typeof fetch;
}

export class PackageInstaller {
  readonly store: PackageStore;
  #deps: InstallerDeps;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(deps: InstallerDeps) {
    this.#deps = deps;
    this.store = new PackageStore(deps.stateDir);
  }

  get settings(): PackageSettings {
    return this.#deps.settings;
  }

  /** One install at a time per bridge: the store is written by one of them at once. */
  install(req: InstallRequest, run: RunScope): Promise<InstallResult> {
    // The run's clock stops while the host works for it (a large download must not time the run out);
    // a cancelled run aborts its downloads, and no download may take longer than DOWNLOAD_LIMIT_MS.
    const release = run.holdClock();
    const next = this.#queue.then(() => this.#install(req, run)).finally(release);
    this.#queue = next.catch(() => {});
    return next;
  }

  async #install(req: InstallRequest, run: RunScope): Promise<InstallResult> {
    const { settings, log } = this.#deps;
    const fromConfig = req.config === true && sameList(req.requirements, settings.always);
    if (settings.mode === "deny" && !fromConfig)
      throw new InstallRefused(
        "installs are turned off (MCP_BRIDGE_INSTALL=deny): tell the user which package is missing; they can add it to MCP_BRIDGE_PACKAGES or to the image",
        "policy",
        { decided_by: "policy" },
      );
    let reqs: Requirement[];
    try {
      reqs = parseRequirements(req.requirements);
    } catch (err) {
      throw new InstallRefused((err as Error).message, "bad_request");
    }
    const notes = reqs.filter((r) => r.importName).map((r) => `${r.importName} is the import name: installing the distribution ${r.name}`);
    this.store.ensure();
    const work = await mkdtemp(join(this.store.dirs.tmp, "resolve-"));
    try {
      const wheelhouse = settings.wheelhouse && existsSync(settings.wheelhouse) ? settings.wheelhouse : undefined;
      const uv = await locateUv({
        stateDir: this.#deps.stateDir,
        env: this.#deps.env,
        explicit: settings.uv,
        wheelhouse,
        index: settings.index,
        fetch: this.#deps.fetch,
      });
      const runUv = { uv, env: uvEnv(this.#deps.env, this.store.dirs.uvCache), work, python: hostPython(this.#deps.env) };
      const target = { python: req.target.python, platform: uvPlatform(req.target.machine, req.target.libc, req.target.libc_version) };
      const local: Source = { findLinks: [...(wheelhouse ? [wheelhouse] : []), this.store.dirs.wheels] };
      const strings = reqs.map(requirementString);
      let resolution: Resolution;
      let source = "local";
      try {
        resolution = await resolveWith(runUv, strings, target, local, req.installed);
      } catch (err) {
        if (!(err instanceof ResolverError) || (err.kind !== "not_found" && err.kind !== "no_solution")) throw err;
        log.debug("not resolvable from local wheels: asking the index", { error: err.message.slice(0, 300) });
        source = settings.index;
        try {
          resolution = await resolveWith(runUv, strings, target, { ...local, index: settings.index }, req.installed);
        } catch (again) {
          throw await this.#explain(again, local.findLinks);
        }
      }
      const present = reqs.filter((r) => !resolution.add.some((a) => normalize(a.name) === r.key)).map((r) => r.name);
      if (!resolution.wheels.length) return { installed: [], present, notes };
      if (resolution.replaced.length)
        notes.push(
          `replaces for this session: ${resolution.replaced.map((r) => `${r.name} ${r.version}`).join(", ")} (if already imported, the old version stays loaded until run_python is called with reset=true)`,
        );
      const downloads = resolution.wheels.filter((w) => !w.url.startsWith("file:"));
      let approvedBy = "local source (no download)";
      let answer: string | undefined;
      if (downloads.length) {
        const verdict = await this.#approve(reqs, downloads, run, fromConfig);
        approvedBy = verdict.by;
        answer = verdict.answer;
        if (!verdict.allowed) {
          this.#audit(run, "deny", verdict.by, answer, source, downloads, "refused");
          throw new InstallRefused(
            `the download of ${downloads.map((w) => `${w.name} ${w.version}`).join(", ")} was not approved (${verdict.why}); nothing was installed. The user can allow it with MCP_BRIDGE_INSTALL=allow, or run \`mcp-code-exec packages add ${strings.join(" ")}\` to put it in the wheelhouse`,
            "policy",
            { decided_by: verdict.by === "user" ? "user" : "policy" },
          );
        }
      }
      let installed: InstalledPackage[];
      try {
        installed = await this.#fetchAndUnpack(resolution.wheels, wheelhouse, run.signal);
      } catch (err) {
        this.#audit(run, "allow", approvedBy, answer, source, resolution.wheels, "failed", (err as Error).message);
        throw err;
      }
      this.#audit(run, "allow", approvedBy, answer, source, resolution.wheels, "ok");
      return { installed, present, notes };
    } finally {
      await rm(work, { recursive: true, force: true }).catch(() => {});
    }
  }

  async #approve(reqs: Requirement[], downloads: LockedWheel[], run: RunScope, fromConfig: boolean) {
    const { settings, log } = this.#deps;
    const flags = riskFlags({ downloads, cooldownDays: settings.cooldownDays });
    const total = downloads.reduce((s, w) => s + (w.size ?? 0), 0);
    if (total > settings.maxBytes)
      return {
        allowed: false,
        by: "policy",
        answer: "too-large",
        why: `the download is ${formatBytes(total)}, over MCP_BRIDGE_PACKAGE_MAX_SIZE`,
      };
    if (fromConfig || settings.mode === "allow") {
      if (flags.length) log.warn("installing flagged packages without a question", { flags });
      return { allowed: true, by: fromConfig ? "MCP_BRIDGE_PACKAGES" : "policy", answer: undefined, why: undefined };
    }
    const v = await askInstall(
      { asked: reqs.map((r) => r.name), downloads, index: settings.index, cooldownDays: settings.cooldownDays },
      run,
      this.#deps.askTimeoutMs,
    );
    log.info("install approval", { answer: v.answer, wait_ms: v.waitMs });
    return {
      allowed: v.allowed,
      by: v.answer === "unsupported" || v.answer === "run-ended" ? "policy" : "user",
      answer: v.answer,
      why: v.why,
    };
  }

  async #fetchAndUnpack(wheels: LockedWheel[], wheelhouse: string | undefined, signal: AbortSignal): Promise<InstalledPackage[]> {
    const { settings } = this.#deps;
    const manifest = wheelhouse ? readWheelhouse(wheelhouse) : undefined;
    const stored = this.store.read();
    const recorded: StoredWheel[] = [];
    const out: InstalledPackage[] = [];
    let total = 0;
    for (const w of wheels) {
      let got: Fetched;
      let from: string;
      if (w.url.startsWith("file:")) {
        const path = fileURLToPath(w.url);
        const inHouse = wheelhouse !== undefined && path.startsWith(`${wheelhouse}/`);
        const known = inHouse
          ? manifest && { sha256: manifest[basename(path)]?.sha256 ?? "(not listed)", from: `the wheelhouse's ${"wheelhouse.json"}` }
          : Object.values(stored).find((s) => s.file === basename(path));
        got = await localWheel(
          w,
          known
            ? { sha256: known.sha256, from: inHouse ? `the wheelhouse manifest` : "the SHA-256 recorded when it was downloaded" }
            : undefined,
        );
        from = inHouse ? wheelhouse! : ((known as StoredWheel | undefined)?.source ?? "cache");
        // The store keeps its own copy (a hard link where it can): later sessions resolve from it
        // without the wheelhouse, and `packages verify` checks it.
        if (inHouse) await keepCopy(path, join(this.store.dirs.wheels, basename(path)));
      } else {
        got = await downloadWheel(
          w,
          this.store.dirs.wheels,
          settings.maxBytes - total,
          this.#deps.fetch,
          AbortSignal.any([signal, AbortSignal.timeout(DOWNLOAD_LIMIT_MS)]),
        );
        from = maskUrl(settings.index);
      }
      total += got.size;
      const site = siteName(w.name, w.version, got.sha256);
      const dest = join(this.store.dirs.site, site);
      if (!existsSync(dest)) await unpackWheel(got.path, dest, { maxEntries: 200_000, maxTotalBytes: settings.maxBytes });
      recorded.push({
        file: basename(got.path),
        name: w.name,
        version: w.version,
        sha256: got.sha256,
        size: got.size,
        source: from,
        site,
        added: new Date().toISOString(),
      });
      out.push({ name: w.name, version: w.version, sha256: got.sha256, path: `${CONTAINER_PACKAGES}/${site}`, source: from });
    }
    this.store.record(
      recorded.map((r) => ({ ...r, added: stored[r.sha256]?.added ?? r.added, source: stored[r.sha256]?.source ?? r.source })),
    );
    return out;
  }

  /** A resolution that failed, in words the model can act on; a name nobody has gets the nearest real one. */
  async #explain(err: unknown, findLinks: string[]): Promise<unknown> {
    if (!(err instanceof ResolverError)) return err;
    if (err.kind === "not_found" && err.missing) {
      const near = nearestName(normalize(err.missing), [...POPULAR, ...(await wheelNames(findLinks))]);
      return new InstallRefused(
        `no package named ${JSON.stringify(err.missing)} exists on ${maskUrl(this.#deps.settings.index)} or in the local wheels${near ? `; the nearest real package is "${near}"` : "; no real package has a similar name"}. Nothing was downloaded and nobody was asked`,
        "not_found",
        { missing: err.missing, ...(near ? { nearest: near } : {}) },
      );
    }
    if (err.kind === "no_solution")
      return new InstallRefused(
        `these requirements cannot be installed as wheels for the sandbox's Python: ${err.message.slice(0, 1500)}`,
        "not_found",
      );
    return err;
  }

  #audit(
    run: RunScope,
    decision: "allow" | "deny",
    by: string,
    answer: string | undefined,
    source: string,
    wheels: LockedWheel[],
    outcome: string,
    error?: string,
  ) {
    this.#deps.audit?.event({
      event: "install",
      run: run.runId,
      decision,
      approved_by: by,
      ...(answer ? { answer } : {}),
      source: source === "local" ? "local wheels" : maskUrl(source),
      packages: wheels.map((w) => ({
        name: w.name,
        version: w.version,
        sha256: w.sha256,
        ...(w.size !== undefined ? { size: w.size } : {}),
        from: w.url.startsWith("file:") ? "local" : "index",
      })),
      outcome,
      ...(error ? { error: error.slice(0, 500) } : {}),
    });
  }
}

async function keepCopy(from: string, to: string): Promise<void> {
  if (existsSync(to)) return;
  const tmp = `${to}.part-${process.pid}`;
  await link(from, tmp).catch(() => copyFile(from, tmp));
  await rename(tmp, to);
}

function sameList(a: unknown[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => typeof x === "string" && x.trim() === b[i]!.trim());
}
