"""Real `adapter` processes without paying the imports each time: forked from a warm parent.

A fresh `adapter sync` spends about 1.4 s of CPU importing (SQLAlchemy, rdflib, pydantic, the
pipeline) before it reads its first byte, `check-dataset` about 0.8 s; the hostile corpus
starts ~190 of them, so imports were most of the suite's CPU. A zygote is a small interpreter
that imports the command modules once and then forks one child per command. Each child is a
real process: a session of its own (killed as a group at the hard cap), the request's
arguments, environment, working directory, standard output and error; it calls the console
script's own entry point (`sys.exit(adapter.cli.main())`) and ends through the interpreter's
normal shutdown (atexit, non-daemon threads joined), an uncaught exception printed as a
traceback. Its exit status, CPU and peak RSS come from `wait4`, as for the launcher in
tests/support/hostile.py.

What differs from `exec`: the imports are done (a child's CPU and wall time leave them out),
its peak RSS starts at the zygote's (all three commands' imports, so a little more than a
fresh `discover` has: stricter, never looser), and the interpreter's hash seed is the
zygote's. `random` reseeds in every child (`os.register_at_fork`). Nothing the commands read
from the environment is read at import (limits are read as a command starts).

The zygote has no threads, so forking is safe; it watches its children with pidfds.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

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


@dataclass(frozen=True)
class Exited:
    """How a child ended: as the hostile launcher's report has it."""

    exit_code: int  # os.waitstatus_to_exitcode: -9 for SIGKILL
    maxrss_kib: int
    cpu_seconds: float  # user + system of the child and the children it waited for


class Zygote:
    """One warm interpreter; `run` may be called from several threads at once."""

    def __init__(self, modules: tuple[str, ...] = WARM) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-u", "-m", "tests.support.zygote", *modules],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            cwd=ROOT,
            text=True,
        )
        self._send_lock = threading.Lock()
        self._cond = threading.Condition()
        self._started: dict[str, int] = {}  # request id -> child pid
        self._exited: dict[int, Exited] = {}
        self._next = 0
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
        with self._send_lock:
            self._next += 1
            ident = str(self._next)
            self._send(
                {
                    "id": ident,
                    "argv": argv,
                    "env": env,
                    "cwd": str(cwd),
                    "stdout": str(stdout),
                    "stderr": str(stderr),
                }
            )
        with self._cond:
            if not self._cond.wait_for(lambda: ident in self._started, 60):
                raise RuntimeError("the zygote did not start the command")
            pid = self._started.pop(ident)
            killed = not self._cond.wait_for(lambda: pid in self._exited, timeout)
        if killed:
            with self._send_lock:
                self._send({"kill": pid})
            with self._cond:
                self._cond.wait_for(lambda: pid in self._exited, 60)
        with self._cond:
            return self._exited.pop(pid), killed

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()  # the zygote ends when its children have
        self.proc.wait(60)
        self._reader.join(10)

    def _send(self, message: dict[str, object]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line)
            with self._cond:
                if "started" in message:
                    self._started[message["started"]] = message["pid"]
                else:
                    self._exited[message["pid"]] = Exited(
                        message["exit_code"], message["maxrss_kib"], message["cpu_seconds"]
                    )
                self._cond.notify_all()


# -- the zygote's side ---------------------------------------------------------


def _child(request: dict[str, object], keep: list[int]) -> None:
    """In the forked child: become the requested process, then run the entry point."""
    os.setsid()
    for fd in keep:
        os.close(fd)
    null = os.open(os.devnull, os.O_RDONLY)
    out = os.open(str(request["stdout"]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    err = os.open(str(request["stderr"]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    for fd, target in ((null, 0), (out, 1), (err, 2)):
        os.dup2(fd, target)
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

    main()
    sys.exit(0)  # through the interpreter's own shutdown, as the console script ends


def _serve(modules: list[str]) -> None:
    import gc
    import importlib

    for name in modules:
        importlib.import_module(name)
    # the imported modules to the permanent generation: no child's collection (its last one,
    # at shutdown, included) walks them and copies every page on write (0.3 s of CPU a child)
    gc.freeze()
    inbox = sys.stdin.buffer
    selector = selectors.DefaultSelector()
    selector.register(inbox, selectors.EVENT_READ, None)
    children: dict[int, int] = {}  # pidfd -> pid
    pending = b""
    closed = False

    def say(message: dict[str, object]) -> None:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    while not closed or children:
        for key, _ in selector.select():
            if key.data is not None:  # a child's pidfd: it has ended
                pid = children.pop(key.fd)
                selector.unregister(key.fd)
                os.close(key.fd)
                _, status, usage = os.wait4(pid, 0)
                say(
                    {
                        "pid": pid,
                        "exit_code": os.waitstatus_to_exitcode(status),
                        "maxrss_kib": usage.ru_maxrss,
                        "cpu_seconds": usage.ru_utime + usage.ru_stime,
                    }
                )
                continue
            chunk = os.read(inbox.fileno(), 65536)
            if not chunk:
                selector.unregister(inbox)
                closed = True
                continue
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                request = json.loads(line)
                if "kill" in request:
                    target = int(request["kill"])
                    if target in children.values():
                        try:
                            os.killpg(target, signal.SIGKILL)  # its session: it and its children
                        except ProcessLookupError:  # not yet a session leader
                            os.kill(target, signal.SIGKILL)
                    continue
                pid = os.fork()
                if pid == 0:
                    selector.close()
                    _child(request, [inbox.fileno(), *children])
                pidfd = os.pidfd_open(pid)
                children[pidfd] = pid
                selector.register(pidfd, selectors.EVENT_READ, pid)
                say({"started": request["id"], "pid": pid})


if __name__ == "__main__":
    _serve(sys.argv[1:])
