"""`adapter serve`: the check page beside the Member Node API on one port."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import requests

from adapter.web.app import StartResponse
from adapter.web.mount import Mount
from tests.support.web import serve_wsgi
from tests.web.conftest import MakeWeb


def other(environ: dict[str, Any], start_response: StartResponse) -> list[bytes]:
    body = f"other {environ['PATH_INFO']}".encode()
    start_response("404 Not Found", [("Content-Type", "text/plain")])
    return [body]


def test_web_paths_go_to_the_web_app_and_the_rest_to_the_api(
    make_web: MakeWeb, tmp_path: Path
) -> None:
    web = make_web()
    app = web.server.application
    with serve_wsgi(Mount(app, other, claimed=["static"])) as both:
        form = requests.get(both.url("/check"), timeout=10)
        assert form.status_code == 200 and 'name="url"' in form.text
        assert (
            'id="dataone/identifier-missing"'
            in requests.get(both.url("/findings"), timeout=10).text
        )
        assert requests.get(both.url("/"), timeout=10).text == "other /"
        assert requests.get(both.url("/NODE/v2/node"), timeout=10).text == "other /NODE/v2/node"
        # a node whose short name is a web path keeps it
        assert requests.get(both.url("/static/style.css"), timeout=10).text.startswith("other")
