"""robots.txt: RFC 9309 matching on literal files; fetch semantics over real HTTP."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.discovery.robots import RobotsCache, entry_robots_url, robots_url
from adapter.discovery.robotstxt import parse_robots, product_token
from adapter.errors import FetchError
from adapter.http.addresses import AddressPolicy
from adapter.http.fetcher import Fetcher
from adapter.http.politeness import HostPacer
from tests.support.fixture_server import SiteServer

UA = "DataONE-SlenderAdapter/0.1.0 (+https://github.com/DataONEorg)"


def policy(text: str | bytes, ua: str = UA) -> object:
    return parse_robots(text.encode() if isinstance(text, str) else text, ua)


def allowed(text: str | bytes, path: str, ua: str = UA) -> bool:
    return parse_robots(text.encode() if isinstance(text, str) else text, ua).can_fetch(
        "https://repo.example" + path
    )


def test_product_token_is_the_name_before_the_version() -> None:
    assert product_token(UA) == "DataONE-SlenderAdapter"
    assert product_token("curl/8.0") == "curl"


def test_our_group_wins_over_star() -> None:
    text = "User-agent: *\nDisallow: /\n\nUser-agent: DataONE-SlenderAdapter\nDisallow: /private\n"
    assert allowed(text, "/dataset/1")
    assert not allowed(text, "/private/x")
    assert not allowed(text, "/dataset/1", ua="OtherBot/1.0")


def test_group_name_is_matched_case_insensitively() -> None:
    text = "User-agent: dataone-slenderadapter\nDisallow: /x\n"
    assert not allowed(text, "/x/1")


def test_longest_match_wins_not_first_match() -> None:
    text = "User-agent: *\nDisallow: /data\nAllow: /data/public\n"
    assert allowed(text, "/data/public/x")  # urllib.robotparser says False here
    assert not allowed(text, "/data/private")


def test_allow_wins_a_tie() -> None:
    text = "User-agent: *\nDisallow: /page\nAllow: /page\n"
    assert allowed(text, "/page")


def test_wildcards_and_end_anchor() -> None:
    text = "User-agent: *\nDisallow: /*.pdf$\nDisallow: /tmp*/\n"
    assert not allowed(text, "/files/a.pdf")
    assert allowed(text, "/files/a.pdf?download=1")
    assert not allowed(text, "/tmp-1/x")


def test_no_match_and_empty_file_allow() -> None:
    assert allowed("User-agent: *\nDisallow: /admin\n", "/dataset")
    assert allowed("", "/anything")


def test_robots_txt_itself_is_always_allowed() -> None:
    assert allowed("User-agent: *\nDisallow: /\n", "/robots.txt")


def test_crawl_delay_of_our_group() -> None:
    text = (
        "User-agent: *\nCrawl-delay: 10\n\nUser-agent: DataONE-SlenderAdapter\nCrawl-delay: 2.5\n"
    )
    assert parse_robots(text.encode(), UA).crawl_delay == 2.5
    assert parse_robots(text.encode(), "Other/1").crawl_delay == 10


def test_sitemap_lines_are_collected_anywhere_in_any_case() -> None:
    text = (
        "Sitemap: https://repo.example/a.xml\nUser-agent: *\nDisallow: /x\n"
        "sitemap: https://repo.example/b.xml.gz\nSITEMAP: https://repo.example/a.xml\n"
    )
    p = parse_robots(text.encode(), UA)
    assert p.sitemaps == ("https://repo.example/a.xml", "https://repo.example/b.xml.gz")
    assert not p.can_fetch("https://repo.example/x")  # a Sitemap line does not end a group


def test_byte_order_mark_before_the_first_line_does_not_hide_it() -> None:
    text = "\ufeffUser-agent: *\nDisallow: /private\nCrawl-delay: 4\n".encode()
    p = parse_robots(text, UA)
    assert not p.can_fetch("https://repo.example/private/1")
    assert p.crawl_delay == 4


def test_only_the_first_500_kib_are_parsed() -> None:
    filler = b"# " + b"x" * 600_000 + b"\n"
    text = b"User-agent: *\nDisallow: /early\n" + filler + b"Disallow: /late\n"
    p = parse_robots(text, UA)
    assert not p.can_fetch("https://repo.example/early")
    assert p.can_fetch("https://repo.example/late")


def test_garbage_lines_are_skipped_and_the_rest_used() -> None:
    text = b"\x00\xff garbage\nUser-agent: *\nthis is not a rule\nDisallow: /x\n"
    assert not parse_robots(text, UA).can_fetch("https://repo.example/x/1")


def test_where_robots_txt_is_looked_for() -> None:
    entry = "https://myuniversity.edu/repository/home"
    assert entry_robots_url(entry) == "https://myuniversity.edu/repository/home/robots.txt"
    assert entry_robots_url(entry + "/") == "https://myuniversity.edu/repository/home/robots.txt"
    assert robots_url(entry) == "https://myuniversity.edu/robots.txt"


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2000))
def test_parse_robots_never_raises_on_bytes(data: bytes) -> None:
    p = parse_robots(data, UA)
    p.can_fetch("https://repo.example/some/path?q=1")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=500), st.text(max_size=80))
def test_parse_robots_never_raises_on_text(text: str, path: str) -> None:
    p = parse_robots(text.encode("utf-8", "surrogatepass"), UA)
    p.can_fetch("https://repo.example/" + path)


# -- fetch semantics over real HTTP -------------------------------------------


def _fetcher(server: SiteServer, pacer: HostPacer | None = None) -> Fetcher:
    return Fetcher(policy=AddressPolicy(server.rewrites.values()), pacer=pacer)


def _paths(server: SiteServer) -> list[str]:
    return [r.path for r in server.log]


def test_5xx_robots_blocks_the_host_for_the_run(
    serve_site: Callable[[str], SiteServer],
) -> None:
    server = serve_site("disc-robots-5xx")
    with _fetcher(server) as fetcher:
        cache = RobotsCache(fetcher)
        fetcher.gate = cache.gate
        with pytest.raises(FetchError) as err:
            fetcher.get(server.url("/sitemap.xml"))
        assert err.value.code == "robots/unreachable"  # it did not say no: it said nothing
        with pytest.raises(FetchError):
            fetcher.get(server.url("/dataset/1"))
        codes = [f.code for f in cache.findings()]
    assert codes == ["robots/unreachable"]
    assert _paths(server) == ["/robots.txt"]  # fetched once, nothing else


def test_4xx_robots_allows_everything(serve_site: Callable[[str], SiteServer]) -> None:
    server = serve_site("disc-robots-4xx")
    with _fetcher(server) as fetcher:
        cache = RobotsCache(fetcher)
        fetcher.gate = cache.gate
        assert fetcher.get(server.url("/sitemap.xml")).status == 200
        assert fetcher.get(server.url("/sitemap.xml")).status == 200
        findings = cache.findings()
    assert [(f.code, f.severity) for f in findings] == [("robots/unavailable", "info")]
    assert _paths(server).count("/robots.txt") == 1


def test_robots_redirects_are_followed_and_applied_to_the_first_host(
    serve_site: Callable[[str], SiteServer],
) -> None:
    server = serve_site("disc-redirects")
    with _fetcher(server) as fetcher:
        cache = RobotsCache(fetcher)
        assert cache.gate(server.url("/blocked/1")) is not None
        assert cache.gate(server.url("/dataset/1")) is None
        assert cache.sitemaps(server.url("/")) == (server.url("/sitemap.xml"),)
    assert _paths(server) == ["/robots.txt", "/r1", "/r2", "/robots-real.txt"]


def test_more_than_five_robots_redirects_means_unavailable(
    serve_site: Callable[[str], SiteServer],
) -> None:
    server = serve_site("disc-redirects")
    loopy = server.rewrites["https://loopy.example"]
    with _fetcher(server) as fetcher:
        cache = RobotsCache(fetcher)
        assert cache.gate(loopy + "/anything") is None  # hop7 would say Disallow: /
        assert [f.code for f in cache.findings()] == ["robots/unavailable"]


def test_a_redirect_to_another_host_is_gated_by_that_hosts_robots(
    serve_site: Callable[[str], SiteServer],
) -> None:
    server = serve_site("disc-redirects")
    with _fetcher(server) as fetcher:
        cache = RobotsCache(fetcher)
        fetcher.gate = cache.gate
        with pytest.raises(FetchError) as err:
            fetcher.get(server.url("/sitemap-moved.xml"))
    assert err.value.code == "robots/disallowed"
    assert "/sitemaps/main.xml" in err.value.message


def test_crawl_delay_is_handed_to_the_pacer(serve_site: Callable[[str], SiteServer]) -> None:
    server = serve_site("disc-signmap-entry")
    pacer = HostPacer(requests_per_second=100)
    with _fetcher(server, pacer) as fetcher:
        cache = RobotsCache(fetcher)
        cache.policy(server.url("/"))
    key = server.origin.split("://", 1)[1]
    assert pacer.interval(key) == pytest.approx(0.01)  # no Crawl-delay in this file

    server2 = serve_site("disc-basic")
    with _fetcher(server2, pacer) as fetcher:
        cache = RobotsCache(fetcher)
        cache.policy(server2.url("/"))
        assert cache.crawl_delay(server2.origin) == 0.2
    assert pacer.interval(server2.origin.split("://", 1)[1]) == pytest.approx(0.2)


def test_crawl_delay_can_be_switched_off(serve_site: Callable[[str], SiteServer]) -> None:
    server = serve_site("disc-basic")
    pacer = HostPacer(requests_per_second=100)
    with _fetcher(server, pacer) as fetcher:
        RobotsCache(fetcher, honour_crawl_delay=False).policy(server.url("/"))
    assert pacer.interval(server.origin.split("://", 1)[1]) == pytest.approx(0.01)


def test_entry_url_robots_txt_is_preferred(serve_site: Callable[[str], SiteServer]) -> None:
    server = serve_site("disc-signmap-entry")
    with _fetcher(server) as fetcher:
        cache = RobotsCache(fetcher)
        policy = cache.locate(server.url("/repository/home"))
        notes = cache.findings()
    assert policy.sitemaps == (server.url("/repository/signmap.xml"),)
    assert [f.code for f in notes] == ["robots/location"]
    assert "entry URL" in notes[0].message
    assert _paths(server) == ["/repository/home/robots.txt"]


def test_host_root_robots_txt_is_the_fallback(serve_site: Callable[[str], SiteServer]) -> None:
    server = serve_site("disc-signmap-entry")
    with _fetcher(server) as fetcher:
        cache = RobotsCache(fetcher)
        policy = cache.locate(server.url("/elsewhere/home"))
        notes = cache.findings()
    assert policy.sitemaps == (server.url("/sitemap.xml"),)
    assert "host root" in notes[0].message
    assert _paths(server) == ["/elsewhere/home/robots.txt", "/robots.txt"]


def test_cache_expires_after_its_time_to_live(serve_site: Callable[[str], SiteServer]) -> None:
    server = serve_site("disc-basic")
    now = [0.0]
    with _fetcher(server) as fetcher:
        cache = RobotsCache(fetcher, clock=lambda: now[0])
        cache.gate(server.url("/dataset/1"))
        now[0] = 3600.0
        cache.gate(server.url("/dataset/2"))
        now[0] = 24 * 3600.0 + 1
        cache.gate(server.url("/dataset/3"))
    assert _paths(server).count("/robots.txt") == 2


def test_an_hours_long_crawl_delay_is_capped(serve_site: Callable[[str], SiteServer]) -> None:
    server = serve_site("disc-robots-odd")
    slow = server.rewrites["https://slow.example"]
    pacer = HostPacer(requests_per_second=100)
    with _fetcher(server, pacer) as fetcher:
        cache = RobotsCache(fetcher)
        cache.policy(slow + "/")
        assert cache.crawl_delay(slow) == 3600
        (note,) = cache.findings()
    assert pacer.interval(slow.split("://", 1)[1]) == 60
    assert note.code == "robots/crawl-delay"
    assert "asked 3600 s, capped" in note.message
