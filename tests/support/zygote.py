"""Real `adapter` processes without paying the imports each time: forked from a warm parent.

A fresh `adapter sync` spends about 1.4 s of CPU importing (SQLAlchemy, rdflib, pydantic, the
pipeline) before it reads its first byte, `check-dataset` about 0.8 s; the hostile corpus
starts ~190 of them, so imports were most of the suite's CPU. A zygote is a small interpreter
that imports the command modules once and then forks one child per command. Each child is a
real process: a session of its own (killed as a group at the hard cap), the request's
arguments, environment, working directory, standard output and error; it calls the console
script's own entry point (`sys.exit(adapter.cli.main())`) and ends as the interpreter's
shutdown does (non-daemon threads joined, atexit handlers run, the streams flushed, the
command's garbage collected), an uncaught exception printed as a traceback. Its exit status,
CPU and peak RSS come from `wait4`, as for the launcher in tests/support/hostile.py.

What differs from `exec`: the imports are done (a child's CPU and wall time leave them out),
and so is the parse of DataONE search's queries (`PREPARE`: once per process, as an import),
its peak RSS starts at the zygote's (every command's imports: ~110 MB for the shared one,
more than a fresh `discover` has: stricter, never looser), and the interpreter's hash seed is the
zygote's. A child does not tear down the modules it shares with the zygote (`_end`): what
the command left in them is not finalized (every corpus run's output, exit status and store
files were the same either way). `random` reseeds in every child (`os.register_at_fork`).
Nothing the commands read from the environment is read at import (limits are read as a
command starts).

The zygote has no threads, so forking is safe; it watches its children with pidfds.

One zygote serves a whole run: under xdist the controller starts it (`serve_workers`, from
tests/conftest.py) listening on a socket whose address the workers inherit, and each
worker's `shared()` connects to it; requests and the news of their children travel on the
worker's own connection. Without xdist a process starts its own. Four workers each starting
one paid the same 1.8 CPU-s of imports four times.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[2]
# what `adapter check-dataset`, `discover` and `sync` import, at the top or as they start
WARM = (
    "adapter.cli",
    "adapter.commands.check",
    "adapter.commands.discover",
    "adapter.commands.sync",
    "adapter.sync.federation",
    "adapter.sync.run",
    "adapter.sync.checkpool",
    "adapter.store.db",
    "adapter.pipeline",
)

ADAPTER = str(Path(sys.executable).with_name("adapter"))  # the console script: argv[0]
# ... and what `adapter serve`, `web`, `worker` and `schedule` import as they start
SERVE = (
    *WARM,
    "adapter.commands.serve",
    "adapter.commands.web",
    "adapter.commands.worker",
    "adapter.commands.config",
    "adapter.api.app",
    "adapter.web.app",
    "adapter.service.metrics",
    "waitress",
    # the check page lists the finding catalogue, which imports every module of the package
    # (rdflib, Playwright's, COAR Notify's...), and compiles its templates: 1 CPU s a `web`
    # or `serve` child, done once here
    "adapter.findings:catalogue",
    "adapter.web.app:templates",
)
# what the corpus's processes do once before they check their first page, done here: a
# harvestable page's report parses DataONE search's 32 SPARQL patterns, ~0.5 s of CPU
# (pyparsing) that every corpus `check-dataset` paid again after its imports
PREPARE = ("adapter.dataone.index.compute:parse_queries",)
SHARED = (*SERVE, *PREPARE)  # the shared zygote's: every command's
ADDRESS = "ADAPTER_TEST_ZYGOTE"  # where the run's shared zygote listens (`serve_workers`)

# CPU of the ended children of every zygote not yet closed, for tests/support/timing.py: they
# are the zygote's children, so RUSAGE_CHILDREN here counts them only once the zygote itself
# is reaped (with its own CPU), and `close` then takes them out of this sum
CHILDREN_CPU = 0.0
_children_lock = threading.Lock()
_shared: Zygote | None = None
_alive: set[Zygote] = set()
_shared_lock = threading.Lock()


def _count_children(seconds: float) -> None:
    global CHILDREN_CPU
    with _children_lock:
        CHILDREN_CPU += seconds


def pids() -> set[int]:
    """The zygotes this process started and has not closed (their children are not its)."""
    return {z.proc.pid for z in list(_alive) if z.proc is not None}


def shared() -> Zygote:
    """This test process's one zygote, with every command's imports and `PREPARE` done
    (connected at the first call, closed at exit): the run's own when `serve_workers`
    started one (`ADDRESS` in the environment), else one of this process's. One a run, not
    one a user: the hostile corpus's parts each started their own (1.3 CPU-s of imports and
    query parsing apiece) beside every xdist worker's (1.8 CPU-s with `PREPARE`)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            address = os.environ.get(ADDRESS)
            _shared = Zygote(SHARED) if address is None else Zygote(address=address)
            atexit.register(_shared.close)
        return _shared


def serve_workers() -> Callable[[], None]:
    """Start the zygote a run's xdist workers share (before they start: they find it by
    `ADDRESS` in the environment they inherit); returns what ends it once they have. It does
    its imports at the first connection, so a run that starts no command pays none of it."""
    folder = tempfile.mkdtemp(prefix="zygote-")
    address = os.path.join(folder, "socket")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.support.zygote", "--listen", address, *SHARED],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        env=_zygote_env(),
        cwd=ROOT,
    )
    while not os.path.exists(address) and proc.poll() is None:
        time.sleep(0.01)
    os.environ[ADDRESS] = address

    def end() -> None:
        os.environ.pop(ADDRESS, None)
        assert proc.stdin is not None
        proc.stdin.close()  # no new clients; it ends when its children have
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(folder, ignore_errors=True)

    return end


def adapter_popen(*args: str, **kwargs: Any) -> WarmProcess:
    """`adapter ARGS` as `subprocess.Popen` would start it (text streams), forked from this
    test process's shared zygote."""
    return shared().popen([ADAPTER, *args], **kwargs)


@dataclass(frozen=True)
class Exited:
    """How a child ended: as the hostile launcher's report has it."""

    exit_code: int  # os.waitstatus_to_exitcode: -9 for SIGKILL
    maxrss_kib: int
    cpu_seconds: float  # user + system of the child and the children it waited for


class WarmProcess:
    """What tests use of `subprocess.Popen[str]`, for a child of a zygote."""

    def __init__(self, zygote: Zygote, pid: int, args: list[str], fds: list[int]) -> None:
        self._zygote = zygote
        self.pid = pid
        self.args = args
        self.returncode: int | None = None
        stdin, stdout, stderr = fds
        self.stdin = open(stdin, "w", encoding="utf-8") if stdin >= 0 else None  # noqa: SIM115
        self.stdout = open(stdout, encoding="utf-8") if stdout >= 0 else None  # noqa: SIM115
        self.stderr = open(stderr, encoding="utf-8") if stderr >= 0 else None  # noqa: SIM115

    def poll(self) -> int | None:
        return self._ended(0)

    def wait(self, timeout: float | None = None) -> int:
        code = self._ended(timeout)
        if code is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return code

    def _ended(self, timeout: float | None) -> int | None:
        if self.returncode is None:
            exited = self._zygote._wait(self.pid, timeout)
            if exited is not None:
                self.returncode = exited.exit_code
        return self.returncode

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        """Both streams read to their end (in threads, so that neither pipe fills), then wait."""
        out: dict[str, str] = {}
        readers = [
            threading.Thread(target=lambda n=name, f=f: out.__setitem__(n, f.read()), daemon=True)
            for name, f in (("out", self.stdout), ("err", self.stderr))
            if f is not None
        ]
        if self.stdin is not None:
            self.stdin.close()
        for reader in readers:
            reader.start()
        for reader in readers:
            reader.join(timeout)
            if reader.is_alive():
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
        for stream in (self.stdout, self.stderr):  # read to their end: closed, as Popen's are
            if stream is not None:
                stream.close()
        self.wait(timeout)
        return out.get("out", ""), out.get("err", "")

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def __enter__(self) -> WarmProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        for stream in (self.stdin, self.stdout, self.stderr):
            if stream is not None:
                stream.close()
        self.wait()


class Zygote:
    """One warm interpreter; `run` may be called from several threads at once."""

    def __init__(
        self, modules: tuple[str, ...] = (*WARM, *PREPARE), *, address: str | None = None
    ) -> None:
        """`modules` imported, then each "module:function" called, before any fork. With
        `address`, the zygote listening there (`serve_workers`) forks ours instead."""
        self.proc: subprocess.Popen[bytes] | None = None
        if address is not None:
            self._control = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            self._control.connect(address)
        else:
            self._control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "tests.support.zygote", str(theirs.fileno()), *modules],
                stdout=subprocess.DEVNULL,
                env=_zygote_env(),
                cwd=ROOT,
                pass_fds=[theirs.fileno()],
            )
            theirs.close()
            _alive.add(self)
        self._send_lock = threading.Lock()
        self._cond = threading.Condition()
        self._started: dict[str, int] = {}  # request id -> child pid
        self._exited: dict[int, Exited] = {}
        self._next = 0
        self._children_cpu = 0.0  # of the children that ended, counted in CHILDREN_CPU
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def run(
        self,
        argv: list[str],
        *,
        env: dict[str, str],
        cwd: Path,
        stdout: Path,
        stderr: Path,
        timeout: float,
    ) -> tuple[Exited, bool]:
        """`argv` (argv[0] the program's name) as a forked child; killed with its session
        after `timeout` seconds. Returns how it ended and whether it was killed."""
        request = {"argv": argv, "env": env, "cwd": str(cwd)}
        pid = self._start({**request, "stdout": str(stdout), "stderr": str(stderr)}, [])
        with self._cond:
            killed = not self._cond.wait_for(lambda: pid in self._exited, timeout)
        if killed:
            with self._send_lock:
                self._send({"kill": pid})
            with self._cond:
                self._cond.wait_for(lambda: pid in self._exited, 60)
        with self._cond:
            return self._exited.pop(pid), killed

    def popen(
        self,
        argv: list[str],
        *,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        stdout: int | IO[Any] | None = None,
        stderr: int | IO[Any] | None = None,
        stdin: int | IO[Any] | None = None,
        text: bool = True,
    ) -> WarmProcess:
        """As `subprocess.Popen(argv, text=True, ...)` for `adapter` (argv[0] its path):
        `subprocess.PIPE`, `subprocess.STDOUT` (stderr), `subprocess.DEVNULL`, an open file
        (or its descriptor) or None (this process's own) for each stream. The child keeps this
        process group (signals to its pid reach it alone, as with Popen)."""
        assert text, "text streams only"
        mine: list[int] = []  # our ends of the pipes
        theirs: list[int] = []  # the child's 0, 1, 2
        for fd, how, reading in ((0, stdin, False), (1, stdout, True), (2, stderr, True)):
            if how == subprocess.PIPE:
                r, w = os.pipe()
                mine.append(r if reading else w)
                theirs.append(w if reading else r)
            elif how == subprocess.DEVNULL:
                mine.append(-1)
                theirs.append(os.open(os.devnull, os.O_RDWR))
            elif how == subprocess.STDOUT and fd == 2:
                mine.append(-1)
                theirs.append(os.dup(theirs[1]))
            elif how is not None and not isinstance(how, int):  # a file: the child writes to it
                mine.append(-1)
                theirs.append(os.dup(how.fileno()))
            elif how is not None and how >= 0:
                mine.append(-1)
                theirs.append(os.dup(how))
            else:
                mine.append(-1)
                theirs.append(os.dup(fd))
        request = {
            "argv": argv,
            "env": dict(os.environ if env is None else env),
            "cwd": str(cwd or os.getcwd()),
            "session": False,
        }
        try:
            pid = self._start(request, theirs)
        finally:
            for fd in theirs:
                os.close(fd)
        return WarmProcess(self, pid, argv, mine)

    def _start(self, request: dict[str, object], fds: list[int]) -> int:
        with self._send_lock:
            self._next += 1
            ident = str(self._next)
            self._send({**request, "id": ident}, fds)
        with self._cond:
            if not self._cond.wait_for(lambda: ident in self._started, 60):
                raise RuntimeError("the zygote did not start the command")
            return self._started.pop(ident)

    def _wait(self, pid: int, timeout: float | None) -> Exited | None:
        with self._cond:
            if not self._cond.wait_for(lambda: pid in self._exited, timeout):
                return None
            return self._exited[pid]

    def close(self) -> None:
        """No more requests; returns once the zygote has said how every child ended."""
        _alive.discard(self)
        self._control.shutdown(socket.SHUT_WR)  # the zygote hangs up once they have
        self._reader.join(60)
        self._control.close()
        if self.proc is not None:
            self.proc.wait(60)
            # reaped, the zygote's RUSAGE_CHILDREN (its own CPU and its children's) is now
            # in ours: its children are no longer counted apart, or they would count twice
            _count_children(-self._children_cpu)

    def _send(self, message: dict[str, object], fds: list[int] | None = None) -> None:
        socket.send_fds(self._control, [json.dumps(message).encode()], fds or [])

    def _read(self) -> None:
        while True:
            try:
                data = self._control.recv(1 << 16)
            except OSError:
                return
            if not data:  # the zygote hung up
                return
            message = json.loads(data)
            with self._cond:
                if "started" in message:
                    self._started[message["started"]] = message["pid"]
                else:
                    self._exited[message["pid"]] = Exited(
                        message["exit_code"], message["maxrss_kib"], message["cpu_seconds"]
                    )
                    self._children_cpu += message["cpu_seconds"]
                    _count_children(message["cpu_seconds"])
                self._cond.notify_all()


def _zygote_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}


# -- the zygote's side ---------------------------------------------------------


def _child(request: dict[str, object], streams: list[int], keep: list[int]) -> None:
    """In the forked child: become the requested process, then run the entry point."""
    if request.get("session", True):
        os.setsid()
    for fd in keep:
        os.close(fd)
    if not streams:  # output to the files named
        streams = [
            os.open(os.devnull, os.O_RDONLY),
            os.open(str(request["stdout"]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
            os.open(str(request["stderr"]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
        ]
    for target, fd in enumerate(streams):
        os.dup2(fd, target)
    for fd in set(streams) - {0, 1, 2}:
        os.close(fd)
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
        handler = signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL
        signal.signal(signum, handler)
    environ = request["env"]
    assert isinstance(environ, dict)
    os.environ.clear()
    os.environ.update(environ)
    os.chdir(str(request["cwd"]))
    argv = request["argv"]
    assert isinstance(argv, list)
    sys.argv = [str(a) for a in argv]
    # `__main__` as a console script's is (click names the program after it; multiprocessing's
    # spawned children import it): a file, not the module `python -m` ran
    script = sys.modules["__main__"]
    script.__spec__ = None
    script.__package__ = None
    script.__file__ = sys.argv[0]
    from adapter.cli import main

    try:
        main()
        code = 0
    except SystemExit as exc:  # as the interpreter reads it
        code = _status(exc.code)
    except KeyboardInterrupt:
        raise  # the interpreter's own end: the traceback, then killed by SIGINT
    except BaseException:
        sys.excepthook(*sys.exc_info())  # the traceback, as the interpreter prints it
        code = 1
    _end(code)


def _status(code: object) -> int:
    """A SystemExit's exit status, as the interpreter makes it (a message is printed)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _end(code: int) -> None:
    """The interpreter's shutdown up to its modules' teardown, then exit.

    As Py_FinalizeEx: the non-daemon threads joined, the atexit handlers run (logging's
    flush, multiprocessing's ending of its children), the standard streams flushed. And the
    command's garbage collected, any finalizer's error printed as ever. Left out: tearing
    down the modules the zygote imported, whose every object the child then touches and so
    copies on write: 0.065 CPU-s and ~9,700 page faults a child (a new interpreter tears
    down pages of its own, with no copies), a third of the corpus's children's CPU.
    """
    import atexit
    import gc

    threading._shutdown()  # type: ignore[attr-defined]  # what the interpreter calls first
    atexit._run_exitfuncs()
    gc.collect()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed, or its reader gone: as the interpreter
            code = 120
    os._exit(code)


def _warm(modules: list[str]) -> None:
    import gc
    import importlib

    for name in modules:  # a module, or module:function to call once it is imported
        module, _, call = name.partition(":")
        imported = importlib.import_module(module)
        if call:
            getattr(imported, call)()
    # the imported modules to the permanent generation: no child's collection (its last one,
    # at shutdown, included) walks them and copies every page on write (0.3 s of CPU a child)
    gc.freeze()


class _Client:
    """A connection a test process sends requests on; its children's news go back on it."""

    def __init__(self, conn: socket.socket) -> None:
        self.conn = conn
        self.children = 0  # started and not yet reported ended
        self.done = False  # it sends no more requests

    def say(self, message: dict[str, object]) -> None:
        with contextlib.suppress(OSError):  # it has gone: nobody waits for the news
            self.conn.send(json.dumps(message).encode())


def _serve(control_fd: int | None, listen: str | None, modules: list[str]) -> None:
    """Fork a child per request of the client on `control_fd`, or of every client that
    connects to `listen` (until standard input ends); the imports done first (at the first
    connection, for `listen`: a run whose tests start no command pays none of it)."""
    selector = selectors.DefaultSelector()
    clients: dict[int, _Client] = {}  # connection fd -> client
    children: dict[int, tuple[int, _Client]] = {}  # pidfd -> pid, client
    listener: socket.socket | None = None
    warm = False
    if control_fd is not None:
        _warm(modules)
        warm = True
        inbox = socket.socket(fileno=control_fd)
        clients[inbox.fileno()] = _Client(inbox)
        selector.register(inbox, selectors.EVENT_READ, "client")
    if listen is not None:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        listener.bind(listen)
        listener.listen(64)
        selector.register(listener, selectors.EVENT_READ, "listen")
        selector.register(sys.stdin, selectors.EVENT_READ, "stdin")

    def hang_up(client: _Client) -> None:
        if client.done and not client.children:
            clients.pop(client.conn.fileno(), None)
            client.conn.close()

    while listener is not None or clients or children:
        for key, _ in selector.select():
            if key.data == "stdin":  # the run is over: no new clients
                assert listener is not None
                selector.unregister(sys.stdin)
                selector.unregister(listener)
                listener.close()
                listener = None
                continue
            if key.data == "listen":
                assert listener is not None
                conn, _ = listener.accept()
                if not warm:
                    _warm(modules)
                    warm = True
                clients[conn.fileno()] = _Client(conn)
                selector.register(conn, selectors.EVENT_READ, "client")
                continue
            if key.data != "client":  # a child's pidfd: it has ended
                pid, owner = children.pop(key.fd)
                selector.unregister(key.fd)
                os.close(key.fd)
                _, status, usage = os.wait4(pid, 0)
                owner.say(
                    {
                        "pid": pid,
                        "exit_code": os.waitstatus_to_exitcode(status),
                        "maxrss_kib": usage.ru_maxrss,
                        "cpu_seconds": usage.ru_utime + usage.ru_stime,
                    }
                )
                owner.children -= 1
                hang_up(owner)
                continue
            client = clients[key.fd]
            try:
                data, fds, _, _ = socket.recv_fds(client.conn, 1 << 20, 3)
            except OSError:
                data, fds = b"", []
            if not data:  # it is closing: its children's ends still go to it
                selector.unregister(client.conn)
                client.done = True
                hang_up(client)
                continue
            request = json.loads(data)
            if "kill" in request:
                target = int(request["kill"])
                if target in (pid for pid, _ in children.values()):
                    try:
                        os.killpg(target, signal.SIGKILL)  # its session: it and its children
                    except ProcessLookupError:  # not yet a session leader
                        os.kill(target, signal.SIGKILL)
                continue
            keep = [*clients, *children] + ([listener.fileno()] if listener is not None else [])
            pid = os.fork()
            if pid == 0:
                selector.close()
                _child(request, fds, keep)
            for fd in fds:
                os.close(fd)
            pidfd = os.pidfd_open(pid)
            children[pidfd] = (pid, client)
            client.children += 1
            selector.register(pidfd, selectors.EVENT_READ, "child")
            client.say({"started": request["id"], "pid": pid})


if __name__ == "__main__":
    if sys.argv[1] == "--listen":
        _serve(None, sys.argv[2], sys.argv[3:])
    else:
        _serve(int(sys.argv[1]), None, sys.argv[2:])
