"""Hypothesis's Unicode tables, computed once for the run instead of once in every worker.

`st.text()` draws from the characters UTF-8 can encode, and `st.characters()` from Unicode
categories: Hypothesis finds both by trying every code point (about 1.4 CPU-s together) and
keeps them in .hypothesis/unicode_data. A fresh checkout (CI's) has no .hypothesis, so each
xdist worker computed them again in its first property test, at the same moment. The
controller fills the cache before it starts the workers; they read it (a few ms).
"""

from __future__ import annotations

import pytest


def warm_unicode_tables(config: pytest.Config) -> None:
    """Called from tests/conftest.py's `pytest_configure`: in the xdist controller only, and
    only when it will start workers (a single process computes the tables when it needs them).
    Best effort: the functions are Hypothesis's internals, and a version without them (or a
    read-only checkout) only loses the saving."""
    if hasattr(config, "workerinput") or not config.getoption("numprocesses", None):
        return
    try:
        from hypothesis.internal.charmap import charmap, intervals_from_codec

        charmap()
        intervals_from_codec("utf-8")
    except Exception:  # a cache warm-up: the workers compute what is missing
        return
