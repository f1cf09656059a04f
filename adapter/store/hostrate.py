"""Politeness across processes: per-host rate and concurrency kept in the store.

`HostPacer` holds a host's rate within one process. Scale-out workers (and a
sync that runs several processes) share hosts, so the schedule of a host
lives in the store every process already uses:

- `host_rate`: one row per host with the earliest time the next request may
  start. A request reserves its start with one atomic `UPDATE ... RETURNING`
  (`next_at = max(next_at, now) + interval`) and sleeps until then, so starts
  to a host are at least one interval apart whichever process sends them.
  Times are the database's clock on PostgreSQL (workers on several machines
  agree) and the local clock on SQLite (one machine by construction).
- `host_slots`: `concurrency` rows per host; a request holds one while it is
  in flight, as a lease longer than any fetch may take: a killed process's
  slots free themselves when it runs out, or at once on its own machine.
  On SQLite (one machine) the slots are record locks of a file instead
  (`adapter.store.hostslots`): one system call to take or give back, not a
  statement, and the kernel frees a process's slots the instant it ends.

When several of this process's threads wait for the same host, one
reservation covers as many consecutive starts (at most `RESERVE_SPAN` seconds
of them), handed out in order; a start not used on time is dropped, never
used late, so the rate still holds. One reservation per waiting thread, no
more: starts reserved for nobody would keep the other processes waiting.
A start used late (the thread woke late on a loaded machine, by less than the
`late` it may be, or lost the CPU before its request left) would leave less
than an interval before the next reserved start; so this process keeps a
whole interval after its own previous request to a host, counted from when
the request was written (`sent`, told by the fetcher), whatever the
reservations say; lets no request go while one let go is not written yet (at
intervals of RESERVE_SPAN and more); and a late one pushes the host's
`next_at` on, so later reservations keep a whole interval after it too. At
those intervals the other processes are held too: a request is let go under a
claim in the host's row, which no other process's request passes while it is
held nor within an interval of the written time it is given back with (`_claim`).
A robots.txt Crawl-delay learnt after a host's first requests pushes its
`next_at` on by the difference, so the very next request keeps the new pace.
These two tables are coordination state, not data: they are created on first
use and may be emptied at any time. On PostgreSQL they live in the store's
database; on SQLite (one machine by construction) in a file beside the store
(`store.db-hostrate`), because SQLite has one writer per file; that connection
and the tables are in `adapter.store.hostrate_db`.
"""

from __future__ import annotations

import bisect
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

from adapter.http import connections
from adapter.http.clock import Clock
from adapter.http.politeness import Turn, Waiting
from adapter.store.claims import dead_local_owner
from adapter.store.db import Store
from adapter.store.hostrate_db import release, shared_schedule
from adapter.store.hostslots import SlotFile

RESERVE_SPAN = 0.05  # seconds of starts reserved at once at high rates
SLOT_POLL = (0.005, 0.1)  # first and longest wait for a free concurrency slot
LATE = 0.002  # a reserved start this late is dropped, not used
MAX_OVERSLEEPS = 3  # starts a request may give up for waking too late
DEAD_CHECK_AFTER = 0.5  # seconds without a free slot before looking for dead holders
SEND_SLACK = 0.01  # seconds a request may take from its start to being written, unremarked
UNWRITTEN_WAIT = 0.05  # seconds between looks while a request let go is not written yet
LEAD = 0.005  # an idle host's next start is this far ahead: slack for the answer's trip back


class StorePacer:
    """A `Pacer` whose per-host schedule is shared by every process using the store.

    It keeps one database connection of its own in autocommit mode: each
    statement below is a transaction on its own, so a reservation costs one
    round trip (measured: ~0.05 ms on SQLite, ~0.3 ms on a local PostgreSQL),
    where a pooled SQLAlchemy transaction costs ten times that.
    """

    def __init__(
        self,
        store: Store,
        owner: str,
        requests_per_second: float = 2.0,
        concurrency: int = 2,
        *,
        hold_seconds: float = 120.0,
        clock: Clock | None = None,
    ) -> None:
        """`clock`: by default the process watchdog's, which the fetcher reads when it tells
        `sent` a request's time (the two must agree), and which a test makes virtual. On
        SQLite the schedule's times are this clock's too; on PostgreSQL they are the
        database's, so a virtual clock paces truly only on SQLite."""
        if requests_per_second <= 0 or concurrency < 1:
            raise ValueError("requests_per_second must be > 0 and concurrency >= 1")
        self._clock = connections.WATCHDOG.clock if clock is None else clock
        self.owner = owner
        self._sender = f"{owner}/{id(self):x}"  # this pacer's claims (`_claim`)
        self._interval = 1.0 / requests_per_second
        self._concurrency = concurrency
        self._hold = hold_seconds  # a slot's lease: the longest a fetch may take, and more
        self._lock = threading.Lock()  # local state
        self._delay: dict[str, float] = {}
        self._known: set[str] = set()
        self._starts: dict[str, deque[float]] = {}  # reserved starts, local clock
        self._waiting: dict[str, int] = {}  # threads waiting for a start, per host
        self._last: dict[str, float] = {}  # this process's latest start per host, local clock
        # per host, `next_at` as this process last wrote it: while the store still holds it,
        # every start reserved after ours is this process's own (see `_later`)
        self._tail: dict[str, float] = {}
        self._released = threading.local()  # when this thread's latest start was let go
        self._unwritten: dict[str, int] = {}  # requests let go and not written yet, per host
        self._turns = threading.Condition(self._lock)
        self._sems: dict[str, threading.BoundedSemaphore] = {}
        self._in_slot = Waiting()
        self._store = store
        self._db = shared_schedule(store)
        self._slots = self._db.slots  # SQLite's record locks; None: the `host_slots` rows
        self._closed = False

    def close(self) -> None:
        with self._lock:
            closed, self._closed = self._closed, True
        if not closed:
            if self._slots is not None:
                self._slots.give_all(self)
            release(self._store)

    def set_crawl_delay(self, host: str, seconds: float) -> bool:
        """robots.txt Crawl-delay: widens the interval for that host, never narrows it."""
        with self._lock:
            before = self.interval(host)
            self._delay[host] = max(0.0, seconds)
            self._starts.pop(host, None)  # starts reserved at the old pace are not ours now
            wider = self.interval(host) - before
        if wider > 0 and host in self._known:  # the next start was reserved at the old pace
            self._move_next(host, "next_at + :wider", wider=wider)
        return True

    def interval(self, host: str) -> float:
        return max(self._interval, self._delay.get(host, 0.0))

    def turn(self, host: str) -> Turn:
        """This process's own turns: its latest start, and an interval after it."""
        with self._lock:
            last, interval = self._last.get(host, float("-inf")), self.interval(host)
            return Turn(last, last + interval, self._in_slot(host), interval)

    @contextmanager
    def slot(self, host: str) -> Iterator[None]:
        sem = self._sems.get(host)
        if sem is None:
            with self._lock:
                sem = self._sems.setdefault(host, threading.BoundedSemaphore(self._concurrency))
        with self._in_slot.inside(host):
            sem.acquire()
            try:
                number = self._acquire(host)
            except BaseException:
                sem.release()
                raise
            try:
                self._wait_turn(host)
            except BaseException:
                self._let_go(host, number, sem)
                raise
        try:
            yield
        finally:
            self._let_go(host, number, sem)

    def _let_go(self, host: str, number: int, sem: threading.BoundedSemaphore) -> None:
        """The slot's end, in plain calls (an ExitStack of three cost ~10 us a request)."""
        try:
            self._written(host)  # never written (it failed first): the next may go
            self._free(host, number)
        finally:
            sem.release()

    def _now(self) -> float:
        """The schedule's time on SQLite (PostgreSQL reads its own clock and ignores it)."""
        return self._clock.time()

    def _free(self, host: str, number: int) -> None:
        if self._slots is not None:
            self._slots.give(host, number)
            return
        self._db.run(
            "UPDATE host_slots SET holder = NULL, until = NULL "
            "WHERE host = :host AND slot = :slot AND holder = :me",
            host=host,
            slot=number,
            me=self.owner,
        )

    # -- concurrency ------------------------------------------------------------

    def _acquire(self, host: str) -> int:
        if host not in self._known:
            self._db.insert_rows(host, self._concurrency)
            with self._lock:
                self._known.add(host)
        if self._slots is not None:
            return self._take(host, self._slots)
        lock = " FOR UPDATE SKIP LOCKED" if self._db.pg else ""
        now = self._db.now
        sql = (
            f"UPDATE host_slots SET holder = :me, until = {now} + :hold "
            "WHERE host = :host AND slot = (SELECT slot FROM host_slots WHERE host = :host "
            f"AND slot < :n AND (holder IS NULL OR until < {now}) ORDER BY slot LIMIT 1{lock}) "
            "RETURNING slot"
        )
        wait, waited = SLOT_POLL[0], 0.0
        while True:
            row = self._db.one(
                sql, me=self.owner, hold=self._hold, host=host, n=self._concurrency, now=self._now()
            )
            if row is not None:
                return int(row[0])
            if waited >= DEAD_CHECK_AFTER:
                self._free_dead(host)
                waited = 0.0
            self._clock.sleep(wait)
            waited += wait
            wait = min(wait * 2, SLOT_POLL[1])

    def _take(self, host: str, slots: SlotFile) -> int:
        """A slot of the record-lock file (SQLite): a dead process's are free already."""
        wait = SLOT_POLL[0]
        while (number := slots.take(host, self._concurrency, self)) is None:
            self._clock.sleep(wait)
            wait = min(wait * 2, SLOT_POLL[1])
        return number

    def _free_dead(self, host: str) -> None:
        """Slots held by a process of this machine that is gone are free at once."""
        rows = self._db.all(
            "SELECT slot, holder FROM host_slots WHERE host = :host AND holder IS NOT NULL",
            host=host,
        )
        for number, holder in rows:
            if dead_local_owner(str(holder)):
                self._db.run(
                    "UPDATE host_slots SET holder = NULL, until = NULL "
                    "WHERE host = :host AND slot = :slot AND holder = :holder",
                    host=host,
                    slot=number,
                    holder=holder,
                )

    # -- rate -------------------------------------------------------------------

    def _wait_turn(self, host: str) -> None:
        """Sleep until a reserved start of `host`; starts too late are moved or dropped.

        Another process may hold the next start, so a start is used on time, moved
        (`_later`: only while every start reserved after it is this process's), or
        not used at all: this process's own conditions (a whole interval after its
        previous request, none let go and unwritten) are waited for before a start
        is reserved, and a start they would delay is moved or dropped for a new one.
        """
        with self._lock:
            self._waiting[host] = self._waiting.get(host, 0) + 1
        late = max(LATE, self.interval(host) / 4)
        oversleeps = 0
        try:
            while True:
                self._local_turn(host)
                with self._lock:
                    queue = self._starts.setdefault(host, deque())
                    now = self._clock.monotonic()
                    while queue and queue[0] < now - late:  # too stale even to move
                        queue.popleft()
                    start = queue.popleft() if queue else None
                if start is None:
                    self._reserve(host)
                    continue
                if start < now - LATE:  # this process's own pace held it past the start
                    start = self._later(host, start, late)
                    if start is None:
                        continue
                if start > now:
                    self._clock.sleep(start - now)
                # overslept (a loaded machine), or this process's previous request left
                # late: that start is gone, take a new one; a few times at most, so a
                # busy machine still makes progress
                retry = oversleeps < MAX_OVERSLEEPS
                if retry and self._clock.monotonic() - start > late:
                    oversleeps += 1
                    continue
                went = self._go(host, start, force=not retry)
                if went:
                    return
                if went is None:  # dropped: the next start is reserved after the other's
                    continue
                later = self._later(host, start, late)
                if later is not None:  # the same start, a little later: no interval lost
                    with self._lock:
                        bisect.insort(self._starts.setdefault(host, deque()), later)
                    continue
                oversleeps += 1
        finally:
            with self._lock:
                self._waiting[host] -= 1

    def _local_turn(self, host: str) -> None:
        """Wait until this process may send to `host`: an interval after its previous request,
        and none let go that is not written yet (at intervals of RESERVE_SPAN and more)."""
        hold = self.interval(host) >= RESERVE_SPAN  # at high rates a gap is no one's burden
        while True:
            with self._turns:
                floor = self._last.get(host, float("-inf")) + self.interval(host)
                if hold and self._unwritten.get(host):  # `_written` notifies
                    until = self._clock.monotonic() + UNWRITTEN_WAIT
                    self._clock.wait_until(self._turns, until)
                    continue
                if (now := self._clock.monotonic()) >= floor - LATE:
                    return
            # the floor only ever moves on, so a sleep (outside the lock) waits for it as well
            # as a wait on the condition would; and a virtual clock's sleep needs no other thread
            self._clock.sleep(floor - now)

    def _go(self, host: str, start: float, *, force: bool) -> bool | None:
        """Use the start now if this process's own pace allows it (or `force`: a few dropped);
        None: another process's request stands in the way (`_claim`), the start is dropped."""
        hold = self.interval(host) >= RESERVE_SPAN
        with self._turns:
            now = self._clock.monotonic()
            floor = self._last.get(host, float("-inf")) + self.interval(host)
            blocked = (hold and self._unwritten.get(host)) or now < floor - LATE
            if blocked and not force:  # forced: as late as it is, like an overslept start
                return False
            if hold and not self._claim(host):
                return None
            self._last[host] = max(self._last.get(host, float("-inf")), now)
            self._unwritten[host] = self._unwritten.get(host, 0) + 1
        self._released.at, self._released.host = now, host
        self._released.claimed = hold
        if now - start > LATE:
            self._push(host, now)
        return True

    def sent(self, host: str, when: float) -> None:
        """The fetcher wrote the request at `when` (monotonic); the next waits an interval after.

        On a loaded machine a thread may lose the CPU between its start and its
        request leaving; the host sees the request then, so the pace counts from then.
        """
        lag = when - getattr(self._released, "at", when)
        if lag > SEND_SLACK:  # within it, the start it was let go at stands for it
            with self._lock:
                self._last[host] = max(self._last.get(host, float("-inf")), when)
        self._written(host, when)
        if lag > SEND_SLACK:
            self._push(host, when)

    def hold(self, host: str, seconds: float) -> None:
        """The host asked for a pause (Retry-After): no process starts a request before it ends."""
        with self._turns:
            self._starts.pop(host, None)  # starts reserved before the pause are void
            until = self._clock.monotonic() + seconds
            self._last[host] = max(self._last.get(host, float("-inf")), until - self.interval(host))
        self._push(host, until - self.interval(host))

    def _written(self, host: str, when: float | None = None) -> None:
        """This thread's request to `host` is written at `when` (None: now, or never will
        be): the next may go, in this process and, under a claim, in the others."""
        if getattr(self._released, "host", None) != host:
            return
        self._released.host = None
        if self._released.claimed:
            self._unclaim(host, self._clock.monotonic() if when is None else when)
        with self._turns:
            self._unwritten[host] -= 1
            self._turns.notify_all()

    def _claim(self, host: str) -> bool:
        """Whether a request to `host` may go as far as the other processes are concerned.

        Reserved starts keep processes an interval apart when each request leaves on
        time; one that leaves late (its process starved of CPU) pushes `next_at` on,
        but a start another process reserved before that push stood, and went that
        much less than an interval after it. So at intervals where a gap matters, a
        request is let go under a claim (`ScheduleDb.claim_send`), given back with
        its written time.
        """
        return self._db.claim_send(host, self._sender, self.interval(host), SEND_SLACK, self._now())

    def _unclaim(self, host: str, written: float) -> None:
        """Give the claim back, with when the request was written (monotonic)."""
        ago = self._clock.monotonic() - written
        self._db.give_back_send(host, self._sender, ago, self._now())

    def _push(self, host: str, started: float) -> None:
        """No reserved start of `host` earlier than an interval after `started` (monotonic)."""
        greatest = "GREATEST" if self._db.pg else "MAX"
        ago = self._clock.monotonic() - started
        after = self.interval(host) - ago
        self._move_next(host, f"{greatest}(next_at, {self._db.now} + :after)", after=after)

    def _move_next(self, host: str, value: str, **params: object) -> None:
        """Set the host's `next_at` to `value`; keep it as ours when it was ours before."""
        with self._lock:
            tail = self._tail.pop(host, None)
        if tail is not None and self._move_ours(host, tail, value, **params):
            return
        self._db.run(
            f"UPDATE host_rate SET next_at = {value} WHERE host = :host",
            host=host,
            now=self._now(),
            **params,
        )

    def _move_ours(self, host: str, tail: float, value: str, **params: object) -> bool:
        """Set `next_at` to `value` only while it is still `tail`, what this process last
        wrote (nobody reserved since); True when it was, and the new value is ours."""
        row = self._db.one(
            f"UPDATE host_rate SET next_at = {value} "
            "WHERE host = :host AND next_at = :tail RETURNING next_at",
            host=host,
            tail=tail,
            now=self._now(),
            **params,
        )
        if row is None:
            return False
        with self._lock:
            self._tail[host] = float(row[0])
        return True

    def _later(self, host: str, start: float, late: float) -> float | None:
        """A later start instead of `start`, which this process's own pace blocks; or None.

        A thread that wrote its request a little late (the CPU was busy), or was let
        go a little after its start, moves this process's floor past the next
        reserved start; a thread that waited for that floor finds its start already
        past. Dropping that start costs the host a whole interval; using it at the
        floor is safe when nobody else has reserved since this process last set
        `next_at` (every start after it is this process's, and waits for the same
        floor), and `next_at` moves an interval past the floor in the same
        statement, so other processes' next starts keep their distance too.
        """
        with self._lock:
            floor = self._last.get(host, float("-inf")) + self.interval(host)
            tail = self._tail.get(host)
            unwritten = self._unwritten.get(host)
        floor = max(floor, self._clock.monotonic())
        if unwritten or tail is None or not start < floor <= start + late:
            return None
        greatest = "GREATEST" if self._db.pg else "MAX"
        value = f"{greatest}(next_at, {self._db.now} + :after)"
        after = floor - self._clock.monotonic() + self.interval(host)
        # another process reserved after ours: its start stands, ours is dropped
        return floor if self._move_ours(host, tail, value, after=after) else None

    def _reserve(self, host: str) -> None:
        """Reserve the next starts of `host` in the store; queue them on the local clock."""
        interval = self.interval(host)
        with self._lock:
            waiting = self._waiting.get(host, 1)
        count = max(1, min(waiting, int(RESERVE_SPAN / interval)))
        span = interval * count
        now, greatest = self._db.now, "GREATEST" if self._db.pg else "MAX"
        row = self._db.one(
            f"UPDATE host_rate SET next_at = {greatest}(next_at, {now} + :lead) + :span "
            f"WHERE host = :host RETURNING next_at - :span, {now}, next_at",
            lead=min(LEAD, interval / 2),  # slack, but never longer than the pace itself
            span=span,
            host=host,
            now=self._now(),
        )
        assert row is not None  # the row was inserted before the first slot
        first, db_now = float(row[0]), float(row[1])
        local = self._clock.monotonic() + (first - db_now)
        with self._lock:
            self._tail[host] = float(row[2])
            queue = self._starts.setdefault(host, deque())
            queue.extend(local + i * interval for i in range(count))
