"""At most N checks a minute per client, shared through a SQLite file by every process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import requests

from adapter.web.app import WebApp
from adapter.web.checking import Checker
from adapter.web.ratelimit import WINDOW, RateLimit
from tests.support.web import serve_wsgi
from tests.web.conftest import origins

ROOT = Path(__file__).resolve().parents[2]


def test_the_budget_is_per_client_and_the_window_slides(tmp_path: Path) -> None:
    rate = RateLimit(tmp_path / "rate.db", per_minute=2)
    assert rate.admit("a", now=1000.0).allowed
    assert rate.admit("a", now=1010.0).allowed
    refused = rate.admit("a", now=1020.0)
    assert not refused.allowed
    assert refused.retry_after == 40  # the check at 1000 leaves the window at 1060
    assert rate.admit("b", now=1020.0).allowed  # another client has its own budget
    assert rate.admit("a", now=1000.0 + WINDOW + 0.5).allowed
    assert not rate.admit("a", now=1000.0 + WINDOW + 1).allowed
    rate.close()


def test_another_process_shares_the_count(tmp_path: Path) -> None:
    path = tmp_path / "rate.db"
    script = (
        "import sys\n"
        "from adapter.web.ratelimit import RateLimit\n"
        "rate = RateLimit(sys.argv[1], per_minute=3)\n"
        "print(sum(rate.admit('10.0.0.9').allowed for _ in range(2)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=True,
    )
    assert done.stdout.strip() == "2"
    rate = RateLimit(path, per_minute=3)
    assert rate.admit("10.0.0.9").allowed
    assert not rate.admit("10.0.0.9").allowed
    rate.close()


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_checks_beyond_the_limit_are_429_with_retry_after(tmp_path: Path, sites: Any) -> None:
    site = sites("sp-good")
    url = site[0].url("/dataset/7")
    rate = RateLimit(tmp_path / "rate.db", per_minute=2)
    # two applications over one file: two server processes behind one address
    first = WebApp(Checker(tuple(origins(site))), rate)
    second = WebApp(Checker(tuple(origins(site))), RateLimit(tmp_path / "rate.db", per_minute=2))
    with serve_wsgi(first) as one, serve_wsgi(second) as two:
        assert requests.get(one.url("/check"), params={"url": url}, timeout=30).status_code == 200
        assert requests.get(two.url("/check"), params={"url": url}, timeout=30).status_code == 200
        over = requests.get(two.url("/check"), params={"url": url}, timeout=30)
        assert over.status_code == 429
        assert int(over.headers["Retry-After"]) >= 1
        assert "at most 2 checks a minute" in over.text
        as_json = requests.get(
            one.url("/check"),
            params={"url": url},
            headers={"Accept": "application/json"},
            timeout=30,
        )
        assert as_json.status_code == 429 and "error" in as_json.json()
        # the form itself and the catalogue are not checks
        assert requests.get(one.url("/check"), timeout=10).status_code == 200
        assert requests.get(one.url("/findings"), timeout=10).status_code == 200
    gets = [r for r in site[0].log if r.path == "/dataset/7" and r.method == "GET"]
    assert len(gets) == 2
