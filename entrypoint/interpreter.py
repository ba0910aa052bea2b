# mcp-code-exec sandbox interpreter: the persistent Python process that runs the code. INSIDE the container, stdlib only.
#
# The host sends this file over the container's stdin (see src/sandbox/bootstrap.ts) and then speaks
# newline-delimited JSON frames on the same pipe. Before any user code runs, the protocol moves to
# private, close-on-exec file descriptors and fds 0/1/2 are repointed (0 at /dev/null, 1 and 2 at
# capture pipes), so nothing user code prints, whether from Python, a C extension or a subprocess,
# can reach the protocol channel. Frames are documented in src/sandbox/frames.ts; the frame kinds,
# request methods and error kinds arrive with this file as PROTOCOL (src/sandbox/protocol.ts).
# Only what every start needs is imported here: asyncio (with ssl, typing, concurrent.futures and
# logging behind it) costs more than the rest of the start together, so it is imported by the first
# cell that awaits, or while the sandbox sits idle (_preload_when_idle), whichever comes first.
import _ast
import fcntl
import io
import json
import linecache
import os
import queue
import signal
import sys
import termios
import threading
import types

BOOT = globals().get("_BOOT") or {}  # wall-clock marks of this start (src/sandbox/bootstrap.ts), debug only
BOOT["imported"] = __import__("time").time()
PROTOCOL_VERSION = PROTOCOL["version"]  # noqa: F821 - defined before this file by the host
ENTRYPOINT_FILE = "<mcp-entrypoint>"
INTERNAL_FILES = (ENTRYPOINT_FILE, "<mcp>", "<_mcp_display>", "<mcp-signature>", "<_mcp_packages>")
MAX_VALUE_CHARS = 64 * 1024


def _private_fd(fd):
    """Duplicate fd to a high, close-on-exec descriptor so user code does not stumble on it."""
    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 200)


# The channel init.py opened from argv[2] (an fd the engine passed, or the bridge's socket: no engine
# relay in between), else stdin/stdout.
CHANNEL_FD = _CHANNEL_FD  # noqa: F821 - set by init.py, which precedes this file
PROTO_IN = _private_fd(0 if CHANNEL_FD is None else CHANNEL_FD)
PROTO_OUT = _private_fd(1 if CHANNEL_FD is None else CHANNEL_FD)
DIAG = _private_fd(2)  # the container's real stderr: host-side log only, never user output
if CHANNEL_FD is not None:
    os.close(CHANNEL_FD)  # only the private copies stay: user code and subprocesses never see fd 3

_null = os.open("/dev/null", os.O_RDONLY)
os.dup2(_null, 0)
os.close(_null)

_send_lock = threading.Lock()


def send(frame):
    data = (json.dumps(frame, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n").encode(
        "utf-8", "replace"
    )
    # An interrupt raised in the middle of the write loop would leave half a frame on the channel, and
    # the host would reject the next one glued to it: on the main thread, SIGINT waits for the frame.
    held = _hold_sigint()
    try:
        with _send_lock:
            view = memoryview(data)
            while view:
                n = os.write(PROTO_OUT, view)
                view = view[n:]
    finally:
        _release_sigint(held)


# SIGINT (an interrupt of the running code) held back while the main thread writes or handles frames:
# [depth of the sections it is in, whether one arrived meanwhile]. Held by our handler, not with a
# signal mask: no system call per frame.
_SIGINT_HOLD = [0, False]


def _hold_sigint():
    """Holds SIGINT back on the main thread; returns what _release_sigint needs (None: nothing held)."""
    if threading.get_ident() != MAIN_THREAD:
        return None
    if signal.getsignal(signal.SIGINT) is not _on_sigint:
        # Code replaced our handler (or ignores SIGINT): only a signal mask holds its handler back.
        return signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    _SIGINT_HOLD[0] += 1
    return True


def _release_sigint(held):
    if held is None:
        return
    if held is not True:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)  # as the code had it
        return
    _SIGINT_HOLD[0] -= 1
    if _SIGINT_HOLD[0] == 0 and _SIGINT_HOLD[1]:
        _SIGINT_HOLD[1] = False
        if CURRENT["id"] is not None:
            raise KeyboardInterrupt


def diag(msg):
    try:
        os.write(DIAG, ("[sandbox] " + msg + "\n").encode("utf-8", "replace"))
    except OSError:
        pass


def _pending_bytes(fd):
    """Bytes waiting in a pipe (FIONREAD)."""
    try:
        return int.from_bytes(fcntl.ioctl(fd, FIONREAD, b"\0\0\0\0"), sys.byteorder, signed=True)
    except OSError:
        return 0


FIONREAD = getattr(termios, "FIONREAD", 0x541B)


class Capture:
    """One capture pipe, keeping at most `cap` bytes per run and counting the rest.

    Bytes are only ever read from the pipe while holding `lock`: a thread drains it while code runs
    (so a writer never blocks on a full pipe, and streamed output goes out as it comes), and at the end
    of a run the main thread takes the lock and reads exactly what the pipe held at that moment, so the
    run's output is complete without waiting for the thread to catch up (no marker, no handoff)."""

    def __init__(self, target_fd, name):
        self.name = name
        r, w = os.pipe()
        os.dup2(w, target_fd)  # dup2 leaves target_fd inheritable: subprocesses write here too
        os.close(w)
        self.fd = r
        os.set_inheritable(r, False)
        os.set_blocking(r, False)  # the read end only: writers (user code, subprocesses) still block
        self.lock = threading.Lock()
        self.cap = 64 * 1024
        self.buf = bytearray()
        self.dropped = 0
        self.stream_to = None
        threading.Thread(target=self._drain, name="capture-" + name, daemon=True).start()

    def start_run(self, cap, stream_to=None):
        with self.lock:
            self.cap = cap
            self.buf = bytearray()
            self.dropped = 0
            self.stream_to = stream_to

    def _keep(self, data):
        room = self.cap - len(self.buf)
        if room > 0:
            kept = data[:room]
            self.buf += kept
            if self.stream_to is not None and kept:
                # Progress for clients that asked for it: what is kept is also streamed, as it arrives.
                try:
                    send({"t": "output", "id": self.stream_to, "stream": self.name, "text": kept.decode("utf-8", "replace")})
                except OSError:
                    pass
        if len(data) > room:
            self.dropped += len(data) - max(room, 0)

    def _drain(self):
        import select

        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        while True:
            try:
                poller.poll()
            except InterruptedError:
                continue
            with self.lock:
                try:
                    chunk = os.read(self.fd, 65536)  # one chunk per turn: the main thread may be waiting
                except (BlockingIOError, InterruptedError):
                    continue  # the main thread read it first
                if not chunk:
                    return  # every writer is gone
                self._keep(chunk)

    def finish_run(self):
        """Everything written to the stream before this call, as (text, dropped); the pipe is left empty
        of it. Bytes a writer adds meanwhile (a subprocess still running) belong to the next run."""
        with self.lock:
            left = _pending_bytes(self.fd)
            while left > 0:
                try:
                    chunk = os.read(self.fd, min(left, 65536))
                except InterruptedError:
                    continue
                except BlockingIOError:
                    break
                if not chunk:
                    break
                left -= len(chunk)
                self._keep(chunk)
            self.stream_to = None
            data = bytes(self.buf)
            dropped = self.dropped
            self.buf = bytearray()
            self.dropped = 0
        return data.decode("utf-8", "replace"), dropped


sys.stdout.flush()
sys.stderr.flush()
CAPTURES = {"stdout": Capture(1, "stdout"), "stderr": Capture(2, "stderr")}
sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="replace", line_buffering=True)
sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="replace", line_buffering=True)
sys.__stdout__ = sys.stdout
sys.__stderr__ = sys.stderr
sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")


# ---------------------------------------------------------------------------------------------------
# Host RPC: requests from the sandbox to the host (tool calls, discovery). Replies resolve either an
# asyncio future (async helpers) or a threading event (sync helpers), whoever reads them (below).

class HostError(Exception):
    """The host refused or failed a request from the sandbox."""


_rpc_lock = threading.Lock()
_rpc_next = [0]
_rpc_pending = {}
MAIN_LOOP = None  # the session's persistent event loop, made by main_loop() when first needed


def main_loop():
    """The session's event loop: the one user code already set, else a new one, set as current."""
    global MAIN_LOOP
    if MAIN_LOOP is None:
        import asyncio
        import warnings

        loop = None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            try:
                loop = asyncio.get_event_loop()  # a loop user code made with `import asyncio` itself
            except RuntimeError:
                pass
        if loop is None or loop.is_closed() or loop.is_running():
            loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        if CAN_PEEK:
            loop.add_reader(PROTO_IN, _loop_reads)
        MAIN_LOOP = loop
    return MAIN_LOOP


def _rpc_register(waiter):
    with _rpc_lock:
        _rpc_next[0] += 1
        rid = "r%d" % _rpc_next[0]
        _rpc_pending[rid] = waiter
    return rid


def _rpc_frame(rid, method, params):
    frame = {"t": "rpc", "id": rid, "run": CURRENT["id"], "method": method, "params": params}
    try:
        send(frame)
    except ValueError as exc:  # NaN or Infinity in the arguments
        with _rpc_lock:
            _rpc_pending.pop(rid, None)
        raise HostError("arguments are not valid JSON: %s" % exc) from None


async def rpc(method, params):
    import asyncio

    loop = asyncio.get_running_loop()
    fut = loop.create_future()
    rid = _rpc_register(("async", loop, fut))
    _rpc_frame(rid, method, params)
    try:
        return await fut
    finally:
        with _rpc_lock:
            _rpc_pending.pop(rid, None)


def rpc_sync(method, params, timeout=None):
    box = {}
    ev = threading.Event()
    rid = _rpc_register(("sync", ev, box))
    # Called from async code, the session's loop is blocked here until the reply comes: this (main)
    # thread reads the channel itself meanwhile. Elsewhere nobody's event loop reads the reply: the
    # reader thread reads it at once (woken if it only looks now and then, while the loop reads).
    reads_itself = CAN_PEEK and LOOP_READING[0] and threading.get_ident() == MAIN_THREAD
    if not reads_itself:
        with _rpc_lock:
            SYNC_WAITERS[0] += 1
        if LOOP_READING[0]:
            _wake_reader()
    try:
        _rpc_frame(rid, method, params)
        if not (_read_until(ev, timeout) if reads_itself else ev.wait(timeout)):
            raise TimeoutError("host did not answer %s" % method)
    finally:
        with _rpc_lock:
            if not reads_itself:
                SYNC_WAITERS[0] -= 1
            _rpc_pending.pop(rid, None)
    if "error" in box:
        raise box["error"]
    return box["value"]


ERROR_FACTORIES = {}


def _reply_error(err):
    kind = err.get("kind") if isinstance(err, dict) else None
    factory = ERROR_FACTORIES.get(kind)
    if factory is not None:
        return factory(err)
    msg = err.get("message") if isinstance(err, dict) else str(err)
    return HostError(str(msg))


def _resolve_rpc(frame):
    with _rpc_lock:
        waiter = _rpc_pending.pop(frame.get("id"), None)
    if waiter is None:
        return
    ok = frame.get("ok") is True
    value = frame.get("value")
    error = None if ok else _reply_error(frame.get("error") or {})
    if waiter[0] == "async":
        _, loop, fut = waiter

        def settle():
            if fut.done():
                return
            if ok:
                fut.set_result(value)
            else:
                fut.set_exception(error)

        if threading.get_ident() == MAIN_THREAD and LOOP_READING[0] and loop is MAIN_LOOP:
            settle()  # read by the loop itself (_loop_reads): no thread to wake
        else:
            loop.call_soon_threadsafe(settle)
    else:
        _, ev, box = waiter
        if ok:
            box["value"] = value
        else:
            box["error"] = error
        ev.set()


# ---------------------------------------------------------------------------------------------------
# Runs: the main thread executes cells; the reader thread queues them and delivers interrupts.

RUNS = queue.Queue()
# last: highest run id started; sigint_seen: the run our SIGINT handler last ran in (see _reinterrupt)
CURRENT = {"id": None, "interrupted": False, "last": 0, "sigint_seen": None}
EARLY_INTERRUPTS = set()  # runs interrupted before they started
_interrupt_lock = threading.Lock()
MAIN_THREAD = threading.main_thread().ident


# Frames from the host are read by the reader thread, and by the session's event loop while it runs (an
# async run awaiting replies): the loop then takes a reply itself and wakes no thread, and the thread
# only steps in for what the loop leaves waiting (reader()). A _sync helper called from async code reads
# on the main thread while its loop is blocked (_read_until). Each reads only while holding _read_lock and
# only the bytes FIONREAD says are there (never blocking the loop), and handles the frames in the order read.
_read_lock = threading.Lock()
_rbuf = bytearray()
_rscanned = [0]  # bytes of _rbuf already known to hold no newline: large frames stay linear


def _can_peek():
    try:
        fcntl.ioctl(PROTO_IN, FIONREAD, b"\0\0\0\0")
        return True
    except OSError:
        return False


CAN_PEEK = _can_peek()  # the event loop may share the reading (without FIONREAD the thread alone reads)


def _take(chunk):
    """Handle every complete frame in what was read (with _read_lock held)."""
    buf = _rbuf
    buf += chunk
    while True:
        nl = buf.find(b"\n", _rscanned[0])
        if nl < 0:
            _rscanned[0] = len(buf)
            return
        line = bytes(buf[:nl])
        del buf[: nl + 1]
        _rscanned[0] = 0
        # Nothing the host relays may stop this loop: a reply nested too deep for json (RecursionError)
        # or any other surprise fails that one request, never the session.
        try:
            frame = json.loads(line)
        except Exception as exc:  # noqa: BLE001 - ValueError, RecursionError, MemoryError
            _unreadable_reply(line, exc)
            continue
        try:
            handle_host_frame(frame)
        except Exception as exc:  # noqa: BLE001
            diag("host frame not handled: %r" % (exc,))


def _loop_reads():
    """The event loop's turn (and a _sync helper's, _read_until): what is there now, unless the thread is
    reading. SIGINT waits until the frames read are handled (an interrupt frame among them raises in the
    main thread)."""
    if not _read_lock.acquire(blocking=False):
        return
    held = _hold_sigint()
    try:
        n = _pending_bytes(PROTO_IN)
        if n > 0:
            _take(os.read(PROTO_IN, min(n, 1 << 16)))
            LOOP_READS[0] += 1
        elif _hung_up():
            os._exit(0)  # the host is gone: nothing can ever read our results again
    finally:
        _read_lock.release()
        _release_sigint(held)


def _read_until(ev, timeout):
    """Read the channel on the main thread until `ev` is set or `timeout` (s) passes; whether it was set.
    Looks at `ev` at least every LOOK_S, in case the reader thread took the reply."""
    import time

    poller = _channel_poll()
    end = None if timeout is None else time.monotonic() + timeout
    while not ev.is_set():
        left = LOOK_S if end is None else min(LOOK_S, end - time.monotonic())
        if left <= 0:
            return False
        if poller.poll(left * 1000):
            _loop_reads()
    return True


_CHANNEL_POLLS = {}  # thread -> a poll object on the channel (two threads may not poll one object at once)


def _channel_poll():
    p = _CHANNEL_POLLS.get(threading.get_ident())
    if p is None:
        import select

        p = select.poll()
        p.register(PROTO_IN, select.POLLIN)
        _CHANNEL_POLLS[threading.get_ident()] = p
    return p


LOOP_READING = [False]  # the session's loop is running and reads the channel too
LOOP_READS = [0]  # times the loop has read frames: the reader thread tells a busy loop from a blocked one
SYNC_WAITERS = [0]  # threads waiting for a reply in rpc_sync: no event loop reads those replies
LOOK_S = 0.01  # while the loop reads, how often the reader thread looks for frames the loop left waiting

# Wakes the reader thread out of its wait when who reads changes (the loop stops reading, a thread
# waits in rpc_sync): an eventfd the thread polls (a pipe before Python 3.10). Not a pipe where there is a
# choice: code that writes to every pipe it finds would fill it and meet EAGAIN; an eventfd it writes to
# only makes the thread look once more.
def _wake_fds():
    if hasattr(os, "eventfd"):
        raw = (os.eventfd(0, os.EFD_NONBLOCK),)
    else:
        raw = os.pipe2(os.O_NONBLOCK)
    private = tuple(_private_fd(fd) for fd in raw)
    for fd in raw:
        os.close(fd)
    return private[0], private[-1]


_WAKE_R, _WAKE_W = _wake_fds()
_WAKE_ONE = (1).to_bytes(8, sys.byteorder)  # what an eventfd takes; a pipe takes it as well


def _wake_reader():
    try:
        os.write(_WAKE_W, _WAKE_ONE)
    except OSError:  # full: the thread has a wake-up waiting already
        pass


def _loop_serves():
    """The session's loop reads the channel, and no thread waits on a reply only the reader thread reads."""
    return CAN_PEEK and LOOP_READING[0] and not SYNC_WAITERS[0]


def reader():
    """Reads host frames whenever the session's event loop does not. While the loop reads (an async run
    awaiting replies) the thread does not wake for each frame: it looks every LOOK_S and reads only what
    has waited there a whole look without the loop reading (code that blocks the loop), so interrupts
    still arrive."""
    import select

    both = select.poll()
    both.register(PROTO_IN, select.POLLIN)
    both.register(_WAKE_R, select.POLLIN)
    wake_only = select.poll()
    wake_only.register(_WAKE_R, select.POLLIN)
    seen = None  # LOOP_READS at the last look that found bytes waiting
    while True:
        looking = _loop_serves()
        try:
            ready = (wake_only.poll(LOOK_S * 1000) if looking else both.poll(_reinterrupt_wait())) if CAN_PEEK else ()
        except InterruptedError:
            continue
        if REINTERRUPT[0] is not None:
            _reinterrupt()
        if any(fd == _WAKE_R for fd, _ in ready):
            try:
                os.read(_WAKE_R, 512)
            except OSError:
                pass
        if _loop_serves():
            if not looking or (_pending_bytes(PROTO_IN) == 0 and not _hung_up()):
                seen = None  # the loop reads what comes (or nothing waits)
                continue
            if seen != LOOP_READS[0]:
                seen = LOOP_READS[0]  # waiting now: the loop gets until the next look
                continue
        elif CAN_PEEK and not any(fd == PROTO_IN for fd, _ in ready):
            continue
        seen = None
        with _read_lock:
            try:
                n = _pending_bytes(PROTO_IN) if CAN_PEEK else 1 << 16
                if n == 0:
                    if not _hung_up():
                        continue  # the loop took it
                    n = 1 << 16  # readable with nothing pending: the end of the stream
                chunk = os.read(PROTO_IN, min(n, 1 << 16))
            except InterruptedError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                # The host is gone: nothing can ever read our results again.
                os._exit(0)
            _take(chunk)


def _hung_up():
    """The channel is readable with nothing in it: the host closed it."""
    return bool(_channel_poll().poll(0))


def _unreadable_reply(line, exc):
    """A reply that cannot be decoded still ends the request that waits for it (its id comes first)."""
    diag("unreadable frame from host: %s" % type(exc).__name__)
    head = line[:64].decode("utf-8", "replace")
    prefix = '{"t":"rpc_result","id":"'
    if head.startswith(prefix):
        rid = head[len(prefix):].split('"', 1)[0]
        _resolve_rpc({"id": rid, "ok": False, "error": {"kind": "protocol", "message": "the reply could not be decoded in the sandbox (%s); the tool's result is too deep or too large" % type(exc).__name__}})


# A SIGINT that lands after the code last looked for signals but before it blocks in a system call
# (time.sleep, a lock, a read: the window is widest right where the code lets go of the GIL, which is
# when this thread gets it to deliver the interrupt) runs only the C-level handler: Python's runs when
# that call returns, maybe in minutes, and the host would kill the sandbox first. So until our handler
# has run in the interrupted run, the reader sends SIGINT again every REINTERRUPT_EVERY_S: the blocked
# call then fails with EINTR and Python runs the handler. Pending signals coalesce: the code still gets
# one KeyboardInterrupt. Code that installed its own SIGINT handler decides for itself.
REINTERRUPT = [None, 0.0]  # run id still to be interrupted, until when to keep trying
REINTERRUPT_EVERY_S = PROTOCOL["interrupt"]["reinterrupt_every_ms"] / 1000  # noqa: F821
REINTERRUPT_FOR_S = PROTOCOL["interrupt"]["reinterrupt_for_ms"] / 1000  # noqa: F821 - within the host's grace_ms


def _monotonic():
    import time

    return time.monotonic()


def _reinterrupt_wait():
    """How long the reader may wait for frames (ms; None: until one comes)."""
    return None if REINTERRUPT[0] is None else REINTERRUPT_EVERY_S * 1000


def _reinterrupt():
    """Called by the reader thread at least every REINTERRUPT_EVERY_S while an interrupt is pending."""
    with _interrupt_lock:
        rid = REINTERRUPT[0]
        if rid is None:
            return
        if CURRENT["id"] != rid or CURRENT["sigint_seen"] == rid or _monotonic() > REINTERRUPT[1]:
            REINTERRUPT[0] = None
            return
        if signal.getsignal(signal.SIGINT) is _on_sigint:
            signal.pthread_kill(MAIN_THREAD, signal.SIGINT)


def _on_interrupt(frame):
    with _interrupt_lock:
        if CURRENT["id"] is not None and frame.get("id") == CURRENT["id"]:
            CURRENT["interrupted"] = True
            CURRENT["sigint_seen"] = None  # set again when our handler runs after this
            signal.pthread_kill(MAIN_THREAD, signal.SIGINT)
            REINTERRUPT[0] = CURRENT["id"]
            REINTERRUPT[1] = _monotonic() + REINTERRUPT_FOR_S
            _wake_reader()  # handled on the main thread (the loop's reads), the reader may be waiting with no timeout
        elif isinstance(frame.get("id"), int) and frame["id"] > CURRENT["last"] and len(EARLY_INTERRUPTS) < 1000:
            # The run has not started yet (still queued here): it must not start at all.
            EARLY_INTERRUPTS.add(frame["id"])


# One handler per host frame kind in PROTOCOL["host_frames"].
HOST_FRAME_HANDLERS = {"exec": lambda frame: RUNS.put(frame), "interrupt": _on_interrupt, "rpc_result": lambda frame: _resolve_rpc(frame)}


def handle_host_frame(frame):
    handler = HOST_FRAME_HANDLERS.get(frame.get("t")) if isinstance(frame, dict) else None
    if handler is None:
        diag("unknown frame from host")
        return
    handler(frame)


class _Builtins(dict):
    """Builtins with a say in unknown names: `mcp_github` without servers=["github"] explains itself."""

    def __missing__(self, name):
        for hook in MISSING_NAME_HOOKS:
            hook(name)
        raise KeyError(name)


MISSING_NAME_HOOKS = []  # (name) -> raise a helpful NameError, or return to fall through
RESULT_HOOKS = []  # (result dict) -> add images, files, notes at the end of a run


def user_globals():
    import builtins

    return {"__name__": "__main__", "__builtins__": _Builtins(builtins.__dict__)}


def _install_modules():
    """Modules that arrive with this file in EMBEDDED_MODULES (name -> source), installed in order:
    _mcp_display (entrypoint/display.py), the `mcp` package (entrypoint/mcp_package.py), then
    _mcp_packages (entrypoint/packages.py: runtime.packages(), runtime.install())."""
    modules = globals().get("EMBEDDED_MODULES") or {}
    import types

    host = types.ModuleType("_mcp_host")
    host.rpc = rpc
    host.rpc_sync = rpc_sync
    host.ERROR_FACTORIES = ERROR_FACTORIES
    host.PROTOCOL = PROTOCOL  # noqa: F821
    host.HOST_FRAME_HANDLERS = HOST_FRAME_HANDLERS
    host.RUN_HOOKS = RUN_HOOKS
    host.MISSING_NAME_HOOKS = MISSING_NAME_HOOKS
    host.RESULT_HOOKS = RESULT_HOOKS
    host.VALUE_RENDERERS = VALUE_RENDERERS
    host.KNOWN_SERVERS = {}
    host.user_globals_dict = lambda: G
    sys.modules["_mcp_host"] = host
    for name, source in modules.items():
        mod = types.ModuleType(name)
        if name == "mcp":
            mod.__doc__ = "MCP servers configured for this bridge, callable from code."
            mod.__path__ = []
        mod.__file__ = "<%s>" % name
        sys.modules[name] = mod
        exec(compile(source, "<%s>" % name, "exec"), mod.__dict__)

RUN_HOOKS = []  # called with the exec frame before user code runs (e.g. to load proxies)
VALUE_RENDERERS = []  # (value) -> dict | None; first non-None wins
G = {}
CELL_COUNTER = [0]


def _compile_cell(code):
    CELL_COUNTER[0] += 1
    filename = "<cell-%d>" % CELL_COUNTER[0]
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    tree = compile(code, filename, "exec", _ast.PyCF_ONLY_AST, dont_inherit=True)
    last = None
    if tree.body and isinstance(tree.body[-1], _ast.Expr):
        last = _ast.Expression(tree.body.pop().value)
    flags = _ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    body = compile(tree, filename, "exec", flags=flags, dont_inherit=True)
    tail = compile(last, filename, "eval", flags=flags, dont_inherit=True) if last is not None else None
    return body, tail


def run_coroutine(coro):
    """Run a coroutine on the session's persistent loop; on interrupt, cancel it so it cannot resume later."""
    loop = main_loop()
    task = loop.create_task(coro)
    LOOP_READING[0] = True
    try:
        return loop.run_until_complete(task)
    except BaseException:
        if not task.done():
            task.cancel()
            try:
                loop.run_until_complete(task)
            except BaseException:
                pass
        raise
    finally:
        LOOP_READING[0] = False
        _wake_reader()  # the thread reads again until the loop next runs


CO_COROUTINE = 0x80  # inspect.CO_COROUTINE, without importing inspect


def _run_code(codeobj):
    result = eval(codeobj, G)
    if codeobj.co_flags & CO_COROUTINE:
        result = run_coroutine(result)
    return result


def _format_error(exc):
    import traceback

    te = traceback.TracebackException(type(exc), exc, exc.__traceback__, compact=True)
    # Drop the runtime's own frames: the model only needs its code's frames.
    te.stack = traceback.StackSummary.from_list(
        [f for f in te.stack if f.filename not in INTERNAL_FILES and "asyncio" not in f.filename]
    )
    return {
        "type": type(exc).__name__,
        "message": str(exc)[:MAX_VALUE_CHARS],
        "traceback": "".join(te.format())[-MAX_VALUE_CHARS:],
    }


def _render_value(value):
    for render in VALUE_RENDERERS:
        try:
            out = render(value)
        except Exception:
            out = None
        if out is not None:
            return out
    try:
        text = repr(value)
    except Exception as exc:
        text = "<unrepresentable %s: %s>" % (type(value).__name__, exc)
    if len(text) > MAX_VALUE_CHARS:
        text = text[:MAX_VALUE_CHARS] + "... [%d more chars]" % (len(text) - MAX_VALUE_CHARS)
    return {"value": text}


def run_one(frame):
    run_id = frame.get("id")
    code = frame.get("code")
    cap = frame.get("output_cap", 64 * 1024)
    with _interrupt_lock:
        if run_id in EARLY_INTERRUPTS:
            EARLY_INTERRUPTS.discard(run_id)
            send({"t": "result", "id": run_id, "error": {"type": "KeyboardInterrupt", "message": "interrupted before it started", "traceback": ""}})
            return
        CURRENT["id"] = run_id
        CURRENT["interrupted"] = False
        if isinstance(run_id, int):
            CURRENT["last"] = max(CURRENT["last"], run_id)
    stream_to = run_id if frame.get("stream") is True else None
    for c in CAPTURES.values():
        c.start_run(cap, stream_to)
    out = {"t": "result", "id": run_id}
    try:
        try:
            for hook in RUN_HOOKS:
                hook(frame)
            body, tail = _compile_cell(code if isinstance(code, str) else "")
            _run_code(body)
            if tail is not None:
                value = _run_code(tail)
                if isinstance(value, types.CoroutineType):  # a forgotten `await` on the last line
                    value = run_coroutine(value)
                if value is not None:
                    G["_"] = value
                    out.update(_render_value(value))
        except BaseException as exc:  # noqa: B036 - user code may raise anything, SystemExit included
            out["error"] = _format_error(exc)
            if isinstance(exc, KeyboardInterrupt):
                _forget_broken_imports()
        for hook in RESULT_HOOKS:
            try:
                hook(out)
            except BaseException as exc:  # an interrupt while a figure renders must not lose the run's output
                diag("result hook failed: %r" % (exc,))
    finally:
        CURRENT["id"] = None
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    for name in ("stdout", "stderr"):
        text, dropped = CAPTURES[name].finish_run()
        if text:
            out[name] = text
        if dropped:
            out[name + "_dropped"] = dropped
    send(out)


def _forget_broken_imports():
    """An interrupt in the middle of `import asyncio` leaves the submodules the package had loaded in
    sys.modules, but not the package: importing it again finds them without binding them to the new
    package (`from .base_events import *` then `base_events.__all__`: NameError), and the session could
    not import it again. Submodules whose package is gone are forgotten and imported afresh with it."""
    modules = sys.modules
    while True:
        orphans = [name for name in list(modules) if "." in name and name.rpartition(".")[0] not in modules]
        if not orphans:
            return
        for name in orphans:
            modules.pop(name, None)


def _on_sigint(signum, frame):
    CURRENT["sigint_seen"] = CURRENT["id"]
    # Interrupts are for running code only; one that arrives late is dropped.
    if CURRENT["id"] is not None:
        if _SIGINT_HOLD[0]:
            _SIGINT_HOLD[1] = True  # raised when the frame is written or handled (_release_sigint)
            return
        raise KeyboardInterrupt


PRELOAD_IDLE_S = 0.1  # idle this long (no run queued) before paying for imports a later run may need


def _preload():
    """Import asyncio and make the event loop while nothing runs, so a later `await` does not pay for it."""
    try:
        main_loop()
    except Exception as exc:
        diag("preload failed: %r" % (exc,))


def main():
    global G
    signal.signal(signal.SIGINT, _on_sigint)
    G = user_globals()
    _install_modules()
    threading.Thread(target=reader, name="protocol-reader", daemon=True).start()
    BOOT["ready"] = __import__("time").time()
    send({"t": "ready", "protocol": PROTOCOL_VERSION, "python": sys.version.split()[0], "boot": BOOT})
    preloaded = False
    while True:
        try:
            frame = RUNS.get(timeout=None if preloaded else PRELOAD_IDLE_S)
        except queue.Empty:
            preloaded = True
            _preload()
            continue
        try:
            run_one(frame)
        except KeyboardInterrupt:
            # An interrupt that landed between runs: report the run as interrupted.
            send({"t": "result", "id": frame.get("id"), "error": {"type": "KeyboardInterrupt", "message": "interrupted", "traceback": ""}})
        except BaseException as exc:  # never let the loop die with the session
            diag("runtime error: %r" % (exc,))
            try:
                send({"t": "result", "id": frame.get("id"), "error": _format_error(exc)})
            except BaseException:
                pass


main()
