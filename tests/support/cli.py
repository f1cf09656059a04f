"""`adapter` run in the test process: the real entry point (`adapter.cli.main`), its exit code,
its standard output and error apart, without the ~0.5 s of a new interpreter and its imports.

For a command's contract (exit code, one error line, no traceback) where no signal, no
process tree and no fresh environment is the point. Logging is set up by the command as
in a real process (the root logger's handlers are set aside meanwhile), help fits COLUMNS
(not CliRunner's fixed 80), and the signal handlers, working directory and argv are put
back afterwards.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from click import formatting
from click.testing import CliRunner

from adapter.cli import main

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@dataclass(frozen=True)
class Ran:
    """What a run left: as `subprocess.CompletedProcess` has it."""

    returncode: int
    stdout: str
    stderr: str


def run_in_process(
    args: list[str], cwd: Path, env: dict[str, str] | None = None, stdin: str | None = None
) -> Ran:
    """`adapter ARGS` in `cwd` with `env` on top of this environment; an exception the
    entry point lets through is raised here (in a process it would be a traceback)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    handlers_of_signals = {s: signal.getsignal(s) for s in SIGNALS}
    argv, here = sys.argv, os.getcwd()
    root.handlers = []  # so that the command's logging.basicConfig writes to its stderr
    os.chdir(cwd)
    try:
        with CliRunner().isolation(input=stdin, env=env) as (out, err, _):
            formatting.FORCED_WIDTH = None  # the runner's 80; a process follows COLUMNS
            sys.argv = ["adapter", *args]
            try:
                main()
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
            return Ran(code, out.getvalue().decode(errors="replace"), err.getvalue().decode())
    finally:
        sys.argv = argv
        os.chdir(here)
        for handler in root.handlers:
            handler.close()
        root.handlers, root.level = handlers, level
        for signum, previous in handlers_of_signals.items():
            if previous is not None:  # None: set outside Python, left as it is
                signal.signal(signum, previous)
