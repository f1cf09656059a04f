"""A set of URLs in bounded memory, for deduplicating a million sitemap entries."""

from __future__ import annotations

from array import array


class LocSet:
    """A set of URLs kept as 64-bit hashes in one open-addressing array: 8-16 bytes per URL.

    Python's string hash is 64-bit SipHash, salted per process; a collision
    among a million URLs has a chance of about 3 in 100 million.
    """

    # small at first: hundreds of node runs discover at once, most of a few thousand URLs
    def __init__(self, capacity: int = 1 << 10) -> None:
        self._slots = array("Q", [0]) * capacity
        self._mask = capacity - 1
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def add(self, key: str) -> bool:
        """Add `key`; True when it was not there yet."""
        h = (hash(key) & 0xFFFFFFFFFFFFFFFF) or 1
        slots, mask = self._slots, self._mask
        i = h & mask
        while True:
            v = slots[i]
            if v == 0:
                slots[i] = h
                self._count += 1
                if self._count * 2 > mask:
                    self._grow()
                return True
            if v == h:
                return False
            i = (i + 1) & mask

    def _grow(self) -> None:
        old = self._slots
        self._slots = array("Q", [0]) * (2 * len(old))
        self._mask = 2 * len(old) - 1
        slots, mask = self._slots, self._mask
        for h in old:
            if h:
                i = h & mask
                while slots[i]:
                    i = (i + 1) & mask
                slots[i] = h
