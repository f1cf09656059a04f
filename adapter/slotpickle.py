"""Cheap pickling for the slots dataclasses a multi-process sync sends between processes.

Python 3.11 pickles a `slots=True` dataclass through generated
`__getstate__`/`__setstate__` that call `dataclasses.fields()` for every
object: in a 10,000-page sync that was the writing process's largest single
cost (half of its unpickling time, ~8 objects a page). `fast_pickle` gives
a class the same state, a tuple of its field values in declaration order,
from names read once.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


def fast_pickle(cls: type[T]) -> type[T]:
    """Decorate a slots dataclass (put it above `@dataclass`)."""
    names = tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]

    def getstate(self: Any) -> tuple[Any, ...]:
        return tuple([getattr(self, name) for name in names])

    def setstate(self: Any, state: tuple[Any, ...]) -> None:
        for name, value in zip(names, state, strict=True):
            object.__setattr__(self, name, value)  # also for frozen classes

    cls.__getstate__ = getstate  # type: ignore[method-assign]
    cls.__setstate__ = setstate  # type: ignore[attr-defined]
    return cls
