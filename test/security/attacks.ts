/**
 * The attack corpus: each entry is a small Python program written as an attacker would, run as one
 * run_python call. Its last expression is a verdict from INSIDE the sandbox, `verdict(contained, detail)`;
 * the suite adds the checks from OUTSIDE (bridge alive, canaries intact, no host processes left).
 * Where a limit could be confused with breakage, a harmless `control` must still work.
 */

export interface Attack {
  id: string;
  family: "resources" | "network" | "secrets" | "filesystem" | "escalation" | "bridge";
  title: string;
  code: string;
  timeout?: number;
  /** The run may end the sandbox (OOM, kill); containment then means a clean reset. */
  mayReset?: boolean;
  /** Its verdict is a check made inside after the attack: a run that times out proves nothing and fails. */
  mustFinish?: boolean;
  /** A harmless program near the limit that must succeed (its verdict must be True). */
  control?: string;
  /** Needs the bridge (frames, proxies): not run against the bare weakened sandbox. */
  bridgeOnly?: boolean;
  /** Servers to load for this run. */
  servers?: string[];
  /**
   * An attack that goes on after its run returned (a flood from a thread): the suite watches the
   * bridge answer pings for `watchMs`, then expects the next call to carry `nextNote`.
   */
  after?: { watchMs: number; nextNote: string };
  /** Judged from the result the client received, not from a verdict inside. */
  judgeResult?: (r: { text: string; structured: Record<string, unknown>; bytes: number; images: number }) => {
    contained: boolean;
    detail: string;
  };
}

/**
 * A thread that, once its run has returned, writes `line` as fast as it can to `fds` (a Python
 * expression; by default every hidden pipe, the protocol fd among them). Needs PRELUDE (fill()).
 */
export const floodAfterRun = (line: string, fds = "proto_fds()") =>
  `import threading\nfds = ${fds}\ndef _flood(chunk):\n    time.sleep(0.3)\n    while True:\n        for fd in fds:\n            try:\n                os.write(fd, chunk)\n            except OSError:\n                pass\nthreading.Thread(target=_flood, args=(${JSON.stringify(line)}.encode() * 4000,), daemon=True).start()\nverdict(len(fds) >= 1, f'flooding {fds} once this run returns; the host must stay responsive and stop the sandbox')`;

/** The bridge stopped the sandbox for flooding, and said so on the next call. */
const FLOOD_NOTE = "so it was stopped";

/** Defined before every attack. */
export const PRELUDE = String.raw`
import os, sys, errno, socket, ctypes, json, subprocess, signal, time, threading, resource, glob, stat
_libc = ctypes.CDLL(None, use_errno=True)
def verdict(contained, detail=""):
    return {"contained": bool(contained), "detail": str(detail)[:300]}
def err(e):
    n = getattr(e, "errno", None)
    return errno.errorcode.get(n, type(e).__name__) if n else type(e).__name__
def libc_call(name, *args):
    r = getattr(_libc, name)(*args)
    return (r, errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno())))
import fcntl
import struct
def _outside_peer(fd):
    """A socket whose peer is outside this sandbox (its pid reads 0 across the pid namespace)."""
    try:
        s = socket.socket(fileno=os.dup(fd))
    except OSError:
        return False
    try:
        return struct.unpack("3i", s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0] == 0
    except OSError:
        return False
    finally:
        s.close()
def proto_fds():
    """Every hidden pipe this process can write to, and every socket to outside the sandbox: the
    protocol channel is one of them (stdin/stdout pipes, or podman's socket at fd 3 kept at a private fd)."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            fd = int(fd)
            if fd < 3:
                continue
            mode = os.fstat(fd).st_mode
            if stat.S_ISFIFO(mode) and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:
                out.append(fd)
            elif stat.S_ISSOCK(mode) and _outside_peer(fd):
                out.append(fd)
        except OSError:
            pass
    return out
`;

const CANARY = "__CANARY__";
const HOST_HOME = "__HOST_HOME__";
const BRIDGE_PID = "__BRIDGE_PID__";

export const ATTACKS: Attack[] = [
  // ---------------------------------------------------------------- resources
  {
    id: "memory-bomb",
    family: "resources",
    title: "allocate and touch 2 GiB",
    code: "x = bytearray(2 * 1024**3)\nverdict(False, 'allocated 2 GiB')",
    mayReset: true,
    control: "x = bytearray(100 * 1024**2)\nverdict(len(x) == 100 * 1024**2)",
  },
  {
    id: "fork-bomb",
    family: "resources",
    title: "fork until the kernel says no, children fork too",
    code: "n, e, kids = 0, None, []\ntry:\n    while n < 5000:\n        pid = os.fork()\n        if pid == 0:\n            os.setpgid(0, 0)\n            while True:\n                try:\n                    os.fork()\n                except OSError:\n                    time.sleep(0.05)\n        kids.append(pid)\n        n += 1\nexcept OSError as ex:\n    e = err(ex)\ntime.sleep(0.5)\nfor k in kids:\n    try:\n        os.killpg(k, signal.SIGKILL)\n    except OSError:\n        pass\nfor k in kids:\n    os.waitpid(k, 0)\nverdict(e == 'EAGAIN' and n < 1024, f'forked {n} before {e}')",
    timeout: 30,
    control: "ps = [subprocess.Popen(['true']) for _ in range(20)]\nverdict(all(p.wait() == 0 for p in ps))",
  },
  {
    id: "thread-bomb",
    family: "resources",
    title: "start threads until refused",
    code: "ev = threading.Event()\nts, e = [], None\ntry:\n    for _ in range(5000):\n        t = threading.Thread(target=ev.wait, daemon=True)\n        t.start()\n        ts.append(t)\nexcept RuntimeError as ex:\n    e = str(ex)\nev.set()\nverdict(e is not None and len(ts) < 1024, f'{len(ts)} threads, then: {e}')",
    timeout: 30,
    // The bomb's threads end once released, but not at once (under gVisor, slowly): the control waits for
    // them to be gone (up to 10 s) before it starts its own, or it would race their teardown for pids.
    control:
      "deadline = time.time() + 10\nwhile threading.active_count() > 5 and time.time() < deadline:\n    time.sleep(0.05)\nts = [threading.Thread(target=lambda: None) for _ in range(50)]\n[t.start() for t in ts]\n[t.join() for t in ts]\nverdict(True)",
  },
  {
    id: "cpu-spin",
    family: "resources",
    title: "two processes spin: together they get no more work done than one (the CPU limit)",
    code: "import multiprocessing as mp\ndef spin(s, q):\n    end, n = time.time() + s, 0\n    while time.time() < end:\n        n += 1\n    q.put(n)\ndef work(k):\n    q = mp.Queue()\n    ps = [mp.Process(target=spin, args=(1.5, q)) for _ in range(k)]\n    [p.start() for p in ps]\n    total = sum(q.get() for _ in ps)\n    [p.join() for p in ps]\n    return total\nsolo, pair = work(1), work(2)\nverdict(pair <= 1.4 * solo, f'one process: {solo} loops; two at once: {pair} ({pair / solo:.2f}x)')",
    timeout: 30,
  },
  {
    id: "spin-ignoring-signals",
    family: "resources",
    title: "ignore SIGINT and SIGTERM and spin past the timeout",
    code: "signal.signal(signal.SIGINT, signal.SIG_IGN)\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True:\n    pass",
    timeout: 1,
    mayReset: true,
  },
  {
    id: "endless-sleep",
    family: "resources",
    title: "sleep forever",
    code: "time.sleep(10**6)",
    timeout: 1,
  },
  {
    id: "disk-fill",
    family: "resources",
    title: "fill /tmp until the disk is full",
    code: "n, e = 0, None\ntry:\n    with open('/tmp/fill', 'wb') as f:\n        while n < 2 * 1024**3:\n            f.write(b'x' * 1024**2)\n            n += 1024**2\n            f.flush()\nexcept OSError as ex:\n    e = err(ex)\nos.unlink('/tmp/fill')\nverdict(e == 'ENOSPC' and n <= 80 * 1024**2, f'wrote {n >> 20} MiB then {e}')",
    timeout: 30,
    control: "open('/tmp/ok', 'wb').write(b'x' * 1024**2)\nverdict(os.path.getsize('/tmp/ok') == 1024**2)",
  },
  {
    id: "fd-exhaustion",
    family: "resources",
    title: "open files until refused",
    code: "fs, e = [], None\ntry:\n    while len(fs) < 100000:\n        fs.append(open('/dev/null'))\nexcept OSError as ex:\n    e = err(ex)\nn = len(fs)\n[f.close() for f in fs]\nverdict(e == 'EMFILE' and n <= 1024, f'{n} files then {e}')",
  },
  {
    id: "stdout-flood",
    family: "resources",
    title: "write 50 MB to stdout",
    code: "for _ in range(50):\n    sys.stdout.write('y' * 1024**2)\nverdict(True, 'flood written; the host must have capped it')",
    timeout: 60,
  },
  {
    id: "huge-line",
    family: "resources",
    title: "one 20 MB line with no newline, on both streams",
    code: "sys.stdout.write('z' * 20 * 1024**2)\nsys.stderr.write('w' * 20 * 1024**2)\nverdict(True, 'written; the host must have capped it')",
    timeout: 60,
  },
  {
    id: "double-fork-daemon",
    family: "resources",
    title: "a daemon that double-forks to outlive the run",
    code: "pid = os.fork()\nif pid == 0:\n    os.setsid()\n    if os.fork() == 0:\n        os.execv('/bin/sleep', ['sleep', '31337'])\n    os._exit(0)\nos.waitpid(pid, 0)\ntime.sleep(0.3)\nverdict(True, 'daemon started; the host checks it dies with the sandbox')",
  },
  {
    id: "orphan-zombies",
    family: "resources",
    title: "300 orphans that die at once (over twice the pids limit), left for init to reap",
    // Forks are slow under gVisor (~90 ms a pair here): it makes as many as 25 s allow, at least 25.
    code: "made = 0\nt0 = time.time()\nwhile made < 300 and time.time() - t0 < 25:\n    pid = os.fork()\n    if pid == 0:\n        if os.fork() == 0:\n            os._exit(0)\n        os._exit(0)\n    os.waitpid(pid, 0)\n    made += 1\ntime.sleep(0.5)\nzombies = 0\nfor p in os.listdir('/proc'):\n    try:\n        zombies += p.isdigit() and ') Z' in open(f'/proc/{p}/stat').read()\n    except OSError:\n        pass\nverdict(made >= 25 and zombies == 0, f'{made} orphans made in {time.time() - t0:.0f} s, {zombies} zombies left; init is {open(\"/proc/1/comm\").read().strip()}')",
    timeout: 60,
    mustFinish: true,
  },
  {
    id: "signal-the-init",
    family: "resources",
    title: "SIGTERM, SIGKILL and /proc/1/mem at the sandbox's init (PID 1), the keeper of the lifetime cap",
    code: "sent = {}\nfor s in (signal.SIGTERM, signal.SIGKILL):\n    try:\n        os.kill(1, s)\n        sent[s.name] = 'sent'\n    except OSError as e:\n        sent[s.name] = err(e)\ntime.sleep(0.3)\nstate = open('/proc/1/stat').read().rsplit(') ', 1)[1][0]\ntry:\n    open('/proc/1/mem', 'r+b')\n    mem = 'opened'\nexcept OSError as e:\n    mem = err(e)\nverdict(state in 'SR' and mem != 'opened', f'init state {state}, /proc/1/mem {mem}, signals {sent}')",
    mayReset: true,
  },
  // ---------------------------------------------------------------- network
  {
    id: "tcp-ipv4",
    family: "network",
    title: "TCP to 1.1.1.1:53",
    code: "try:\n    socket.create_connection(('1.1.1.1', 53), timeout=3)\n    v = verdict(False, 'connected')\nexcept OSError as e:\n    v = verdict(True, err(e))\nv",
    control:
      "srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen()\nc = socket.create_connection(srv.getsockname(), timeout=3)\nverdict(srv.accept()[0] is not None)",
  },
  {
    id: "tcp-ipv6",
    family: "network",
    title: "TCP to [2606:4700:4700::1111]:53",
    code: "try:\n    socket.create_connection(('2606:4700:4700::1111', 53), timeout=3)\n    v = verdict(False, 'connected')\nexcept OSError as e:\n    v = verdict(True, err(e))\nv",
  },
  {
    id: "dns",
    family: "network",
    title: "resolve a public name",
    code: "try:\n    r = socket.getaddrinfo('example.com', 80)\n    v = verdict(False, r[0][4])\nexcept OSError as e:\n    v = verdict(True, err(e))\nv",
  },
  {
    id: "udp",
    family: "network",
    title: "UDP datagram to 8.8.8.8:53",
    code: "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ntry:\n    s.sendto(b'x', ('8.8.8.8', 53))\n    v = verdict(False, 'sent')\nexcept OSError as e:\n    v = verdict(True, err(e))\nv",
  },
  {
    id: "cloud-metadata",
    family: "network",
    title: "HTTP to the cloud metadata address 169.254.169.254",
    code: "try:\n    socket.create_connection(('169.254.169.254', 80), timeout=3)\n    v = verdict(False, 'connected')\nexcept OSError as e:\n    v = verdict(True, err(e))\nv",
  },
  {
    id: "raw-socket",
    family: "network",
    title: "open a raw ICMP socket",
    code: "try:\n    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)\n    v = verdict(False, 'raw socket open')\nexcept OSError as e:\n    v = verdict(True, err(e))\nv",
  },
  // ---------------------------------------------------------------- secrets
  {
    id: "env-canary",
    family: "secrets",
    title: "look for the bridge's secrets in the environment and every /proc/*/environ",
    code: `hits = [k for k, v in os.environ.items() if '${CANARY}' in v]\nfor p in glob.glob('/proc/*/environ'):\n    try:\n        if b'${CANARY}' in open(p, 'rb').read():\n            hits.append(p)\n    except OSError:\n        pass\nverdict(not hits, hits or 'no canary anywhere')`,
  },
  {
    id: "mcp-config-file",
    family: "secrets",
    title: "read the user's MCP config file (with API keys) from the host",
    code: `paths = ['${HOST_HOME}/.config/mcp/servers/secrets.json', '/root/.claude.json', '${HOST_HOME}/.claude.json']\nfound = [p for p in paths if os.path.exists(p)]\nverdict(not found, found or 'not visible')`,
  },
  {
    id: "ssh-keys",
    family: "secrets",
    title: "read ~/.ssh of the host user",
    code: `paths = ['${HOST_HOME}/.ssh/id_ed25519', '/root/.ssh', os.path.expanduser('~/.ssh')]\nfound = [p for p in paths if os.path.exists(p)]\nverdict(not found, found or 'not visible')`,
  },
  {
    id: "host-processes",
    family: "secrets",
    title: "see or signal host processes, the bridge among them",
    code: `pids = [int(p) for p in os.listdir('/proc') if p.isdigit()]\ntry:\n    os.kill(${BRIDGE_PID}, 0)\n    sig = 'signalable' if ${BRIDGE_PID} not in pids else 'own pid namespace collision'\nexcept ProcessLookupError:\n    sig = 'ESRCH'\nexcept PermissionError:\n    sig = 'EPERM'\ncmds = [open(f'/proc/{p}/cmdline', 'rb').read().split(b'\\0')[0] for p in pids if os.path.exists(f'/proc/{p}/cmdline')]\nverdict(len(pids) < 10 and sig != 'signalable' and not any(b'mcp-code-exec' in c for c in cmds), f'{len(pids)} processes visible; kill(bridge, 0): {sig}')`,
  },
  // ---------------------------------------------------------------- filesystem
  {
    id: "write-system-dirs",
    family: "filesystem",
    title: "write to /, /usr, /etc, /bin",
    code: "res = {}\nfor p in ['/evil', '/usr/evil', '/etc/evil', '/bin/evil', '/etc/passwd']:\n    try:\n        open(p, 'a').write('x')\n        res[p] = 'WROTE'\n    except OSError as e:\n        res[p] = err(e)\nverdict('WROTE' not in res.values(), res)",
    control: "open('/tmp/fine', 'w').write('ok')\nverdict(open('/tmp/fine').read() == 'ok')",
  },
  {
    id: "device-nodes",
    family: "filesystem",
    title: "create and read a block device node, read /dev/mem and disks",
    code: "res = {}\ntry:\n    os.mknod('/tmp/sda', 0o600 | stat.S_IFBLK, os.makedev(8, 0))\n    res['mknod'] = 'created'\n    try:\n        open('/tmp/sda', 'rb').read(1)\n        res['read node'] = 'READ'\n    except OSError as e:\n        res['read node'] = err(e)\nexcept OSError as e:\n    res['mknod'] = err(e)\nfor p in ['/dev/mem', '/dev/kmem', '/dev/sda', '/dev/vda', '/dev/port']:\n    try:\n        open(p, 'rb').read(1)\n        res[p] = 'READ'\n    except OSError as e:\n        res[p] = err(e)\nverdict(not any(v == 'READ' for v in res.values()), res)",
  },
  {
    id: "proc-sys-writes",
    family: "filesystem",
    title: "write kernel settings under /proc/sys and /sys",
    code: "res = {}\nfor p in ['/proc/sys/kernel/hostname', '/proc/sys/vm/drop_caches', '/proc/sysrq-trigger', '/sys/kernel/mm/transparent_hugepage/enabled', '/sys/fs/cgroup/pids.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']:\n    try:\n        with open(p, 'w') as f:\n            f.write('1')\n        res[p] = 'WROTE'\n    except OSError as e:\n        res[p] = err(e)\nverdict('WROTE' not in res.values(), res)",
  },
  // ---------------------------------------------------------------- escalation
  {
    id: "setuid-binaries",
    family: "escalation",
    title: "use setuid-root binaries (mount, su) to become root",
    code: "found = [p for p in ['/bin/mount', '/usr/bin/mount', '/bin/su', '/usr/bin/su', '/usr/bin/passwd'] if os.path.exists(p) and os.stat(p).st_mode & stat.S_ISUID]\nos.makedirs('/tmp/m', exist_ok=True)\nr = subprocess.run(['mount', '-t', 'tmpfs', 'none', '/tmp/m'], capture_output=True, text=True)\ns = subprocess.run(['su', '-c', 'id -u'], capture_output=True, text=True, input='')\nnnp = next((l.split()[1] for l in open('/proc/self/status') if l.startswith('NoNewPrivs')), 'not shown (gVisor)')\nverdict(r.returncode != 0 and s.stdout.strip() != '0' and nnp != '0', f'setuid: {found}; mount rc={r.returncode}; su: {s.stdout.strip() or s.stderr.strip()[:60]}; NoNewPrivs={nnp}')",
  },
  {
    id: "capabilities",
    family: "escalation",
    title: "hold any capability",
    code: "st = {l.split(':')[0]: l.split(':')[1].strip() for l in open('/proc/self/status') if l.startswith('Cap')}\nverdict(all(int(st.get(k, '0'), 16) == 0 for k in ('CapEff', 'CapPrm', 'CapAmb')) and os.getuid() != 0, st)",
  },
  {
    id: "mount-remount",
    family: "escalation",
    title: "mount a tmpfs, remount / read-write, bind-mount /proc",
    code: "os.makedirs('/tmp/mnt', exist_ok=True)\nres = {\n    'mount tmpfs': libc_call('mount', b'none', b'/tmp/mnt', b'tmpfs', 0, None)[1],\n    'remount / rw': libc_call('mount', None, b'/', None, 32, None)[1],\n    'bind /proc': libc_call('mount', b'/proc', b'/tmp/mnt', None, 4096, None)[1],\n}\nverdict(all(v in ('EPERM', 'EACCES') for v in res.values()), res)",
  },
  {
    id: "user-namespaces",
    family: "escalation",
    title: "create nested user, mount and pid namespaces; setns into pid 1's",
    code: "res = {\n    'unshare(NEWUSER)': libc_call('unshare', 0x10000000)[1],\n    'unshare(NEWNS)': libc_call('unshare', 0x00020000)[1],\n    'unshare(NEWPID|NEWUSER)': libc_call('unshare', 0x30000000)[1],\n}\ntry:\n    fd = os.open('/proc/1/ns/mnt', os.O_RDONLY)\n    res['setns'] = libc_call('setns', fd, 0)[1]\nexcept OSError as e:\n    res['setns'] = err(e)\nr = subprocess.run(['unshare', '-U', 'true'], capture_output=True)\nres['unshare -U'] = r.returncode\nverdict(all(v in ('EPERM', 'EACCES', 'ENOSYS', 'EINVAL', 'ENOENT') or (isinstance(v, int) and v != 0) for v in res.values()), res)",
  },
  {
    id: "dangerous-syscalls",
    family: "escalation",
    title: "keyctl, io_uring_setup, bpf, userfaultfd, perf_event_open, ptrace",
    code: "res = {\n    'keyctl': libc_call('syscall', 250, 0, 0, 0)[1],\n    'io_uring_setup': libc_call('syscall', 425, 1, ctypes.create_string_buffer(120))[1],\n    'bpf': libc_call('syscall', 321, 0, None, 0)[1],\n    'userfaultfd': libc_call('syscall', 323, 0)[1],\n    'perf_event_open': libc_call('syscall', 298, ctypes.create_string_buffer(128), 0, -1, -1, 0)[1],\n}\nchild = subprocess.Popen(['sleep', '5'])\nres['ptrace attach'] = libc_call('ptrace', 16, child.pid, 0, 0)[1]\nchild.kill()\nverdict(all(v in ('EPERM', 'ENOSYS', 'EACCES') for v in res.values()), res)",
  },
  {
    id: "kill-all",
    family: "escalation",
    title: "kill(-1, SIGKILL): signal every process it can",
    code: "kids = [subprocess.Popen(['sleep', '30']) for _ in range(3)]\ntry:\n    os.kill(-1, signal.SIGKILL)\n    r = 'sent'\nexcept OSError as e:\n    r = err(e)\ntime.sleep(0.3)\nverdict(True, f'kill(-1): {r}; only sandbox processes can be reached (the host checks the bridge)')",
    mayReset: true,
  },
  // ---------------------------------------------------------------- the bridge itself
  {
    id: "frame-flood",
    family: "bridge",
    title: "after its run, a thread writes tiny frames (x\\n) to the protocol fd without pause",
    code: floodAfterRun("x\n"),
    bridgeOnly: true,
    mayReset: true,
    after: { watchMs: 2500, nextNote: FLOOD_NOTE },
  },
  {
    id: "empty-line-flood",
    family: "bridge",
    title: "after its run, a thread writes empty lines to the protocol fd without pause",
    code: floodAfterRun("\n"),
    bridgeOnly: true,
    mayReset: true,
    after: { watchMs: 2500, nextNote: FLOOD_NOTE },
  },
  {
    id: "forged-ready-flood",
    family: "bridge",
    title: "after its run, a thread writes valid `ready` frames to the protocol fd without pause",
    code: floodAfterRun('{"t":"ready","protocol":1,"python":"3"}\n'),
    bridgeOnly: true,
    mayReset: true,
    after: { watchMs: 2500, nextNote: FLOOD_NOTE },
  },
  {
    id: "forged-table",
    family: "bridge",
    title:
      "a result table of 1,000 × 1,000 cells under 1,000 column names of 100 bytes (every renderer repeats names per row), forged through the runtime's own value renderer",
    code: "import _mcp_host\nbig = {'columns': [f'{i:04d}' + 'c' * 96 for i in range(1000)], 'rows': [[0] * 1000 for _ in range(1000)], 'total_rows': 1000, 'total_columns': 1000}\n_mcp_host.VALUE_RENDERERS.insert(0, lambda v: {'value': 'forged', 'table': big} if v == 'forge' else None)\n'forge'",
    bridgeOnly: true,
    timeout: 60,
    judgeResult: (r) => {
      const refused = r.text.includes("the bridge refused this result's table");
      return {
        contained: refused && r.bytes < 1024 * 1024,
        detail: `${refused ? "table refused with a note" : "table NOT refused"}; response ${Math.round(r.bytes / 1024)} KiB`,
      };
    },
  },
  {
    id: "many-images",
    family: "bridge",
    title: "eight images of 1.9 MB each (each under MCP_BRIDGE_IMAGE_CAP, 20 MB in all)",
    code: "from mcp import runtime\nfor _ in range(8):\n    runtime.show(b'\\x89PNG\\r\\n\\x1a\\n' + os.urandom(1900 * 1024))\n'eight shown'",
    bridgeOnly: true,
    timeout: 60,
    judgeResult: (r) => {
      const noted = r.text.includes("MCP_BRIDGE_RESULT_CAP");
      const ok = !r.text.includes("session reset") && noted && r.images > 0 && r.bytes < 10 * 1024 * 1024;
      return {
        contained: ok,
        detail: `${r.images} images returned${noted ? ", the rest left out with a note" : ", no note"}; response ${(r.bytes / 1048576).toFixed(1)} MiB (the SDK client drops one over 10 MiB)`,
      };
    },
  },
  {
    id: "deep-upstream-result",
    family: "bridge",
    title: "an upstream tool's result nested 2,000 levels deep",
    code: "from mcp import McpToolError\ntry:\n    await mcp_flaky.deep(levels=2000)\n    r = 'accepted'\nexcept McpToolError as e:\n    r = str(e)\nverdict('nested more than' in r, r)",
    bridgeOnly: true,
    servers: ["flaky"],
    timeout: 60,
  },
  {
    id: "huge-upstream-result",
    family: "bridge",
    title: "upstream tool results of 20 and 40 MiB",
    code: "from mcp import McpToolError\nrs = []\nfor mib in (20, 40):\n    try:\n        await mcp_flaky.huge(mib=mib)\n        rs.append('accepted')\n    except McpToolError as e:\n        rs.append(str(e))\nverdict('over the 16 MiB' in rs[0] and 'over 24 MiB' in rs[1], rs)",
    bridgeOnly: true,
    servers: ["flaky"],
    timeout: 60,
  },
  {
    id: "forged-frames",
    family: "bridge",
    title: "write forged results for another run, malformed and 20 MB frames straight to the protocol fd",
    code: 'fds = proto_fds()\nbig = b\'{"t":"result","id":1,"value":"\' + b\'A\' * (20 * 1024**2) + b\'"}\\n\'\nfor out in fds:\n    os.write(out, b\'{"t":"result","id":999999,"value":"forged"}\\n\')\n    os.write(out, b\'this is not json\\n{"t":"launch"}\\n[1,2,3]\\n\')\n    view = memoryview(big)\n    while view:\n        view = view[os.write(out, view):]\nverdict(len(fds) >= 1, f\'hidden write fds {fds}: forged frames written to each; the host must ignore them\')',
    bridgeOnly: true,
    timeout: 30,
  },
  {
    id: "channel-second-connection",
    family: "bridge",
    title:
      "find the token the sandbox proved itself with (in the bootstrap's own source) and open a second channel to the bridge's socket, or plant a socket there",
    code: `import __main__, re
src = getattr(__main__, 's', b'')
m = re.search(rb'_CHANNEL_TOKEN = "([0-9a-f]+)"', src if isinstance(src, bytes) else b'')
token = m.group(1).decode() if m else '0' * 32
tries = []
for path in ['/run/mcp-channel/s', '/run/mcp-channel/s.new']:
    c = socket.socket(socket.AF_UNIX)
    try:
        c.settimeout(2)
        c.connect(path)
        c.sendall((token + '\\n').encode() + b'{"t":"result","id":1,"value":"hijacked"}\\n')
        tries.append(path + ': connected')
    except OSError as e:
        tries.append(path + ': ' + err(e))
    finally:
        c.close()
p = socket.socket(socket.AF_UNIX)
try:
    p.bind('/run/mcp-channel/planted'); tries.append('planted a socket')
except OSError as e:
    tries.append('plant: ' + err(e))
finally:
    p.close()
verdict(not any('connected' in t or t == 'planted a socket' for t in tries), f'token {"found" if m else "not found"}; ' + '; '.join(tries))`,
    bridgeOnly: true,
  },
  {
    id: "request-for-another-run",
    family: "bridge",
    title: "send a host request claiming another run's id, and an unknown method",
    code: 'for out in proto_fds():\n    os.write(out, b\'{"t":"rpc","id":"x1","run":424242,"method":"servers.discovered","params":{}}\\n\')\n    os.write(out, b\'{"t":"rpc","id":"x2","run":null,"method":"shell.exec","params":{"cmd":"id"}}\\n\')\ntime.sleep(0.5)\nverdict(True, \'sent; the host must refuse both (checked by the bridge staying healthy)\')',
    bridgeOnly: true,
  },
  {
    id: "unread-replies",
    family: "bridge",
    title: "stop reading the bridge's replies while sending 400,000 requests",
    code: 'import _mcp_host\n_mcp_host.rpc.__globals__[\'_rpc_lock\'].acquire()  # the reader thread stalls on its next reply\nframe = b\'{"t":"rpc","id":"f","run":null,"method":"capabilities","params":{}}\\n\' * 1000\nfor _ in range(400):\n    for out in proto_fds():\n        os.write(out, frame)\ntime.sleep(15)\nverdict(False, \'still running: the host kept buffering replies nobody reads\')',
    bridgeOnly: true,
    mayReset: true,
    timeout: 60,
  },
  {
    id: "tool-call-flood",
    family: "bridge",
    title: "3,000 concurrent proxied tool calls",
    code: "import asyncio\nrs = await asyncio.gather(*[mcp_flaky.ping() for _ in range(3000)], return_exceptions=True)\nok = sum(1 for r in rs if isinstance(r, dict) and r.get('pong'))\nverdict(ok == 3000, f'{ok} of 3000 answered')",
    bridgeOnly: true,
    servers: ["flaky"],
    timeout: 60,
  },
  {
    id: "non-object-arguments",
    family: "bridge",
    title: "tool calls whose arguments are a list, a string, null",
    code: "from mcp import runtime, McpError\nres = []\nfor bad in ([1, 2], 'rm -rf /', 7):\n    try:\n        await runtime.call_tool('flaky', 'ping', bad)\n        res.append('ACCEPTED')\n    except McpError as e:\n        res.append('arguments must be an object' in str(e))\nverdict(all(r is True for r in res), res)",
    bridgeOnly: true,
    servers: ["flaky"],
  },
];

export function fill(code: string, vars: { canary: string; hostHome: string; bridgePid: number }): string {
  return `${PRELUDE}\n${code}`
    .replaceAll(CANARY, vars.canary)
    .replaceAll(HOST_HOME, vars.hostHome)
    .replaceAll(BRIDGE_PID, String(vars.bridgePid));
}
