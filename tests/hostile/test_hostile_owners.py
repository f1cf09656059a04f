"""Hostile findings in other stages' code, each a test of the product's promise.

Each test names the module whose behaviour it pins down. They run the real
commands against the hostile fixture server.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from adapter.cli import cli
from adapter.discovery.sitemap import parse_sitemap
from adapter.page.extract import extract
from tests.support.fixture_server import SiteServer
from tests.support.hostile import ADAPTER, start_corpus, stop


@pytest.fixture(scope="module")
def site() -> Iterator[SiteServer]:
    servers = start_corpus()
    yield servers[0]
    stop(servers)


def test_check_dataset_fetches_the_landing_page_once(site: SiteServer) -> None:
    """adapter/signposting/resolve.py: the resolve step GETs an HTML page for its <link>s, then the
    pipeline GETs it again, so a trickling page holds check-dataset twice total_timeout."""
    before = len(site.log)
    result = CliRunner().invoke(cli, ["check-dataset", site.url("/good/1"), "--json"])
    assert result.exit_code in (0, 1), result.output
    gets = [r for r in site.log[before:] if r.method == "GET" and r.path == "/good/1"]
    assert len(gets) == 1


@pytest.mark.parametrize(
    ("path", "allowed"),
    [("/c/trickle-headers/page", ["HEAD"]), ("/c/trickle-body/page", ["HEAD", "GET"])],
)
@pytest.mark.slow  # a real process waiting out a real total_timeout
def test_a_page_that_timed_out_is_not_asked_again(
    site: SiteServer, path: str, allowed: list[str]
) -> None:
    """adapter/commands/check.py with adapter/signposting/resolve.py: when the resolve step's
    HEAD or GET of the landing page runs out of time, check_landing_page must not fetch it again (a
    trickling page would hold check-dataset for twice total_timeout)."""
    before = len(site.log)
    done = subprocess.run(
        [str(ADAPTER), "check-dataset", site.url(path), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "ADAPTER_LIMITS": "total_timeout=2,read_timeout=2,max_retries=0"},
    )
    assert "fetch/timeout" in done.stdout, done.stdout + done.stderr
    asked = [r.method for r in site.log[before:] if r.path == path]
    assert asked == allowed


@pytest.mark.timeout(10)  # a hang guard: the linear parse takes milliseconds
def test_sitemap_sniffing_is_linear() -> None:
    """adapter/discovery/sitemap_body.py: the root-element regex backtracks over a run of '<'
    (`<([^\\s/>]+)[\\s/>]` also matches '<'): 16 KB take 15 s, 1 MB never ends."""
    items = list(parse_sitemap(b"<" * 100_000, "http://repo.example/sitemap.xml"))
    codes = [getattr(i, "code", "") for i in items]
    assert len(codes) == 1 and codes[0] in ("sitemap/bad-xml", "sitemap/unsupported-format")


@pytest.mark.timeout(10)  # a hang guard: without RDFa the page takes milliseconds
def test_markup_extraction_is_not_quadratic_in_attributes() -> None:
    """adapter/page/markup.py (extruct RDFa via pyRdfa): with no JSON-LD, a page that uses RDFa
    is parsed by pyRdfa, whose DOM rebuilds an element's attribute map on every access:
    one RDFa <div> with 1,000 more attributes (11 KB) takes 18 s, 5,000 never end."""
    attributes = b" ".join(b'data-a%d="v"' % i for i in range(5000))
    page = (
        b'<html><head><title>x</title></head><body><div vocab="https://schema.org/" '
        b'property="name" ' + attributes + b">x</div></body></html>"
    )
    result = extract(page, url="http://repo.example/p", content_type="text/html", charset="utf-8")
    names = [b.data for b in result.blocks]  # the RDFa is still read: one node, its name
    assert len(names) == 1 and "https://schema.org/name" in str(names)
