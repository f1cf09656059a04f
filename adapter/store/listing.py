"""listObjects' page of the change log: narrow rows, a counted total and page anchors kept.

Why: on a 100,000-object store a page of 1,000 through `Store.list_changes` cost
about 30 ms of CPU (benchmarks/api.py): a count over the whole window (6 ms on
either engine), an OFFSET that walks every entry before `start` (3 ms on
SQLite, 6 ms on PostgreSQL at the middle of the list), and whole records turned
into `SyncRecord`s for five fields. Here a page is one narrow prepared statement
(the entry's PID and time, the record's format, checksum and size), and what
the log already told us is kept per process:

- the total of a window, with the newest change time of the node it was counted
  at (`max(stamp)`, one index probe): when newer changes exist, only those are
  counted and added;
- anchors: the (time, PID) of the entry at a position, learnt from each page
  served, so the next page (the coordinating node pages on with `start +=
  count`) starts from its anchor instead of walking `start` entries;
- and where no anchor is near (a page asked out of order, a page the other
  granian worker served before, a restarted server), hops: from the nearest
  anchor below, one index probe per `stride` entries (the entry `stride` places
  on), each landing kept as an anchor. A deep page costs its hops once per
  window and process, and from then on a seek and at most `stride` skipped
  entries, as a page at the start does: on a 1,000,000-object store a page at
  the last offset had cost eight times one at the first (benchmarks/api.py).

Both rest on the change log's rule (adapter.store.ledger): entries are only
appended, never changed or deleted, with each node's times strictly increasing
in commit order. A new entry therefore sorts after every entry already listed
and never moves one, and whether an entry is in a window depends on that entry
(and on its record's immutable PID, seriesId and formatId) alone. If a node's
newest time ever goes backwards, the kept figures for it are dropped; a store
restored from a backup under a running server is not otherwise noticed, so
restart `adapter serve` after a restore.
"""

from __future__ import annotations

import bisect
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import Connection, bindparam, func, or_, select
from sqlalchemy.sql.expression import ClauseElement

from adapter.store import schema as t
from adapter.store.prepared import Prepared
from adapter.store.schema import utc

MAX_WINDOWS = 64  # distinct windows (node and filters) whose figures are kept
MAX_ANCHORS = 20_000  # anchors per window: a 20-million-entry list at pages of 1,000
STRIDE = 1_000  # entries between hops' anchors (wider where the window outgrows MAX_ANCHORS)
Shape = tuple[bool, bool, bool, bool]  # which of fromDate, toDate, formatId, identifier


class ListedObject(NamedTuple):
    """One ObjectInfo of listObjects: `listed` is the time of the change it is listed at."""

    pid: str
    format_id: str
    checksum_algorithm: str
    checksum: str
    size: int
    listed: datetime


@dataclass(frozen=True, slots=True)
class Window:
    """The filters of a listObjects request (times in UTC)."""

    node_id: str
    from_date: datetime | None = None
    to_date: datetime | None = None
    format_id: str | None = None
    identifier: str | None = None

    @property
    def shape(self) -> Shape:
        """Which filters are set: one prepared statement per shape."""
        return (
            self.from_date is not None,
            self.to_date is not None,
            self.format_id is not None,
            self.identifier is not None,
        )

    def params(self) -> dict[str, Any]:
        values: dict[str, Any] = {"node": self.node_id}
        if self.from_date is not None:
            values["since"] = utc(self.from_date)
        if self.to_date is not None:
            values["until"] = utc(self.to_date)
        if self.format_id is not None:
            values["fmt"] = self.format_id
        if self.identifier is not None:
            values["ident"] = self.identifier
        return values


_lg, _r = t.sysmeta_log, t.records


def _source_and_where(shape: Shape) -> tuple[Any, list[Any]]:
    """The log (joined to records when a filter needs them) and the window's conditions."""
    since, until, fmt, ident = shape
    where: list[Any] = [_lg.c.node_id == bindparam("node")]
    if since:  # the object's first change at or after fromDate
        where += [
            _lg.c.stamp >= bindparam("since", type_=t.Stamp),
            or_(_lg.c.prev_stamp.is_(None), _lg.c.prev_stamp < bindparam("since", type_=t.Stamp)),
        ]
    else:  # its first change ever
        where.append(_lg.c.prev_stamp.is_(None))
    if until:
        where.append(_lg.c.stamp < bindparam("until", type_=t.Stamp))
    source: Any = _lg
    if fmt or ident:
        source = _lg.join(_r, (_r.c.node_id == _lg.c.node_id) & (_r.c.pid == _lg.c.pid))
        if fmt:
            where.append(_r.c.format_id == bindparam("fmt"))
        if ident:
            where.append(or_(_r.c.pid == bindparam("ident"), _r.c.series_id == bindparam("ident")))
    return source, where


def _count(shape: Shape, newer: bool) -> ClauseElement:
    """The entries up to the node's newest time read before (a total true at that time)."""
    source, where = _source_and_where(shape)
    where.append(_lg.c.stamp <= bindparam("now", type_=t.Stamp))
    if newer:  # only the changes after the time the kept total was counted at
        where.append(_lg.c.stamp > bindparam("counted", type_=t.Stamp))
    return select(func.count()).select_from(source).where(*where)


def _page(shape: Shape, anchored: bool) -> ClauseElement:
    """One page: the entries in the log's order, then their records' fields, by PID.

    Only entries up to the time the total was counted at, so a page never says more than it.
    """
    source, where = _source_and_where(shape)
    where.append(_lg.c.stamp <= bindparam("now", type_=t.Stamp))
    if anchored:  # after the anchor's (time, PID)
        after = bindparam("a_stamp", type_=t.Stamp)
        where += [_lg.c.stamp >= after, or_(_lg.c.stamp > after, _lg.c.pid > bindparam("a_pid"))]
    page = (
        select(_lg.c.pid, _lg.c.stamp)
        .select_from(source)
        .where(*where)
        .order_by(_lg.c.stamp, _lg.c.pid)
        .limit(bindparam("count"))
        .offset(bindparam("skip"))
        .subquery()
    )
    return (
        select(
            page.c.pid,
            _r.c.format_id,
            _r.c.checksum_algorithm,
            _r.c.checksum,
            _r.c.size,
            page.c.stamp,
        )
        .select_from(page.join(_r, (_r.c.node_id == bindparam("node")) & (_r.c.pid == page.c.pid)))
        .order_by(page.c.stamp, page.c.pid)
    )


def _hop(shape: Shape, anchored: bool) -> ClauseElement:
    """The (time, PID) of the entry `skip` places after the anchor (or from the first):
    the page's walk, on the log's index alone, without the records' fields."""
    source, where = _source_and_where(shape)
    where.append(_lg.c.stamp <= bindparam("now", type_=t.Stamp))
    if anchored:
        after = bindparam("a_stamp", type_=t.Stamp)
        where += [_lg.c.stamp >= after, or_(_lg.c.stamp > after, _lg.c.pid > bindparam("a_pid"))]
    return (
        select(_lg.c.stamp, _lg.c.pid)
        .select_from(source)
        .where(*where)
        .order_by(_lg.c.stamp, _lg.c.pid)
        .limit(bindparam("count"))  # 1 (a prepared statement takes every value by name)
        .offset(bindparam("skip"))
    )


_SHAPES: list[Shape] = [
    (a, b, c, d)
    for a in (False, True)
    for b in (False, True)
    for c in (False, True)
    for d in (False, True)
]


def _prepared(build: Callable[[Shape, bool], ClauseElement], shape: Shape, flag: bool) -> Prepared:
    return Prepared(lambda _dialect: build(shape, flag))


COUNT = {(s, newer): _prepared(_count, s, newer) for s in _SHAPES for newer in (False, True)}
PAGE = {(s, anchored): _prepared(_page, s, anchored) for s in _SHAPES for anchored in (False, True)}
HOP = {(s, anchored): _prepared(_hop, s, anchored) for s in _SHAPES for anchored in (False, True)}
NEWEST = Prepared(lambda _: select(func.max(_lg.c.stamp)).where(_lg.c.node_id == bindparam("node")))


@dataclass(slots=True)
class _Kept:
    """What is known of one window: its total at a node time, and anchors by position."""

    counted: datetime  # the node's newest change time `total` is true at
    total: int
    positions: list[int] = field(default_factory=list)  # sorted
    anchors: dict[int, tuple[datetime, str]] = field(default_factory=dict)
    # one thread hops at a time: the others then seek from its landings, not hop again
    hopping: threading.Lock = field(default_factory=threading.Lock)

    def anchor_before(self, start: int) -> int | None:
        """The highest position with an anchor below `start`."""
        i = bisect.bisect_left(self.positions, start)
        return self.positions[i - 1] if i else None

    def learn(self, position: int, key: tuple[datetime, str]) -> None:
        if position in self.anchors or len(self.positions) >= MAX_ANCHORS:
            return
        self.anchors[position] = key
        bisect.insort(self.positions, position)


class Listing:
    """Pages of the change log with the totals and anchors kept (one per store, thread-safe)."""

    def __init__(self, stride: int = STRIDE) -> None:
        self._kept: OrderedDict[Window, _Kept] = OrderedDict()
        self._lock = threading.Lock()
        self._stride = stride

    def page(
        self, conn: Connection, window: Window, start: int, count: int
    ) -> tuple[int, list[ListedObject]]:
        """(total, the entries at [start, start + count)) of the window."""
        params = window.params()
        newest = NEWEST.first(conn, **params)
        now = None if newest is None or newest[0] is None else utc(newest[0])
        total = self._total(conn, window, params, now)
        if count <= 0 or start >= total:
            return total, []
        with self._lock:
            kept = self._kept.get(window)
        at, key = self._nearest(kept, start)
        if kept is not None and start - (-1 if at is None else at) - 1 >= self._stride:
            with kept.hopping:  # another thread's hops may have come near meanwhile
                at, key = self._hop(conn, window, kept, params, now, start)
        shape = window.shape
        if key is None or at is None:
            rows = PAGE[(shape, False)].all(conn, **params, now=now, count=count, skip=start)
        else:
            skip = start - at - 1
            rows = PAGE[(shape, True)].all(
                conn, **params, now=now, count=count, skip=skip, a_stamp=key[0], a_pid=key[1]
            )
        listed = [
            ListedObject(pid, fmt, algorithm, checksum, int(size), utc(stamp))
            for pid, fmt, algorithm, checksum, size, stamp in rows
        ]
        if listed:
            with self._lock:
                if kept is not None and self._kept.get(window) is kept:  # not counted anew since
                    last = listed[-1]
                    kept.learn(start + len(listed) - 1, (last.listed, last.pid))
        return total, listed

    def _hop(
        self,
        conn: Connection,
        window: Window,
        kept: _Kept,
        params: dict[str, Any],
        now: datetime | None,
        start: int,
    ) -> tuple[int | None, tuple[datetime, str] | None]:
        """The anchor the page at `start` seeks from: the nearest kept, moved on by hops of
        `stride` entries while `start` is a stride or more beyond it, each landing learnt."""
        at, key = self._nearest(kept, start)
        stride = max(self._stride, -(-kept.total // MAX_ANCHORS))
        while start - (-1 if at is None else at) - 1 >= stride:
            if key is None or at is None:
                row = HOP[(window.shape, False)].first(
                    conn, **params, now=now, count=1, skip=stride - 1
                )
            else:
                row = HOP[(window.shape, True)].first(
                    conn, **params, now=now, count=1, skip=stride - 1, a_stamp=key[0], a_pid=key[1]
                )
            if row is None:  # past the window's end
                break
            at, key = (-1 if at is None else at) + stride, (utc(row[0]), str(row[1]))
            with self._lock:
                if self._kept.get(window) is kept:  # not counted anew since
                    kept.learn(at, key)
        return at, key

    def _nearest(
        self, kept: _Kept | None, start: int
    ) -> tuple[int | None, tuple[datetime, str] | None]:
        """The kept anchor nearest below `start`: (position, key), or (None, None)."""
        if kept is None:
            return None, None
        with self._lock:
            at = kept.anchor_before(start)
            return (None, None) if at is None else (at, kept.anchors[at])

    def _total(
        self, conn: Connection, window: Window, params: dict[str, Any], now: datetime | None
    ) -> int:
        """The window's total at the node's time `now` (None: the node has no entries)."""
        if now is None:
            with self._lock:
                self._kept.pop(window, None)
            return 0
        shape = window.shape
        with self._lock:
            kept = self._kept.get(window)
            if kept is not None:
                self._kept.move_to_end(window)
                if kept.counted == now:
                    return kept.total
        if kept is not None and now > kept.counted:
            counted = kept.counted
            more = COUNT[(shape, True)].first(conn, **params, now=now, counted=counted)
            added = int(more[0]) if more else 0
            with self._lock:
                if kept.counted == counted:  # no other thread moved it on meanwhile
                    kept.total += added
                    kept.counted = now
                return kept.total
        found = COUNT[(shape, False)].first(conn, **params, now=now)
        total = int(found[0]) if found else 0
        with self._lock:
            self._kept[window] = _Kept(now, total)
            self._kept.move_to_end(window)
            while len(self._kept) > MAX_WINDOWS:
                self._kept.popitem(last=False)
        return total
