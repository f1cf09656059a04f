"""A host's concurrency slots on one machine: record locks of a file beside the store.

On SQLite the store, and so every process sharing a host's pace, is on one
machine by construction; the slots of `adapter.store.hostrate` then need no
table. Slot `i` of a host is one byte of `store.db-hostslots` (at an offset
drawn from the host's name), held with an fcntl record lock: taking or giving
one back is one system call, where an UPDATE of a slot table cost ~0.1 ms of
CPU, two a request; and the kernel frees a process's locks the instant it
ends, however it ends, so no lease is needed.

Record locks belong to a process, not to a thread or a descriptor, and
closing any descriptor of the file drops them all: so a process opens the
file once (`open_slots`, shared by every pacer of every store object on it),
and its threads share that descriptor with a record of which slots they hold.
A forked child inherits the descriptor but none of the locks: it forgets the
parent's record (`os.register_at_fork`) and takes slots of its own.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import threading

from adapter.errors import StoreError

HOST_SPAN = 1 << 20  # bytes per host: its slots' offsets; concurrency above it is refused
_BUSY = (errno.EACCES, errno.EAGAIN)  # another process holds the byte


def _base(host: str) -> int:
    """Where `host`'s bytes begin: from its name, the same in every process (40 bits of a
    hash, so two hosts of one store share bytes with a chance of one in 10^12)."""
    digest = hashlib.blake2b(host.encode(), digest_size=5).digest()
    return int.from_bytes(digest, "big") * HOST_SPAN


class SlotFile:
    """The slots of every host, as this process sees them through its one descriptor."""

    def __init__(self, path: str | None) -> None:
        """`path` None: a store in memory, of one process by construction, so the record
        of this process's own slots is the whole truth."""
        self.path = path
        self._fd = None if path is None else os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        self.users = 0
        self._lock = threading.Lock()
        # per host, the slots this process's threads hold, and the pacer each is held for
        self._held: dict[str, dict[int, object]] = {}
        self._bases: dict[str, int] = {}

    def take(self, host: str, concurrency: int, holder: object) -> int | None:
        """A free slot of `host` below `concurrency`, now held for `holder`; None when
        every one is held (by this process or another)."""
        if concurrency > HOST_SPAN:
            raise ValueError(f"concurrency above {HOST_SPAN}")
        with self._lock:
            held = self._held.setdefault(host, {})
            base = self._bases.get(host)
            if base is None:
                base = self._bases[host] = _base(host)
            for number in range(concurrency):
                if number in held or not self._lock_byte(base + number):
                    continue
                held[number] = holder
                return number
        return None

    def give(self, host: str, number: int) -> None:
        with self._lock:
            if self._fd is not None:
                fcntl.lockf(self._fd, fcntl.LOCK_UN, 1, self._bases[host] + number)
            del self._held[host][number]

    def give_all(self, holder: object) -> None:
        """Every slot still held for `holder` (a pacer that closes holds none)."""
        with self._lock:
            mine = [
                (h, n) for h, held in self._held.items() for n, x in held.items() if x is holder
            ]
        for host, number in mine:
            self.give(host, number)

    def _lock_byte(self, offset: int) -> bool:
        if self._fd is None:
            return True
        try:
            fcntl.lockf(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, offset)
        except OSError as exc:
            if exc.errno in _BUSY:
                return False
            raise StoreError(f"the host slots in {self.path}: {exc}") from exc
        return True

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # drops whatever this process still holds of the file
            self._fd = None

    def forked(self) -> None:
        """In a forked child: the parent's locks are not ours, nor its threads' record."""
        self._lock = threading.Lock()
        self._held = {}


_FILES: dict[str, SlotFile] = {}  # real path of a slot file -> this process's one view of it
_FILES_LOCK = threading.Lock()


def open_slots(path: str | None) -> SlotFile:
    """This process's view of the slot file at `path` (None: a store in memory, a view of
    its own); give it back with `close_slots`."""
    if path is None:
        slots = SlotFile(None)
        slots.users = 1
        return slots
    key = os.path.realpath(path)
    with _FILES_LOCK:
        slots = _FILES.get(key) or SlotFile(key)
        _FILES[key] = slots
        slots.users += 1
        return slots


def close_slots(slots: SlotFile) -> None:
    with _FILES_LOCK:
        slots.users -= 1
        if slots.users > 0:
            return
        if slots.path is not None:
            _FILES.pop(slots.path, None)
    slots.close()


def _after_fork() -> None:
    global _FILES_LOCK
    _FILES_LOCK = threading.Lock()
    for slots in _FILES.values():
        slots.forked()


os.register_at_fork(after_in_child=_after_fork)
