"""`adapter discover URL [--json]` against fixture sites over real HTTP."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from adapter.cli import cli
from tests.support.cli import run_in_process
from tests.support.fixture_server import SiteServer

FAST = ["--rate", "100"]
ENTRY = [sys.executable, "-c", "from adapter.cli import main; main()"]


def invoke(*args: str) -> tuple[Any, str]:
    result = CliRunner().invoke(cli, ["discover", *FAST, *args], standalone_mode=False)
    if result.exception is not None:
        raise result.exception
    return result.return_value, result.output


def test_human_output_streams_entries_links_and_a_summary(
    serve_site: Callable[[str], SiteServer],
) -> None:
    server = serve_site("disc-basic")
    code, out = invoke(server.url("/"))
    assert code == 0
    o = server.origin
    assert (
        f"{o}/dataset/1  lastmod 2024-10-30T14:02:11+01:00  sitemap {o}/sitemaps/datasets-1.xml.gz"
        in out
    )
    assert f"    signmap describedby -> {o}/dataset/1/metadata.jsonld (application/ld+json)" in out
    assert "    rs:md hash=md5:1e0d5cb8ef6ba40c99b14c0237be735e length=8876 type=text/html" in out
    assert "  warning sitemap/bad-lastmod:" in out
    # entries come out in document order, before the summary
    assert (
        out.index(f"{o}/dataset/1 ")
        < out.index(f"{o}/dataset/7 ")
        < out.index("landing pages from")
    )
    assert "\n9 landing pages from 6 sitemaps in " in out
    assert "       6  discover/sitemap-read\n" in out


def test_json_lines_shapes(serve_site: Callable[[str], SiteServer]) -> None:
    server = serve_site("disc-signmap-entry")
    code, out = invoke("--json", server.url("/repository/home"))
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["type"] for r in rows] == [
        "finding",
        "entry",
        "finding",
        "entry",
        "finding",
        "summary",
    ]
    entry = rows[1]
    assert entry == {
        "type": "entry",
        "loc": server.url("/repository/record/11"),
        "lastmod": "2024-09-01T00:00:00+00:00",
        "sitemap": server.url("/repository/signmap.xml"),
        "links": [
            {
                "rel": "describedby",
                "href": server.url("/repository/record/11/ro-crate-metadata.json"),
                "type": "application/ld+json",
                "profile": "https://w3id.org/ro/crate",
                "extra": {},
            },
            {
                "rel": "item",
                "href": server.url("/repository/record/11/files/data.nc"),
                "type": "application/x-netcdf",
                "profile": None,
                "extra": {},
            },
            {
                "rel": "cite-as",
                "href": "https://doi.org/10.5072/rec11",
                "type": None,
                "profile": None,
                "extra": {},
            },
        ],
        "attributes": {},
        "in_graph": False,  # a landing page, not a sitegraph's Dataset
    }
    assert rows[0]["code"] == "robots/location" and rows[0]["severity"] == "info"
    summary = rows[-1]
    assert summary["entries"] == 2
    assert summary["sitemaps"] == 1
    assert summary["findings"] == {
        "discover/sitemap-read": 1,
        "robots/location": 1,
        "sitemap/bad-signmap-link": 1,
    }
    assert summary["severities"] == {"info": 2, "warning": 1}


def test_include_exclude_and_allow_host(serve_site: Callable[[str], SiteServer]) -> None:
    server = serve_site("disc-basic")
    stranger = server.rewrites["https://stranger.example"]
    code, out = invoke(
        "--json",
        "--include",
        "spam|dataset/[12]$",
        "--allow-host",
        stranger,
        server.url("/sitemaps/datasets-1.xml.gz"),
    )
    assert code == 0
    locs = [r["loc"] for r in map(json.loads, out.splitlines()) if r["type"] == "entry"]
    assert locs == [server.url("/dataset/1"), server.url("/dataset/2"), f"{stranger}/spam/1"]


def test_nothing_discovered_exits_1(serve_site: Callable[[str], SiteServer]) -> None:
    server = serve_site("disc-robots-5xx")
    code, out = invoke(server.url("/"))
    assert code == 1
    assert "error robots/unreachable" in out
    assert "0 landing pages from 0 sitemaps" in out


def _adapter(*args: str) -> subprocess.CompletedProcess[str]:
    """The real entry point (`adapter.cli.main`), in the test process."""
    ran = run_in_process(["discover", *args], Path.cwd())
    return subprocess.CompletedProcess(args, ran.returncode, ran.stdout, ran.stderr)


def test_exit_codes_from_the_real_entry_point(serve_site: Callable[[str], SiteServer]) -> None:
    server = serve_site("disc-hostile")
    assert _adapter("ftp://example.org/sitemap.xml").returncode == 2
    assert _adapter("--include", "(", server.url("/")).returncode == 2
    proc = _adapter(*FAST, server.url("/not-found.xml"))
    assert proc.returncode == 1
    assert "discover/sitemap-unavailable" in proc.stdout
    assert _adapter(*FAST, server.url("/ok.xml")).returncode == 0


@pytest.mark.slow  # a fresh interpreter on a terminal
def test_progress_count_on_a_terminal_stderr(serve_site: Callable[[str], SiteServer]) -> None:
    server = serve_site("disc-basic")
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(
            [*ENTRY, "discover", *FAST, server.url("/")],
            stdout=subprocess.PIPE,
            stderr=follower,
            timeout=60,
        )
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closes when the child is gone
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(leader)
    assert proc.returncode == 0
    assert b"\r9 landing pages, 6 sitemaps read" in shown
    assert b"sitemaps read" not in proc.stdout  # progress stays off stdout


def test_no_progress_when_stderr_is_not_a_terminal(serve_site: Callable[[str], SiteServer]) -> None:
    server = serve_site("disc-signmap-entry")
    proc = _adapter(*FAST, server.url("/repository/home"))
    assert proc.returncode == 0
    assert proc.stderr == ""
