"""The check page under waitress, trusting the fixture sites it is asked about."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from adapter.web.app import WebApp
from adapter.web.checking import Checker
from adapter.web.ratelimit import RateLimit
from tests.support.fixture_server import SiteServer, start_site, stop
from tests.support.web import ServedWeb, serve_wsgi

MakeWeb = Callable[..., ServedWeb]


@pytest.fixture
def sites() -> Iterator[Callable[[str], list[SiteServer]]]:
    """`sites("name")`: every server of one fixture site (its main host first)."""
    started: list[list[SiteServer]] = []

    def _start(name: str) -> list[SiteServer]:
        servers = start_site(name)
        started.append(servers)
        return servers

    yield _start
    for servers in started:
        stop(servers)


@pytest.fixture
def make_web(tmp_path: Path) -> Iterator[MakeWeb]:
    """`make_web(trusted=[...], per_minute=30)`: the check page on an ephemeral port."""
    stack: list[tuple[object, RateLimit]] = []

    def _make(
        trusted: list[str] | tuple[str, ...] = (), per_minute: int = 30, deadline: float = 30.0
    ) -> ServedWeb:
        rate = RateLimit(tmp_path / f"rate-{len(stack)}.db", per_minute)
        app = WebApp(Checker(tuple(trusted), deadline=deadline), rate)
        context = serve_wsgi(app)
        served = context.__enter__()
        stack.append((context, rate))
        return served

    yield _make
    for context, rate in reversed(stack):
        context.__exit__(None, None, None)  # type: ignore[attr-defined]
        rate.close()


def origins(servers: list[SiteServer]) -> list[str]:
    return [s.origin for s in servers]
