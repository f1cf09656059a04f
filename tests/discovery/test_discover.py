"""discover(): robots.txt -> sitemaps -> landing pages over real HTTP fixture sites."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from adapter.discovery.graphs import discover_sitegraphs
from adapter.discovery.locset import LocSet
from adapter.discovery.sitemap import ChildSitemap
from adapter.discovery.walk import classify, discover
from adapter.findings import Finding
from adapter.http.addresses import AddressPolicy
from adapter.http.fetcher import Fetcher
from adapter.limits import DEFAULT_LIMITS, Limits
from adapter.models import SitemapEntry
from tests.support.clock import FakeClock
from tests.support.fixture_server import SiteServer

Item = SitemapEntry | Finding


@pytest.fixture
def fetcher_for() -> Iterator[Callable[[SiteServer], Fetcher]]:
    made: list[Fetcher] = []

    def make(server: SiteServer) -> Fetcher:
        fetcher = Fetcher(policy=AddressPolicy(server.rewrites.values()))
        made.append(fetcher)
        return fetcher

    yield make
    for f in made:
        f.close()


def run(server: SiteServer, fetcher: Fetcher, *starts: str, **kw: Any) -> list[Item]:
    return list(
        discover([server.url(s) if s.startswith("/") else s for s in starts], fetcher, **kw)
    )


def locs(items: list[Item], server: SiteServer) -> list[str]:
    origin = server.origin
    return [i.loc.replace(origin, "") for i in items if isinstance(i, SitemapEntry)]


def codes(items: list[Item]) -> list[str]:
    return [i.code for i in items if isinstance(i, Finding) and i.code != "discover/sitemap-read"]


def paths(server: SiteServer) -> list[str]:
    return [r.path for r in server.log]


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("https://r.example/robots.txt", "robots"),
        ("https://r.example/sitemap.xml", "sitemap"),
        ("https://r.example/sitemaps/part-1.xml.gz", "sitemap"),
        ("https://r.example/urls.txt", "sitemap"),
        ("https://r.example/api/sitemap?page=1", "sitemap"),
        ("https://r.example/sitemap_index", "sitemap"),
        ("https://r.example/", "entry"),
        ("https://r.example", "entry"),
        ("https://myuniversity.edu/repository/home", "entry"),
    ],
)
def test_start_urls_are_told_apart_by_path(url: str, kind: str) -> None:
    assert classify(url) == kind


def test_locset_keeps_each_url_once_through_growth() -> None:
    seen = LocSet(capacity=8)
    added = [seen.add(f"https://r.example/d/{i}") for i in range(20_000)]
    assert all(added)
    assert len(seen) == 20_000
    assert not any(seen.add(f"https://r.example/d/{i}") for i in range(0, 20_000, 3))
    assert seen.add("https://r.example/d/new")


def test_entry_url_walks_robots_index_nested_gzip_and_text_sitemaps(
    serve_site: Callable[[str], SiteServer], fetcher_for: Callable[[SiteServer], Fetcher]
) -> None:
    server = serve_site("disc-basic")
    partner = server.rewrites["https://partner.example"]
    items = run(server, fetcher_for(server), "/")
    assert locs(items, server) == [
        "/dataset/1",
        "/dataset/2",
        "/dataset/3?lang=en&v=2",
        f"{partner}/records/77",  # partner's robots.txt lists our index: cross-submission
        "/dataset/4",
        "/dataset/5",
        "/dataset/geo-1",
        "/dataset/geo-2",
        "/dataset/6",
        "/dataset/7",
    ]
    assert codes(items) == [
        "robots/location",
        "sitemap/bad-lastmod",
        "discover/out-of-scope",
        "sitemap/loc-relative",
        "sitemap/loc-not-http",
        "robots/disallowed",
    ]
    # each file fetched once, robots.txt once, the disallowed sitemap never
    assert paths(server) == [
        "/robots.txt",
        "/sitemap_index.xml",
        "/sitemaps/datasets-1.xml.gz",
        "/sitemaps/datasets-2.xml",
        "/sitemaps/nested-index.xml",
        "/sitemaps/collections/geo.xml",
        "/sitemaps/extra.txt",
    ]


def test_entries_carry_lastmod_sitemap_and_signmap_links(
    serve_site: Callable[[str], SiteServer], fetcher_for: Callable[[SiteServer], Fetcher]
) -> None:
    server = serve_site("disc-basic")
    items = run(server, fetcher_for(server), "/")
    by_loc = {i.loc: i for i in items if isinstance(i, SitemapEntry)}
    first = by_loc[server.url("/dataset/1")]
    assert first.sitemap == server.url("/sitemaps/datasets-1.xml.gz")  # first listing wins
    assert first.lastmod == datetime(2024, 10, 30, 14, 2, 11, tzinfo=timezone(timedelta(hours=1)))
    assert [(link.rel, link.href.replace(server.origin, "")) for link in first.links] == [
        ("describedby", "/dataset/1/metadata.jsonld"),
        ("cite-as", "https://doi.org/10.5072/fk2-ds1"),
        ("item", "/files/ds1.csv"),
    ]
    assert all(link.anchor == first.loc and link.source == "signmap" for link in first.links)
    assert dict(first.links[2].extra)["length"] == "2048"
    assert dict(first.attributes)["length"] == "8876"
    assert by_loc[server.url("/dataset/2")].lastmod == datetime(2024, 7, 1, tzinfo=UTC)
    assert by_loc[server.url("/dataset/3?lang=en&v=2")].lastmod is None
    assert by_loc[server.url("/dataset/6")].sitemap == server.url("/sitemaps/extra.txt")


def test_sitemap_read_findings_summarise_each_file(
    serve_site: Callable[[str], SiteServer], fetcher_for: Callable[[SiteServer], Fetcher]
) -> None:
    server = serve_site("disc-basic")
    items = run(server, fetcher_for(server), "/")
    read = {
        i.url.replace(server.origin, ""): i.message
        for i in items
        if isinstance(i, Finding) and i.code == "discover/sitemap-read"
    }
    assert read == {
        "/sitemap_index.xml": "sitemapindex, 4 sitemaps",
        "/sitemaps/datasets-1.xml.gz": "urlset (gzip), 4 entries, 1 out of scope",
        "/sitemaps/datasets-2.xml": "urlset, 2 entries, 1 duplicate",
        "/sitemaps/nested-index.xml": "sitemapindex (gzip), 1 sitemap",
        "/sitemaps/collections/geo.xml": "urlset, 2 entries",
        "/sitemaps/extra.txt": "text, 2 entries, 1 duplicate",
    }


def test_allowed_hosts_admit_other_hosts(
    serve_site: Callable[[str], SiteServer], fetcher_for: Callable[[SiteServer], Fetcher]
) -> None:
    server = serve_site("disc-basic")
    stranger = server.rewrites["https://stranger.example"]
    items = run(
        server, fetcher_for(server), "/sitemaps/datasets-1.xml.gz", allowed_hosts=[stranger]
    )
    assert f"{stranger}/spam/1" in locs(items, server)
    assert "discover/out-of-scope" not in codes(items)


def test_include_and_exclude_patterns_filter_locs(
    serve_site: Callable[[str], SiteServer], fetcher_for: Callable[[SiteServer], Fetcher]
) -> None:
    server = serve_site("disc-basic")
    items = run(
        server,
        fetcher_for(server),
        "/",
        include=[re.compile(r"/dataset/")],
        exclude=[re.compile(r"geo-|/3\?")],
    )
    assert locs(items, server) == [
        "/dataset/1",
        "/dataset/2",
        "/dataset/4",
        "/dataset/5",
        "/dataset/6",
        "/dataset/7",
    ]


def test_discovery_is_lazy_and_streams(
    serve_site: Callable[[str], SiteServer], fetcher_for: Callable[[SiteServer], Fetcher]
) -> None:
    server = serve_site("disc-basic")
    stream = discover([server.url("/")], fetcher_for(server))
    assert paths(server) == []  # nothing fetched until iterated
    first = next(i for i in stream if isinstance(i, SitemapEntry))
    assert first.loc == server.url("/dataset/1")
    assert "/sitemaps/datasets-2.xml" not in paths(server)  # later files not fetched yet
    stream.close()


def test_gate_is_installed_for_the_run_and_removed_after(
    serve_site: Callable[[str], SiteServer], fetcher_for: Callable[[SiteServer], Fetcher]
) -> None:
    server = serve_site("disc-basic")
    fetcher = fetcher_for(server)
    run(server, fetcher, "/")
    assert fetcher.gate is None


def test_robots_5xx_skips_that_host_and_the_others_go_on(
    serve_site: Callable[[str], SiteServer], fetcher_for: Callable[[SiteServer], Fetcher]
) -> None:
    server = serve_site("disc-robots-5xx")
    healthy = server.rewrites["https://healthy.example"]
    items = run(server, fetcher_for(server), "/sitemap.xml", healthy + "/sitemap.xml")
    assert locs(items, server) == [f"{healthy}/record/a", f"{healthy}/record/b"]
    # robots.txt unreadable is not a "disallow": the sitemap names the same reason
    assert codes(items) == ["robots/unreachable", "robots/unreachable"]
    assert paths(server) == ["/robots.txt"]


def test_robots_4xx_allows_all_and_sitemap_xml_is_guessed(
    serve_site: Callable[[str], SiteServer], fetcher_for: Callable[[SiteServer], Fetcher]
) -> None:
    server = serve_site("disc-robots-4xx")
    items = run(server, fetcher_for(server), "/")
    assert locs(items, server) == ["/dataset/1", "/dataset/2"]
    assert codes(items) == ["robots/unavailable", "discover/sitemap-not-in-robots"]


def test_no_sitemap_anywhere_is_an_error(
    serve_site: Callable[[str], SiteServer], fetcher_for: Callable[[SiteServer], Fetcher]
) -> None:
    server = serve_site("disc-redirects")  # loopy.example has no Sitemap line
    loopy = server.rewrites["https://loopy.example"]
    items = run(server, fetcher_for(server), loopy + "/archive/")
    sitemap_found = locs(items, server)
    assert sitemap_found == [f"{loopy}/page/1"]  # the root sitemap.xml, guessed
    assert "discover/sitemap-not-in-robots" in codes(items)

    cdn = server.rewrites["https://cdn.example"]  # no Sitemap line, no sitemap.xml
    items2 = run(server, fetcher_for(server), cdn + "/")
    assert locs(items2, server) == []
    assert codes(items2) == ["robots/location", "discover/no-sitemap"]


def test_signmap_entry_url_uses_the_robots_txt_at_the_entry_url(
    serve_site: Callable[[str], SiteServer], fetcher_for: Callable[[SiteServer], Fetcher]
) -> None:
    server = serve_site("disc-signmap-entry")
    items = run(server, fetcher_for(server), "/repository/home")
    assert locs(items, server) == ["/repository/record/11", "/repository/record/12"]
    entry = next(i for i in items if isinstance(i, SitemapEntry))
    assert [link.rel for link in entry.links] == ["describedby", "item", "cite-as"]
    assert entry.links[0].profile == "https://w3id.org/ro/crate"
    assert codes(items) == ["robots/location", "sitemap/bad-signmap-link"]
    assert "entry URL" in next(i for i in items if isinstance(i, Finding)).message


def test_sitemap_redirected_to_another_host_obeys_that_hosts_robots(
    serve_site: Callable[[str], SiteServer], fetcher_for: Callable[[SiteServer], Fetcher]
) -> None:
    server = serve_site("disc-redirects")
    items = run(server, fetcher_for(server), "/sitemap-moved.xml")
    assert locs(items, server) == []
    assert codes(items) == ["robots/disallowed"]


def test_hostile_sitemaps_are_findings_and_the_good_ones_are_read(
    serve_site: Callable[[str], SiteServer], fetcher_for: Callable[[SiteServer], Fetcher]
) -> None:
    server = serve_site("disc-hostile")
    items = run(server, fetcher_for(server), "/robots.txt")
    assert locs(items, server) == ["/dataset/ok-1", "/dataset/ok-2"]
    assert codes(items) == [
        "discover/sitemap-cycle",  # self-index.xml lists itself
        "sitemap/loc-too-long",
        "discover/sitemap-cycle",  # loop-b.xml lists loop-a.xml
        "sitemap/html",
        "sitemap/bad-gzip",
        "sitemap/entities-refused",
        "discover/sitemap-too-deep",
        "discover/sitemap-unavailable",
        "sitemap/unsupported-format",
    ]
    assert paths(server).count("/ok.xml") == 1
    assert "/deep-6.xml" not in paths(server)


def test_limits_cap_depth_and_number_of_sitemaps(
    serve_site: Callable[[str], SiteServer], fetcher_for: Callable[[SiteServer], Fetcher]
) -> None:
    server = serve_site("disc-hostile")
    limits = DEFAULT_LIMITS.with_overrides({"max_sitemap_depth": 1, "max_sitemaps": 3})
    items = run(server, fetcher_for(server), "/deep-0.xml", "/ok.xml", "/loop-a.xml", limits=limits)
    assert codes(items) == [
        "discover/sitemap-too-deep",
        "sitemap/loc-too-long",
        "discover/too-many-sitemaps",
    ]
    assert isinstance(limits, Limits)


def test_robots_served_as_html_and_past_the_size_cap(
    serve_site: Callable[[str], SiteServer],
) -> None:
    from adapter.discovery.robots import RobotsCache

    server = serve_site("disc-robots-odd")
    spa = server.rewrites["https://spa.example"]
    limits = DEFAULT_LIMITS.with_overrides({"max_robots_bytes": 200})
    with Fetcher(limits, policy=AddressPolicy(server.rewrites.values())) as fetcher:
        cache = RobotsCache(fetcher)
        assert cache.sitemaps(server.url("/")) == ()  # the Sitemap line is past the cap
        assert cache.gate(spa + "/dataset/1") is None  # an HTML page has no rules
        found = [(f.code, f.url) for f in cache.findings()]
    assert found == [
        ("robots/too-large", server.url("/robots.txt")),
        ("robots/too-large", spa + "/robots.txt"),
        ("robots/not-text", spa + "/robots.txt"),
    ]
    assert len((server.root / "robots.txt").read_bytes()) > 200


def test_every_discovery_finding_code_is_triggered(
    serve_site: Callable[[str], SiteServer],
    fetcher_for: Callable[[SiteServer], Fetcher],
    virtual_clock: FakeClock,  # a host's pace and a 5xx's retries cost no real time
) -> None:
    """Each robots/, sitemap/ and discover/ code declared anywhere comes out of some run here."""
    from adapter.discovery.robots import RobotsCache
    from adapter.discovery.sitemap import parse_sitemap
    from adapter.findings import catalogue
    from adapter.http.politeness import HostPacer

    seen: set[str] = set()

    def collect(items: Sequence[Item | ChildSitemap]) -> None:
        seen.update(i.code for i in items if isinstance(i, Finding))

    basic = serve_site("disc-basic")
    with Fetcher(policy=AddressPolicy(basic.rewrites.values()), pacer=HostPacer(100)) as f:
        collect(run(basic, f, "/"))
    hostile = serve_site("disc-hostile")
    collect(run(hostile, fetcher_for(hostile), "/robots.txt"))
    collect(
        run(
            hostile,
            fetcher_for(hostile),
            "/ok.xml",
            "/loop-a.xml",
            limits=DEFAULT_LIMITS.with_overrides({"max_sitemaps": 1}),
        )
    )
    for site, start in [
        ("disc-robots-5xx", "/"),
        ("disc-robots-4xx", "/"),
        ("disc-signmap-entry", "/repository/home"),
    ]:
        server = serve_site(site)
        collect(run(server, fetcher_for(server), start))
    redirects = serve_site("disc-redirects")
    collect(run(redirects, fetcher_for(redirects), redirects.rewrites["https://cdn.example"] + "/"))
    odd = serve_site("disc-robots-odd")
    limits = DEFAULT_LIMITS.with_overrides({"max_robots_bytes": 200})
    with Fetcher(limits, policy=AddressPolicy(odd.rewrites.values())) as f:
        cache = RobotsCache(f)
        cache.gate(odd.url("/x"))
        cache.gate(odd.rewrites["https://spa.example"] + "/x")
        collect(list(cache.findings()))
    literal = (
        b"<urlset><url><loc>https://r.example/a</loc><lastmod>x</lastmod></url>"
        + (b"<url><loc>https://r.example/b</loc></url>")
        + b"".join(b"<url><loc>/r/%d</loc></url>" % i for i in range(12))
    )
    collect(list(parse_sitemap(literal, "https://r.example/s.xml")))
    collect(
        list(
            parse_sitemap(
                literal,
                "https://r.example/s.xml",
                DEFAULT_LIMITS.with_overrides({"max_sitemap_entries": 1}),
            )
        )
    )
    collect(
        list(
            parse_sitemap(
                literal,
                "https://r.example/s.xml",
                DEFAULT_LIMITS.with_overrides({"max_sitemap_bytes": 100}),
            )
        )
    )
    collect(list(parse_sitemap(b"<urlset><url><loc>", "https://r.example/s.xml")))
    graphs = serve_site("sitegraph")  # tests/discovery/test_sitegraph.py reads them one by one
    few = DEFAULT_LIMITS.with_overrides({"max_sitegraph_datasets": 2})
    for path, limits in [
        ("/graph.jsonld", DEFAULT_LIMITS),
        ("/broken.jsonld", few),
        ("/graph.jsonld", few),
    ]:
        found = discover_sitegraphs([graphs.url(path)], fetcher_for(graphs), limits=limits)
        collect([i for i in found if isinstance(i, Finding)])

    declared = {
        t.code for t in catalogue() if t.code.startswith(("robots/", "sitemap/", "discover/"))
    }
    assert declared - seen == set()


def test_a_sitemap_past_the_byte_cap_is_read_up_to_it(
    serve_site: Callable[[str], SiteServer], fetcher_for: Callable[[SiteServer], Fetcher]
) -> None:
    server = serve_site("disc-basic")
    limits = DEFAULT_LIMITS.with_overrides({"max_sitemap_bytes": 250})
    items = run(server, fetcher_for(server), "/sitemaps/datasets-2.xml", limits=limits)
    assert locs(items, server) == ["/dataset/1"]  # the first <url> fits in 250 bytes
    assert codes(items) == ["sitemap/too-large"]


def test_cross_submission_checks_stop_after_a_number_of_hosts(
    fetcher_for: Callable[[SiteServer], Fetcher], monkeypatch: pytest.MonkeyPatch
) -> None:
    import adapter.discovery.walk
    from tests.support.fixture_server import start_site, stop

    monkeypatch.setattr(adapter.discovery.walk, "MAX_FOREIGN_HOSTS", 0)
    servers = start_site("disc-basic")
    try:
        server, others = servers[0], servers[1:]
        partner = server.rewrites["https://partner.example"]
        items = run(server, fetcher_for(server), "/sitemaps/datasets-1.xml.gz")
        assert f"{partner}/records/77" not in locs(items, server)
        assert codes(items).count("discover/out-of-scope") == 2
        assert [s.log for s in others] == [[], []]  # no robots.txt asked of the other hosts
    finally:
        stop(servers)
