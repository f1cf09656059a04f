"""One value per key for every user in this process at once, closed by the last of them.

Node runs side by side share one store engine and one checking pool: each
run says it uses one (a context manager), the first builds it, the last
closes it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Shared(Generic[K, V]):
    """Values built by `make(key)` on first use and given to `close` after the last."""

    def __init__(self, make: Callable[[K], V], close: Callable[[V], None]) -> None:
        self._make, self._close = make, close
        self._held: dict[K, tuple[V, int]] = {}  # key -> (value, users)
        self._lock = threading.Lock()

    @contextmanager
    def use(self, key: K) -> Iterator[V]:
        with self._lock:
            value, users = self._held[key] if key in self._held else (self._make(key), 0)
            self._held[key] = (value, users + 1)
        try:
            yield value
        finally:
            with self._lock:
                value, users = self._held[key]
                if users > 1:
                    self._held[key] = (value, users - 1)
                else:
                    del self._held[key]
                    self._close(value)
