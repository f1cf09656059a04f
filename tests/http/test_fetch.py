"""The fetcher against real misbehaving servers: every cap ends in the finding that names it.

Waits (Retry-After, backoff, the total deadline) run on a virtual clock
(`tests.support.clock`), so they cost no time; one test of each, marked
`slow`, waits them out for real.
"""

from __future__ import annotations

import gzip
import itertools
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from adapter.errors import FetchError
from adapter.http.addresses import AddressPolicy
from adapter.http.connections import Watchdog
from adapter.http.fetcher import Fetcher
from adapter.limits import Limits
from tests.support.clock import FakeClock
from tests.support.fixture_server import SiteServer, start_site, stop
from tests.support.hostile import CORPUS, reset_counters, start_corpus

SMALL = Limits(
    connect_timeout=2,
    read_timeout=1.5,
    total_timeout=2,
    max_page_bytes=1_048_576,
    max_retries=3,
    max_retry_after=5,
    host_failures_before_pause=2,
)

EXTRA: dict[str, Any] = {
    "/t/gz": {"file": "good/1.html", "gzip": True, "headers": [["Content-Encoding", "gzip"]]},
    "/t/chain3": {"mode": "redirect_chain", "file": "good/1.html", "hops": 3},
    "/t/503-then-ok": {
        "mode": "fail_then_ok",
        "file": "good/1.html",
        "failures": 2,
        "fail_status": 503,
        "retry_after": "1",
    },
    "/t/429-date": {
        "mode": "fail_then_ok",
        "file": "good/1.html",
        "failures": 1,
        "fail_status": 429,
        "retry_after": "date:2",
    },
    "/t/502-then-ok": {
        "mode": "fail_then_ok",
        "file": "good/1.html",
        "failures": 2,
        "fail_status": 502,
    },
    "/t/503-always": {
        "mode": "fail_then_ok",
        "failures": 10**6,
        "fail_status": 503,
        "retry_after": "0",
    },
    "/t/drop": {"mode": "drop"},
}


@pytest.fixture(scope="module")
def site() -> Iterator[list[SiteServer]]:
    servers = start_corpus()
    servers[0].extra_rules.update(EXTRA)
    yield servers
    stop(servers)


def fetcher_for(
    server: SiteServer, limits: Limits = SMALL, clock: FakeClock | None = None, **kw: Any
) -> Fetcher:
    if clock is not None:  # its own watchdog, on the virtual clock
        kw["watchdog"] = Watchdog(clock)
    return Fetcher(limits, policy=AddressPolicy([server.origin]), retry_base_delay=0.05, **kw)


def fail(server: SiteServer, path: str, limits: Limits = SMALL, **kw: Any) -> FetchError:
    with fetcher_for(server, limits) as f, pytest.raises(FetchError) as info:
        f.get(server.url(path), **kw)
    return info.value


def fail_on_virtual_time(server: SiteServer, path: str) -> FetchError:
    """The fetch in a thread while the clock moves on: the watchdog's deadline passes in
    milliseconds, whatever the server does (real sockets; read_timeout stays real)."""
    clock = FakeClock()
    outcome: list[BaseException] = []

    def fetch() -> None:
        try:
            with fetcher_for(server, clock=clock) as f:
                f.get(server.url(path))
        except BaseException as exc:  # handed to the test thread
            outcome.append(exc)

    thread = threading.Thread(target=fetch)
    thread.start()
    while thread.is_alive():
        clock.advance(0.25)
        thread.join(0.02)
    assert len(outcome) == 1 and isinstance(outcome[0], FetchError), outcome
    return outcome[0]


def requests_to(server: SiteServer, path: str) -> list[float]:
    return [r.time for r in server.log if r.path.split("?")[0] == path]


def test_good_page_and_its_gzip_twin_read_the_same(site: list[SiteServer]) -> None:
    with fetcher_for(site[0]) as f:
        plain = f.get(site[0].url("/good/1"))
        zipped = f.get(site[0].url("/t/gz"))
    assert plain.status == 200 and b"Hubbard Brook" in plain.body
    assert zipped.body == plain.body
    assert zipped.headers["content-encoding"] == "gzip"


@pytest.mark.parametrize("path", ["/c/trickle-body/page", "/c/trickle-headers/page"])
def test_trickling_server_is_cut_at_the_total_deadline(site: list[SiteServer], path: str) -> None:
    # each byte arrives well within read_timeout; only the watchdog can end this
    error = fail_on_virtual_time(site[0], path)
    assert error.code == "fetch/timeout"
    assert "total_timeout (2 s)" in error.message


@pytest.mark.slow
def test_trickling_body_is_cut_at_the_total_deadline_in_real_time(
    site: list[SiteServer],
) -> None:
    error = fail(site[0], "/c/trickle-body/page")
    assert error.code == "fetch/timeout"
    assert "total_timeout (2 s)" in error.message


def test_silent_server_ends_in_a_timeout(site: list[SiteServer]) -> None:
    assert fail_on_virtual_time(site[0], "/c/hang/page").code == "fetch/timeout"


def test_endless_body_stops_at_the_cap_that_it_names(site: list[SiteServer]) -> None:
    error = fail(site[0], "/c/endless-body/page")
    assert error.code == "fetch/too-large"
    assert "max_page_bytes (1048576 bytes)" in error.message


def test_truncate_keeps_exactly_the_head(site: list[SiteServer]) -> None:
    with fetcher_for(site[0]) as f:
        got = f.get(site[0].url("/c/endless-body/page"), max_bytes=1000, truncate=True)
    assert got.truncated and len(got.body) == 1000 and got.body.startswith(b"<p>xxx")


def test_gzip_bomb_is_refused_at_the_decompressed_cap(site: list[SiteServer]) -> None:
    error = fail(site[0], "/c/gzip-bomb/page")
    assert error.code == "fetch/too-large"
    assert "decompresses past max_page_bytes" in error.message


def test_gzip_of_empty_blocks_is_capped_on_the_wire(site: list[SiteServer]) -> None:
    error = fail(site[0], "/c/gzip-void/page")
    assert error.code == "fetch/too-large"
    assert "on the wire" in error.message


@pytest.mark.parametrize("path", ["/c/gzip-broken/page", "/c/encoding-unasked/page"])
def test_broken_or_unasked_content_encoding(site: list[SiteServer], path: str) -> None:
    assert fail(site[0], path).code == "fetch/bad-content-encoding"


@pytest.mark.parametrize("path", ["/c/length-long/page", "/c/reset-mid-body/page"])
def test_body_cut_short_is_a_connection_failure(site: list[SiteServer], path: str) -> None:
    error = fail(site[0], path)
    assert error.code == "fetch/connection-failed"
    assert "body cut off" in error.message


def test_short_content_length_reads_only_what_was_declared(site: list[SiteServer]) -> None:
    with fetcher_for(site[0]) as f:
        got = f.get(site[0].url("/c/length-short/page"))
        full = f.get(site[0].url("/c/dataset.html")).body
    assert got.body == full[:-600]


def test_redirects_loop_and_chain(site: list[SiteServer]) -> None:
    assert fail(site[0], "/c/redirect-loop/page").code == "fetch/redirect-loop"
    error = fail(site[0], "/c/redirect-chain/page")
    assert error.code == "fetch/too-many-redirects"
    assert "max_redirects (10)" in error.message
    with fetcher_for(site[0]) as f:
        got = f.get(site[0].url("/t/chain3"))
    assert got.status == 200 and len(got.redirects) == 3 and got.final_url.endswith("?n=0")


@pytest.mark.parametrize("path", ["/c/header-line-1mb/page", "/c/header-fields-150/page"])
def test_oversized_headers_are_a_finding(site: list[SiteServer], path: str) -> None:
    assert fail(site[0], path).code == "fetch/headers-too-large"


def test_retry_after_seconds_is_honoured(site: list[SiteServer]) -> None:
    server = site[0]
    reset_counters(server, ["/t/503-then-ok"])
    clock = FakeClock()
    with fetcher_for(server, Limits(total_timeout=10, max_retry_after=5), clock) as f:
        got = f.get(server.url("/t/503-then-ok"))
    assert got.status == 200
    assert clock.sleeps == [1.0, 1.0]  # two 503s, each asking for a second


def test_retry_after_past_the_deadline_is_not_waited_for(site: list[SiteServer]) -> None:
    server = site[0]
    reset_counters(server, ["/t/503-then-ok"])
    clock = FakeClock()
    limits = Limits(total_timeout=1.5, max_retry_after=5)
    with fetcher_for(server, limits, clock) as f, pytest.raises(FetchError) as info:
        f.get(server.url("/t/503-then-ok"))
    assert info.value.code == "fetch/rate-limited"
    assert "would pass total_timeout (1.5 s)" in info.value.message
    assert clock.sleeps == [1.0]  # the second second would have passed the deadline


@pytest.mark.slow
def test_retry_after_seconds_is_honoured_in_real_time(site: list[SiteServer]) -> None:
    server = site[0]
    reset_counters(server, ["/t/503-then-ok"])
    limits = Limits(total_timeout=10, max_retry_after=5)
    with fetcher_for(server, limits) as f:
        got = f.get(server.url("/t/503-then-ok"))
    assert got.status == 200
    times = requests_to(server, "/t/503-then-ok")[-3:]
    assert all(b - a >= 0.95 for a, b in itertools.pairwise(times))


def test_retry_after_http_date_is_honoured(site: list[SiteServer]) -> None:
    server = site[0]
    reset_counters(server, ["/t/429-date"])
    clock = FakeClock()
    with fetcher_for(server, Limits(total_timeout=10, max_retry_after=5), clock) as f:
        got = f.get(server.url("/t/429-date"))
    assert got.status == 200
    [waited] = clock.sleeps  # an HTTP-date two seconds ahead, to the second
    assert 0.9 <= waited <= 5


def test_transient_errors_back_off_then_succeed(site: list[SiteServer]) -> None:
    server = site[0]
    reset_counters(server, ["/t/502-then-ok"])
    clock = FakeClock()
    with fetcher_for(server, clock=clock) as f:
        assert f.get(server.url("/t/502-then-ok")).status == 200
    assert len(requests_to(server, "/t/502-then-ok")) >= 3
    first, second = clock.sleeps  # 0.05 s, then 0.1 s, each with jitter of +-50 %
    assert 0.025 <= first < 0.075 and 0.05 <= second < 0.15


def test_retries_are_bounded(site: list[SiteServer]) -> None:
    server = site[0]
    before = len(requests_to(server, "/t/503-always"))
    clock = FakeClock()
    with fetcher_for(server, Limits(max_retries=2, total_timeout=10), clock) as f:
        got = f.get(server.url("/t/503-always"))
    assert got.status == 503
    assert len(requests_to(server, "/t/503-always")) - before == 3
    assert clock.sleeps == [0.0, 0.0]  # Retry-After: 0


def test_retry_after_past_the_limit_pauses_the_host(site: list[SiteServer]) -> None:
    server = site[0]
    with fetcher_for(server) as f:
        with pytest.raises(FetchError) as info:
            f.get(server.url("/c/retry-after-a-day/page"))
        assert info.value.code == "fetch/host-paused"
        assert "max_retry_after" in info.value.message
        before = len(server.log)
        with pytest.raises(FetchError) as again:
            f.get(server.url("/good/1"))
        assert again.value.code == "fetch/host-paused"
        assert len(server.log) == before  # paused: not even asked
        assert list(f.paused_hosts()) == [server.origin.removeprefix("http://")]


def test_a_failing_host_is_paused_while_another_goes_on(site: list[SiteServer]) -> None:
    bad, good = site[0], start_site("site", CORPUS, {"/good/2": {"file": "good/2.html"}})[0]
    try:
        policy = AddressPolicy([bad.origin, good.origin])
        limits = Limits(max_retries=0, host_failures_before_pause=2, total_timeout=3)
        with Fetcher(limits, policy=policy) as f:
            for _ in range(2):
                with pytest.raises(FetchError) as info:
                    f.get(bad.url("/t/drop"))
                assert info.value.code == "fetch/connection-failed"
            asked = len(requests_to(bad, "/t/drop"))
            with pytest.raises(FetchError) as paused:
                f.get(bad.url("/t/drop"))
            assert paused.value.code == "fetch/host-paused"
            assert len(requests_to(bad, "/t/drop")) == asked
            assert f.get(good.url("/good/2")).status == 200
    finally:
        stop([good])


def test_redirect_to_another_origin_on_loopback_is_refused(site: list[SiteServer]) -> None:
    main, other = site[0], site[1]
    before = len(other.log)
    error = fail(main, "/c/redirect-to-other-origin/page")
    assert error.code == "fetch/unsafe-url"
    assert "loopback" in error.message
    assert len(other.log) == before  # no request ever reached it


@pytest.mark.parametrize(
    "path",
    [
        "/c/redirect-to-metadata/page",
        "/c/redirect-to-file/page",
        "/c/redirect-to-decimal-ip/page",
        "/c/redirect-userinfo/page",
    ],
)
def test_redirects_to_unsafe_places_are_refused(site: list[SiteServer], path: str) -> None:
    assert fail(site[0], path).code == "fetch/unsafe-url"


def test_the_connect_time_check_holds_even_if_the_early_check_is_fooled(
    site: list[SiteServer],
) -> None:
    """What DNS rebinding does: the early check saw a public address, the socket would not."""

    class Fooled(AddressPolicy):
        def refusal(self, url: str, max_length: int) -> str | None:
            return None

    with Fetcher(SMALL, policy=Fooled()) as f, pytest.raises(FetchError) as info:
        f.get(site[0].url("/good/1"))
    assert info.value.code == "fetch/unsafe-url"
    assert "loopback" in info.value.message
    with Fetcher(SMALL, policy=Fooled([site[0].origin])) as f:
        assert f.get(site[0].url("/good/1")).status == 200


def test_url_length_cap_names_the_limit(site: list[SiteServer]) -> None:
    error = fail(site[0], "/good/1?" + "a" * 3000)
    assert error.code == "fetch/unsafe-url"
    assert "max_url_length (2048" in error.message


def test_head_reads_no_body(site: list[SiteServer]) -> None:
    with fetcher_for(site[0]) as f:
        got = f.head(site[0].url("/c/endless-body/page"))
    assert got.status == 200 and got.body == b""


def test_gzip_roundtrip_of_a_large_but_allowed_body(site: list[SiteServer]) -> None:
    server = site[0]
    server.extra_rules["/t/big-gz"] = {
        "body": "y" * 900_000,
        "gzip": True,
        "headers": [["Content-Encoding", "gzip"]],
        "content_type": "text/plain",
    }
    with fetcher_for(server) as f:
        got = f.get(server.url("/t/big-gz"))
    assert got.body == b"y" * 900_000
    assert gzip.compress(got.body)  # sanity: what we read is what was sent


def test_a_transport_failure_is_said_in_words_without_python_text() -> None:
    import socket as _socket

    from adapter.http.body import short

    dns = OSError("wrapper")
    dns.__cause__ = _socket.gaierror(-2, "Name or service not known")
    assert short(dns) == "the host name does not resolve (DNS)"
    raw = ValueError("bad <urllib3.connection.HTTPConnection object at 0x7f00>: x\x00y")
    assert short(raw) == "bad x y"
