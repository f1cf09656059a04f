"""The fetcher against real misbehaving servers: every cap ends in the finding that names it."""

from __future__ import annotations

import gzip
import itertools
from collections.abc import Iterator
from typing import Any

import pytest

from adapter.errors import FetchError
from adapter.http.addresses import AddressPolicy
from adapter.http.fetcher import Fetcher
from adapter.limits import Limits
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


def fetcher_for(server: SiteServer, limits: Limits = SMALL, **kw: Any) -> Fetcher:
    return Fetcher(limits, policy=AddressPolicy([server.origin]), retry_base_delay=0.05, **kw)


def fail(server: SiteServer, path: str, limits: Limits = SMALL, **kw: Any) -> FetchError:
    with fetcher_for(server, limits) as f, pytest.raises(FetchError) as info:
        f.get(server.url(path), **kw)
    return info.value


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
    error = fail(site[0], path)
    assert error.code == "fetch/timeout"
    assert "total_timeout (2 s)" in error.message


def test_silent_server_ends_in_a_timeout(site: list[SiteServer]) -> None:
    assert fail(site[0], "/c/hang/page").code == "fetch/timeout"


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
    limits = Limits(total_timeout=10, max_retry_after=5)
    with fetcher_for(server, limits) as f:
        got = f.get(server.url("/t/503-then-ok"))
    assert got.status == 200
    times = requests_to(server, "/t/503-then-ok")[-3:]
    assert all(b - a >= 0.95 for a, b in itertools.pairwise(times))


def test_retry_after_http_date_is_honoured(site: list[SiteServer]) -> None:
    server = site[0]
    reset_counters(server, ["/t/429-date"])
    with fetcher_for(server, Limits(total_timeout=10, max_retry_after=5)) as f:
        got = f.get(server.url("/t/429-date"))
    assert got.status == 200
    first, second = requests_to(server, "/t/429-date")[-2:]
    assert second - first >= 0.9  # an HTTP-date two seconds ahead, to the second


def test_transient_errors_back_off_then_succeed(site: list[SiteServer]) -> None:
    server = site[0]
    reset_counters(server, ["/t/502-then-ok"])
    with fetcher_for(server) as f:
        assert f.get(server.url("/t/502-then-ok")).status == 200
    assert len(requests_to(server, "/t/502-then-ok")) >= 3


def test_retries_are_bounded(site: list[SiteServer]) -> None:
    server = site[0]
    before = len(requests_to(server, "/t/503-always"))
    with fetcher_for(server, Limits(max_retries=2, total_timeout=10)) as f:
        got = f.get(server.url("/t/503-always"))
    assert got.status == 503
    assert len(requests_to(server, "/t/503-always")) - before == 3


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
