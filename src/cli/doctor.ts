/**
 * `mcp-code-exec doctor`: what is wrong on this host and how to fix it. Checks each engine, the image,
 * then starts a real sandbox with every hardening flag and verifies each one from inside.
 */
import { existsSync, readFileSync } from "node:fs";
import { writeProblem } from "../host/private-dir.ts";
import { createApp, type App } from "../app.ts";
import { parseSize } from "../config/env.ts";
import { BridgeError, renderError } from "../errors.ts";
import { isGvisor } from "../../adapters/oci-flags.ts";
import { engineChecks, type Check } from "./doctor-engines.ts";
import { speedChecks } from "./doctor-speed.ts";
import { seccompProfilePath } from "../sandbox/seccomp.ts";
import { removeAllContainersSync } from "../sandbox/live-containers.ts";
import { fallbackImage, fallbackNote } from "../session/image-choice.ts";
import { canPull } from "../session/image-pull.ts";

/** Runs inside the sandbox and reports what it can see; parsed by verifyFlags. */
export const PROBE_SCRIPT = String.raw`
import json, os, resource, socket
def read(p):
    try:
        with open(p) as f: return f.read().strip()
    except Exception as e: return None
def status(key):
    for line in (read("/proc/self/status") or "").splitlines():
        if line.startswith(key + ":"): return line.split(":", 1)[1].strip()
def can_write(p):
    try:
        with open(p, "w") as f: f.write("x")
        os.unlink(p); return True
    except Exception: return False
def net():
    try:
        s = socket.create_connection(("1.1.1.1", 53), timeout=2); s.close(); return "connected"
    except Exception as e: return type(e).__name__ + ": " + str(e)
def unshare_errno():
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    return 0 if libc.unshare(0x10000000) == 0 else ctypes.get_errno()
def channel():
    import stat
    for fd in range(200, 210):  # the runtime keeps the protocol at private fds from 200 (entrypoint/interpreter.py)
        try:
            if stat.S_ISSOCK(os.fstat(fd).st_mode): return "socket"
        except OSError: pass
    return "stdio"
st = os.statvfs("/tmp"); sh = os.statvfs("/dev/shm")
json.dumps
({
  "uid": os.getuid(), "gid": os.getgid(),
  "cap_eff": status("CapEff"), "no_new_privs": status("NoNewPrivs"), "seccomp": status("Seccomp"),
  "root_writable": can_write("/mcp-doctor-probe"), "tmp_writable": can_write("/tmp/mcp-doctor-probe"),
  "interfaces": sorted(os.listdir("/sys/class/net")) if os.path.isdir("/sys/class/net") else None,
  "network": net(),
  "memory_limit": read("/sys/fs/cgroup/memory.max") or read("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
  "pids_limit": read("/sys/fs/cgroup/pids.max") or read("/sys/fs/cgroup/pids/pids.max"),
  "cpu_max": read("/sys/fs/cgroup/cpu.max") or ((read("/sys/fs/cgroup/cpu/cpu.cfs_quota_us") or "?") + " " + (read("/sys/fs/cgroup/cpu/cpu.cfs_period_us") or "?")),
  "tmp_bytes": st.f_blocks * st.f_frsize, "shm_bytes": sh.f_blocks * sh.f_frsize,
  "nofile": resource.getrlimit(resource.RLIMIT_NOFILE), "nproc": resource.getrlimit(resource.RLIMIT_NPROC),
  "env": sorted(os.environ),
  "unshare_errno": unshare_errno(),
  "ppid": os.getppid(), "init_comm": read("/proc/1/comm"),
  "channel": channel(),
})
`;

export async function doctor(opts: { json?: boolean }): Promise<number> {
  const checks: Check[] = [];
  let app: App;
  try {
    app = createApp();
    checks.push({ name: "configuration", ok: true, detail: "environment variables are valid" });
  } catch (err) {
    checks.push({ name: "configuration", ok: false, detail: renderError(err) });
    return report(checks, opts.json);
  }
  process.on("exit", removeAllContainersSync);
  const { config } = app;
  checks.push(stateDirCheck(config.stateDir));
  checks.push(...hostChecks());
  checks.push({
    name: "engine search path",
    ok: true,
    detail: `engines are looked for on PATH, then where installers put them: ${app.env.PATH}`,
  });

  // Engines, in selection order, with the reason each one was skipped.
  const engines = await engineChecks({ engine: config.engine, adapter: config.adapter }, { env: app.env, log: app.log });
  checks.push(...engines.checks);
  if (!engines.chosen) return report(checks, opts.json);
  const { adapter, info } = engines.chosen;
  if (adapter.name === "podman") checks.push(...podmanHints(info.details));

  const hasImage = await adapter.imageExists(config.image);
  const fallback = hasImage ? undefined : await fallbackImage(config, adapter);
  checks.push({
    name: "image",
    ok: hasImage || fallback !== undefined,
    detail: fallback
      ? fallbackNote(config, adapter, fallback)
      : `${config.image} ${hasImage ? "present" : canPull(config, adapter) ? "missing (the bridge pulls it at the first call; MCP_BRIDGE_PULL)" : "missing"}`,
    fix: hasImage || fallback ? undefined : adapter.imageHint(config.image),
  });
  if (!hasImage && !fallback) return report(checks, opts.json);

  const session = app.newSession({ engine: async () => ({ adapter, info: await adapter.probe() }) });
  try {
    const t0 = performance.now();
    const outcome = await session.run({ code: PROBE_SCRIPT, timeoutSec: 60 });
    const ms = Math.round(performance.now() - t0);
    if (outcome.error || outcome.value === undefined) {
      checks.push({
        name: "sandbox start",
        ok: false,
        detail: outcome.error?.message ?? "no probe result",
        fix: "the sandbox started but its python3 could not run the probe: unset MCP_BRIDGE_IMAGE for the default sandbox image (`mcp-code-exec image pull`, or `image build` with no registry), or use an image with Python 3.9+",
      });
    } else {
      const probe = JSON.parse(pyToJson(outcome.value)) as ProbeReport;
      checks.push({
        name: "sandbox start",
        ok: true,
        detail: `started and answered in ${ms} ms (${config.ociRuntime ? `runtime ${config.ociRuntime}` : "engine default runtime"}; ${channelNote(probe.channel, adapter.name, isGvisor(config.ociRuntime), config.channel)})`,
      });
      checks.push(...verifyFlags(probe, app, isGvisor(config.ociRuntime)));
      const seccompProfile = seccompProfilePath(config.stateDir, { gvisor: isGvisor(config.ociRuntime) });
      checks.push(...(await speedChecks({ chosen: engines.chosen, available: engines.available, config, env: app.env, seccompProfile })));
    }
  } catch (err) {
    checks.push({
      name: "sandbox start",
      ok: false,
      detail: renderError(err),
      fix:
        (err instanceof BridgeError && err.hint) ||
        `\`${adapter.name} run --rm ${config.image} true\` shows whether any container starts on this engine`,
    });
  } finally {
    await session.close();
  }
  return report(checks, opts.json);
}

/** How frames reach the sandbox, as doctor says it: straight over a socket, or through the engine's relay. */
function channelNote(channel: ProbeReport["channel"], engine: string, gvisor: boolean, chosen: "auto" | "stdio"): string {
  if (channel === "socket") return "frames over a socket straight to the sandbox";
  const why =
    chosen === "stdio"
      ? ", as MCP_BRIDGE_CHANNEL=stdio asks"
      : gvisor
        ? ": gVisor does not let the bridge's socket in"
        : engine === "docker"
          ? ", not a socket: a remote or VM daemon, or a policy such as SELinux refusing it (the log at DEBUG says which)"
          : "";
  return `frames through ${engine}'s stdin/stdout relay${why}`;
}

/** The probe's trailing expression is a dict repr; turn Python literals into JSON. */
function pyToJson(repr: string): string {
  return repr
    .replace(/'/g, '"')
    .replace(/\bTrue\b/g, "true")
    .replace(/\bFalse\b/g, "false")
    .replace(/\bNone\b/g, "null")
    .replace(/\(/g, "[")
    .replace(/\)/g, "]");
}

interface ProbeReport {
  uid: number;
  gid: number;
  cap_eff: string | null;
  no_new_privs: string | null;
  seccomp: string | null;
  root_writable: boolean;
  tmp_writable: boolean;
  interfaces: string[] | null;
  network: string;
  memory_limit: string | null;
  pids_limit: string | null;
  cpu_max: string;
  tmp_bytes: number;
  shm_bytes: number;
  nofile: [number, number];
  nproc: [number, number];
  env: string[];
  unshare_errno: number;
  ppid: number;
  init_comm: string | null;
  /** What the protocol runs over: a socket the engine passed or mounted, or the engine's stdin/stdout. */
  channel?: "socket" | "stdio";
}

export function verifyFlags(p: ProbeReport, app: Pick<App, "config">, gvisor = false): Check[] {
  const { config } = app;
  // gVisor's guest kernel does not show seccomp, no_new_privs or cgroup files; the engine applies
  // them to the sandbox process on the host, outside the guest.
  const outside = (name: string, what: string): Check => ({
    name,
    ok: true,
    detail: `not visible inside gVisor (${what}); applied by the engine outside the guest kernel`,
  });
  const [uid, gid] = config.user.split(":").map(Number);
  const memBytes = parseSize(config.memory);
  const mem = p.memory_limit === null || p.memory_limit === "max" ? undefined : Number(p.memory_limit);
  const rootlessHint =
    "rootless podman on a cgroup v1 host cannot enforce this: run the bridge as root, or move the host to cgroup v2 with systemd";
  const ignored = (flag: string) =>
    `the engine ignored ${flag}: update it (podman ≥ 4, docker ≥ 20.10), or pick another with MCP_BRIDGE_RUNTIME`;
  const check = (name: string, ok: boolean, detail: string, fix: string): Check => (ok ? { name, ok, detail } : { name, ok, detail, fix });
  const ourInit = p.ppid === 1 && /^python/.test(p.init_comm ?? "");
  return [
    check(
      "init (PID 1)",
      ourInit,
      ourInit
        ? "the sandbox's own init (PID 1) reaps orphans, enforces the lifetime cap and ends the sandbox when the bridge goes; no engine init helper (catatonit, tini) is needed, so none is used"
        : `PID 1 is ${p.init_comm ?? "unknown"} and the interpreter's parent is ${p.ppid}: something started its own init before the sandbox's`,
      "remove --init (or an init of your own) from the engine's flags or your adapter: the sandbox brings its own",
    ),
    check(
      "unprivileged user",
      p.uid === uid && p.gid === (gid ?? uid),
      `uid=${p.uid} gid=${p.gid}`,
      `${ignored("--user")}; MCP_BRIDGE_CONTAINER_USER is ${config.user}`,
    ),
    check("no capabilities", /^0+$/.test(p.cap_eff ?? ""), `CapEff=${p.cap_eff}`, ignored("--cap-drop ALL")),
    gvisor && p.no_new_privs === null
      ? outside("no-new-privileges", "NoNewPrivs absent")
      : check("no-new-privileges", p.no_new_privs === "1", `NoNewPrivs=${p.no_new_privs}`, ignored("--security-opt no-new-privileges")),
    gvisor
      ? outside("seccomp", `Seccomp=${p.seccomp}`)
      : check(
          "seccomp",
          p.seccomp === "2",
          `Seccomp=${p.seccomp} (2 = filter)`,
          "the engine runs without a seccomp filter: use an engine built with seccomp support (`podman info` / `docker info` list it)",
        ),
    check(
      "seccomp profile",
      p.unshare_errno !== 0,
      p.unshare_errno === 0
        ? "unshare(CLONE_NEWUSER) succeeded: the bridge's profile is not applied"
        : `unshare(CLONE_NEWUSER) refused (errno ${p.unshare_errno})`,
      ignored("--security-opt seccomp=PROFILE"),
    ),
    check("read-only root", !p.root_writable, p.root_writable ? "/ is writable" : "/ is read-only", ignored("--read-only")),
    check(
      "writable /tmp tmpfs",
      p.tmp_writable && p.tmp_bytes <= parseSize(config.tmpfsSize) * 1.05,
      `${mib(p.tmp_bytes)} (limit ${config.tmpfsSize})`,
      `${ignored("--tmpfs /tmp:size=…")}; the size comes from MCP_BRIDGE_TMPFS_SIZE`,
    ),
    check(
      "sized /dev/shm",
      p.shm_bytes <= parseSize(config.shmSize) * 1.05,
      `${mib(p.shm_bytes)} (limit ${config.shmSize})`,
      `${ignored("--shm-size")}; the size comes from MCP_BRIDGE_SHM_SIZE`,
    ),
    check(
      "no network",
      p.network !== "connected" && (p.interfaces ?? []).every((i) => i === "lo"),
      `interfaces=${JSON.stringify(p.interfaces)}; connect: ${p.network}`,
      `${ignored("--network none")}; or add gVisor (MCP_BRIDGE_OCI_RUNTIME=runsc)`,
    ),
    gvisor && mem === undefined
      ? outside("memory limit", "no cgroup files")
      : check(
          "memory limit",
          mem !== undefined && mem <= memBytes * 1.05,
          `cgroup limit ${p.memory_limit} (want ${config.memory})`,
          mem === undefined ? rootlessHint : `${ignored("--memory")}; the size comes from MCP_BRIDGE_MEMORY`,
        ),
    gvisor && p.pids_limit === null
      ? outside("pids limit", "no cgroup files")
      : check(
          "pids limit",
          p.pids_limit !== null && p.pids_limit !== "max" && Number(p.pids_limit) <= config.pids,
          `pids.max=${p.pids_limit} (want ${config.pids})`,
          p.pids_limit === "max" || p.pids_limit === null ? rootlessHint : ignored("--pids-limit"),
        ),
    gvisor && p.cpu_max.includes("?")
      ? outside("cpu limit", "no cgroup files")
      : check(
          "cpu limit",
          /^\d+ \d+$/.test(p.cpu_max),
          `cpu quota/period ${p.cpu_max} (want ${config.cpus})`,
          `${ignored("--cpus")}; the host may lack the cpu cgroup controller`,
        ),
    check(
      "ulimits",
      p.nofile[1] <= 1024 && p.nproc[1] <= 1024,
      `nofile=${p.nofile.join(":")} nproc=${p.nproc.join(":")}`,
      ignored("--ulimit"),
    ),
    check(
      "environment allow-list",
      p.env.every((k) => ALLOWED_ENV.has(k)),
      p.env.join(" "),
      `the image sets variables that reach user code (${p.env.filter((k) => !ALLOWED_ENV.has(k)).join(", ")}): use an image without them, e.g. the default sandbox image (\`mcp-code-exec image build\`)`,
    ),
  ];
}

const ALLOWED_ENV = new Set([
  "HOME",
  "TMPDIR",
  "LANG",
  "PYTHONDONTWRITEBYTECODE",
  "PYTHONUNBUFFERED",
  "MPLBACKEND",
  "MPLCONFIGDIR",
  "PATH",
  "HOSTNAME",
  "container",
  "GPG_KEY",
  "PYTHON_VERSION",
  "PYTHON_SHA256",
  "LC_CTYPE",
  "TERM",
]);

/** Whether the state dir takes a file (what it keeps: caches, the audit log, skills, sign-ins). */
export function stateDirCheck(stateDir: string): Check {
  const problem = writeProblem(stateDir);
  if (problem === undefined) return { name: "state dir", ok: true, detail: `${stateDir} is writable` };
  return {
    name: "state dir",
    ok: false,
    detail: `${stateDir} cannot be written (${problem}): sandboxes still start (their seccomp profile goes to a temporary folder), but the audit log, skills, sign-in tokens and caches are not kept`,
    fix: "free some disk space there, or set MCP_BRIDGE_STATE_DIR to a folder this user can write",
  };
}

function hostChecks(): Check[] {
  const out: Check[] = [];
  const v2 = existsSync("/sys/fs/cgroup/cgroup.controllers");
  const unified = existsSync("/sys/fs/cgroup/unified");
  if (process.platform === "linux") {
    out.push({ name: "cgroups", ok: true, detail: v2 ? "cgroup v2 (unified)" : unified ? "hybrid cgroup v1/v2" : "cgroup v1" });
  }
  return out;
}

function podmanHints(details: Record<string, string>): Check[] {
  const out: Check[] = [];
  const conf = readFileSafe("/etc/containers/containers.conf");
  if (details.cgroupVersion === "v1" && details.ociRuntime === "crun") {
    out.push({
      name: "podman OCI runtime",
      ok: false,
      detail: 'podman uses crun on a cgroup v1 host; crun fails here with "cgroups in hybrid mode not supported"',
      fix: 'apt-get install runc, then in /etc/containers/containers.conf set [engine] runtime = "runc" and cgroup_manager = "cgroupfs"',
    });
  }
  if (details.rootless === "true" && details.cgroupVersion === "v1") {
    out.push({
      name: "podman rootless",
      ok: false,
      detail: "rootless podman on cgroup v1 does not enforce memory or pids limits",
      fix: "run the bridge as root or use cgroup v2",
    });
  }
  if (conf !== undefined && !/default_ulimits/.test(conf)) {
    out.push({
      name: "podman ulimits",
      ok: true,
      detail: "the bridge passes explicit --ulimit nofile/nproc (podman's defaults fail without CAP_SYS_RESOURCE)",
    });
  }
  return out;
}

function readFileSafe(p: string): string | undefined {
  try {
    return readFileSync(p, "utf8");
  } catch {
    return undefined;
  }
}

function mib(n: number): string {
  return `${(n / 1024 / 1024).toFixed(0)} MiB`;
}

function report(checks: Check[], json?: boolean): number {
  const ok = checks.every((c) => c.ok);
  if (json) {
    process.stdout.write(`${JSON.stringify({ ok, checks }, null, 2)}\n`);
  } else {
    for (const c of checks) {
      process.stdout.write(`${c.skipped ? "skip" : c.ok ? "ok  " : "FAIL"}  ${c.name}: ${c.detail}\n`);
      if (!c.ok && c.fix) process.stdout.write(`      fix: ${c.fix}\n`);
      if (c.ok && c.tip) process.stdout.write(`      tip: ${c.tip}\n`);
    }
    process.stdout.write(ok ? "\nAll checks passed.\n" : "\nSome checks failed: see the fixes above.\n");
  }
  return ok ? 0 : 1;
}
