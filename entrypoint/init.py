# mcp-code-exec sandbox init. Runs INSIDE the container, before anything else, stdlib only.
#
# The container's first process forks here. The child returns and becomes the Python interpreter
# (interpreter.py follows this file in the same source). The parent stays behind as the container's init,
# out of the reach of the code the interpreter runs:
#   - it reaps every orphan reparented to it, so zombies never hold pids-limit slots (the interpreter's
#     own children stay the interpreter's: user code that waits for its subprocesses still gets them);
#   - it ends the container when its stdin hangs up (the bridge is gone), at the lifetime cap, or when
#     the interpreter exits, whatever user code does to the interpreter;
#   - as PID 1 of the container's pid namespace, the kernel drops every signal sent to it from inside
#     that has no handler here (SIGKILL and SIGSTOP included), and it is not dumpable, so same-uid code
#     cannot ptrace it or write its memory through /proc.
# No engine init helper (catatonit, tini, docker-init) is needed: nothing is required on the host.
import os as _os
import sys as _sys


def _open_channel(arg):
    """The fd the protocol runs over (None: stdin/stdout), from argv[2]: an fd the engine passed, or the
    path of the bridge's socket (src/host/socket-channel.ts). The socket is connected here, before the
    fork, and proven with the token that came on stdin; when it cannot be reached the frames stay on
    stdin/stdout, which the bridge also reads until the first frame."""
    if arg is None:
        return None
    if arg.isdigit():
        return int(arg)
    import socket

    token = globals().pop("_CHANNEL_TOKEN", "")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(5)
        s.connect(arg)
        s.sendall((token + "\n").encode())
        s.settimeout(None)
        return s.detach()
    except OSError as e:
        s.close()
        _diag("the bridge's socket is unreachable (%s): frames go over stdin/stdout" % e)
        return None


def _init_main(lifetime_s, channel_fd):
    import select
    import signal
    import time

    deadline = time.monotonic() + lifetime_s
    wake_r, wake_w = _os.pipe()
    _os.set_blocking(wake_w, False)
    _os.set_inheritable(wake_r, False)
    _os.set_inheritable(wake_w, False)
    # Only SIGCHLD has a handler (it wakes the poll below); every other signal from inside is dropped.
    signal.signal(signal.SIGCHLD, lambda _s, _f: None)
    signal.set_wakeup_fd(wake_w)
    child = _os.fork()
    if child == 0:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        _os.close(wake_r)
        _os.close(wake_w)
        return
    pid1 = _os.getpid() == 1
    if not pid1:
        # Under an engine-provided init (or on a developer's machine), orphans of the interpreter still
        # come here rather than to a process that may not reap them.
        _prctl(36, 1)  # PR_SET_CHILD_SUBREAPER
    _prctl(4, 0)  # PR_SET_DUMPABLE: no ptrace, no /proc/1/mem from same-uid code
    null = _os.open("/dev/null", _os.O_RDWR)
    _os.dup2(null, 1)  # init never writes to the protocol channel
    _os.close(null)
    poller = select.poll()
    poller.register(wake_r, select.POLLIN)
    # Not POLLIN: the interpreter reads the data. A hang-up (no writer left) means the bridge is gone: on
    # stdin, and on the channel the bridge handed in when there is one (argv[2]).
    hangup = select.POLLHUP | select.POLLERR | getattr(select, "POLLRDHUP", 0)
    for fd in {0, 0 if channel_fd is None else channel_fd}:
        poller.register(fd, hangup)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            _finish(child, 137, "lifetime cap reached (MCP_BRIDGE_CONTAINER_LIFETIME): stopping the sandbox")
        try:
            events = poller.poll(min(left, 3600.0) * 1000)
        except InterruptedError:
            events = []
        for fd, ev in events:
            if fd == wake_r:
                try:
                    _os.read(wake_r, 4096)
                except BlockingIOError:
                    pass
            elif ev & (select.POLLHUP | select.POLLERR | select.POLLNVAL | getattr(select, "POLLRDHUP", 0)):
                _finish(child, 0, "stdin hung up (the bridge is gone): stopping the sandbox")
        while True:
            try:
                pid, status = _os.waitpid(-1, _os.WNOHANG)
            except ChildProcessError:
                pid = 0
            if pid == 0:
                break
            if pid == child:
                _child_exited(status)


def _child_exited(status):
    if _os.WIFSIGNALED(status):
        sig = _os.WTERMSIG(status)
        oom = _oom_kills()
        _diag("interpreter killed by signal %d%s" % (sig, "; oom_kills=%d" % oom if oom is not None else ""))
        _os._exit(128 + sig)
    _os._exit(_os.WEXITSTATUS(status) if _os.WIFEXITED(status) else 1)


def _finish(child, code, why):
    _diag(why)
    if _os.getpid() != 1:
        # As PID 1, exiting ends every process in the namespace; otherwise stop the interpreter ourselves.
        try:
            _os.kill(child, 9)
        except OSError:
            pass
    _os._exit(code)


def _oom_kills():
    """OOM kills counted by the container's memory cgroup (v2, then v1), or None when unreadable."""
    for path in ("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"):
        try:
            with open(path) as f:
                for line in f:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        except (OSError, ValueError):
            continue
    return None


def _prctl(option, arg):
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(option, arg, 0, 0, 0)
    except Exception:
        pass


def _diag(msg):
    try:
        _os.write(2, ("[sandbox-init] " + msg + "\n").encode())
    except OSError:
        pass


_CHANNEL_FD = _open_channel(_sys.argv[2] if len(_sys.argv) > 2 else None)
_init_main(float(_sys.argv[1]) if len(_sys.argv) > 1 else 8 * 3600.0, _CHANNEL_FD)
del _init_main, _child_exited, _finish, _oom_kills, _prctl, _diag
