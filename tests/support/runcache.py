"""A value computed once a run and shared by its xdist workers: for what a test module
computes while it is collected, which every worker does (each collects the whole suite).

The controller makes a folder for the run (`start`, from tests/conftest.py, before the
workers start: they find it by `FOLDER` in the environment they inherit) and removes it at
the end. The first worker to ask for a name computes the value and pickles it there, under
a lock; the others wait for it and read it. Without xdist (or without the folder) the value
is computed as before. The same code over the same files in the same run: the value is one
that any worker could have computed (the same tests: xdist checks that every worker
collected the same ones; what may differ between two computations, like the blank node
labels rdflib draws for an RDFa page, is then the same in every worker).
"""

from __future__ import annotations

import fcntl
import os
import pickle
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

FOLDER = "ADAPTER_TEST_RUN_CACHE"

T = TypeVar("T")


def start() -> Callable[[], None]:
    """The run's folder, made and named in the environment; returns what removes it."""
    folder = tempfile.mkdtemp(prefix="adapter-run-cache-")
    os.environ[FOLDER] = folder

    def end() -> None:
        os.environ.pop(FOLDER, None)
        shutil.rmtree(folder, ignore_errors=True)

    return end


def once_a_run(name: str, compute: Callable[[], T]) -> T:
    """`compute()`, or what another worker of this run computed for `name`."""
    folder = os.environ.get(FOLDER)
    if not folder or not os.path.isdir(folder):
        return compute()
    path = Path(folder) / f"{name}.pickle"
    with open(Path(folder) / f"{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if path.exists():
            with open(path, "rb") as cached:
                value: T = pickle.load(cached)
            return value
        value = compute()
        partial = path.with_suffix(".partial")
        with open(partial, "wb") as out:
            pickle.dump(value, out, protocol=pickle.HIGHEST_PROTOCOL)
        partial.rename(path)
        return value
