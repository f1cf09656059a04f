"""When a node's next page may start, given its host's turns at the pacer.

A node's loop hands pages to threads; one handed over too early only parks a thread at
the pacer (`adapter.http.politeness`), one handed over late loses the host's turn.
"""

from __future__ import annotations

import time
from concurrent.futures import Future
from typing import Any, Protocol

from adapter.http.addresses import host_key
from adapter.http.politeness import Pacer


class Row(Protocol):
    """A page due: its URL, and the Dataset it carries when it is not fetched (a sitegraph's)."""

    @property
    def url(self) -> str: ...

    @property
    def document(self) -> Any: ...


class Starts:
    """The pages in flight of one node, and when the next may start.

    A page started before the newest has had its turn, while one waits at the pacer, or
    before the host's next turn would only park another thread there (at 200 nodes,
    hundreds). So a host that answers within its interval is served by one thread, a slow
    one gets as many in flight as its concurrency.
    """

    POLL = 0.01  # the shortest wait before looking again
    # at shorter intervals (20 requests/s and more) a page held back would wait longer than
    # a thread parked at the pacer: every page starts at once, as many as `size`
    UNGATED = 0.05
    # a page is handed over this long before its host's turn and waits for it at the pacer:
    # handed over at the turn, the time it took to reach a thread and the host (hundreds of
    # nodes' turns come at once) was added to every interval, 4 % of the rate
    LEAD = 0.05

    def __init__(self, size: int, pacer: Pacer) -> None:
        self.size = size
        self.pacer = pacer
        self.pending: set[Future[Any]] = set()
        self._newest = float("-inf")  # monotonic time the newest page was handed over
        self._host = ("", "")  # the latest row's URL and host key (the next looks' row, mostly)

    def may_start(self, row: Row) -> bool:
        return self.next_start(row) == 0

    def next_start(self, row: Row) -> float | None:
        """Seconds until `row` may start if nothing finishes first (None: only once one does)."""
        if len(self.pending) >= self.size:
            return None
        if row.document is not None:  # a sitegraph's Dataset: checked, not fetched
            return 0.0
        turn = self.pacer.turn(self._host_of(row.url))
        if turn.interval < self.UNGATED:
            return 0.0
        left = turn.next - time.monotonic()
        # a turn to come (a page of ours in flight not yet asked, or anyone's page waiting at
        # the pacer): look again after it; with none in flight, the host's next turn alone
        # says when, so no page waits at the pacer holding a thread
        if turn.waiting or (self.pending and turn.last < self._newest):
            return max(left, self.POLL)
        return max(left - self.LEAD, 0.0)

    def _host_of(self, url: str) -> str:
        """`host_key` parses the URL: in a profile of 200 nodes side by side it was 9 % of the
        process's GIL time, every look at a node's next start parsing its row again."""
        if self._host[0] != url:
            self._host = (url, host_key(url))
        return self._host[1]

    def add(self, future: Future[Any]) -> None:
        self.pending.add(future)
        self._newest = time.monotonic()

    def take(self, future: Future[Any]) -> bool:
        """Take a finished page out of the pending set (False: it was not pending)."""
        if taken := future in self.pending:
            self.pending.discard(future)
        return taken
