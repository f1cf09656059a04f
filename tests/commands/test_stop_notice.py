"""The stop notice of `adapter sync` and `adapter worker`, written from a signal handler.

A handler runs in the main thread between two of its bytecodes, so it may land while that
thread is inside a write to `sys.stderr` (a progress bar, a log line) holding the buffered
writer's lock: a handler that writes through the same stream raised "reentrant call" there.
"""

from __future__ import annotations

import io
import signal
import sys
from typing import Any, cast

import pytest

from adapter.commands.sync import graceful_stop


class _Interrupted(io.RawIOBase):
    """A raw stream that calls the SIGTERM handler in the middle of its first write."""

    def __init__(self) -> None:
        self.fired = False

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:  # type: ignore[override]
        if not self.fired:
            self.fired = True
            handler = signal.getsignal(signal.SIGTERM)
            assert callable(handler)
            handler(signal.SIGTERM, None)
        return len(data)


def test_a_stop_signal_during_a_write_to_stderr_sets_the_stop_and_says_so(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    raw = _Interrupted()
    stream = io.TextIOWrapper(io.BufferedWriter(cast(Any, raw)), line_buffering=True)
    with graceful_stop() as stop:
        monkeypatch.setattr(sys, "stderr", stream)
        stream.write("a progress line\n")  # the handler runs while the writer's lock is held
        monkeypatch.undo()
    assert raw.fired
    assert stop.is_set() and stop.signum == signal.SIGTERM
    assert "Stopping after the pages in flight" in capfd.readouterr().err
