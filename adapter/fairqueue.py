"""A queue that serves its keys in turn: the checking pool's pages, node by node.

Kept apart from the pool (`adapter.sync.checkpool`) since nothing in it is a page or a node:
one key with a long backlog must not hold back another's first item, and a retried item goes
before its key's others.
"""

from __future__ import annotations

from collections import deque
from typing import Generic, TypeVar

T = TypeVar("T")


class FairQueue(Generic[T]):
    """Items queued per key, taken from the keys in turn: one key with many waiting
    items never holds back another's first."""

    def __init__(self) -> None:
        self._queues: dict[str, deque[T]] = {}  # keys with items waiting, in turn order

    def __bool__(self) -> bool:
        return bool(self._queues)

    def put(self, key: str, item: T, *, front: bool = False) -> None:
        """Queue `item` under `key` (`front`: before that key's others, a retry)."""
        waiting = self._queues.setdefault(key, deque())
        waiting.appendleft(item) if front else waiting.append(item)

    def take(self) -> T:
        """The oldest item of the key whose turn it is (IndexError when empty)."""
        if not self._queues:
            raise IndexError("take from an empty FairQueue")
        key = next(iter(self._queues))
        waiting = self._queues.pop(key)
        item = waiting.popleft()
        if waiting:
            self._queues[key] = waiting  # last in turn: its next item waits for the others'
        return item

    def drain(self) -> list[T]:
        """Every item left, the queue emptied."""
        items = [item for waiting in self._queues.values() for item in waiting]
        self._queues.clear()
        return items
