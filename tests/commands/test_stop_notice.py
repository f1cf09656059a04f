"""The stop notice of `adapter sync` and `adapter worker`, written from a signal handler.

A handler runs in the main thread between two of its bytecodes, so it may land while that
thread is inside a write to `sys.stderr` (a progress bar, a log line) holding the buffered
writer's lock: a handler that writes through the same stream raised "reentrant call" there.
"""

from __future__ import annotations

import io
import signal
import sys
import threading
import time
from types import FrameType
from typing import Any, cast

import pytest

from adapter.commands.sync import StopEvent, graceful_stop


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


def _set_inside_wait(event: threading.Event, nth: int) -> None:
    """`event.wait`, with `event.set` run at its `nth` Python call, as a stop signal's
    handler landing just then would run it."""
    calls: list[int] = []

    def handler_at_nth_call(_frame: FrameType, kind: str, _arg: object) -> None:
        if kind == "call" and len(calls) < nth:
            calls.append(1)
            if len(calls) == nth:
                event.set()

    sys.setprofile(handler_at_nth_call)
    try:
        event.wait(0.05)
    finally:
        sys.setprofile(None)


@pytest.mark.parametrize(("event", "blocks"), [(StopEvent, False), (threading.Event, True)])
def test_a_stop_signal_never_blocks_inside_the_stop_events_own_wait(
    event: type[threading.Event], blocks: bool
) -> None:
    """`adapter worker` idles in `stop.wait`; its handler's `stop.set` may land inside that
    wait while the thread holds the event's lock. A plain Event is shown to block there, so
    the probe reaches that point; the StopEvent never does."""
    waiters = [
        threading.Thread(target=_set_inside_wait, args=(event(), nth), daemon=True)
        for nth in range(1, 12)
    ]
    for waiter in waiters:
        waiter.start()
    # one deadline for all: a blocked one never ends (it is a daemon), and each blocked one
    # cost a whole second of its own before (4 s of the quick loop's wall); the others end
    # within their 0.05 s wait, so every waiter still has the whole second, or more, to end
    deadline = time.monotonic() + (1.0 if blocks else 30.0)
    for waiter in waiters:
        waiter.join(max(0.0, deadline - time.monotonic()))
    assert any(w.is_alive() for w in waiters) is blocks
