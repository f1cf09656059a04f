"""TLS through the fetcher's own pool manager: certificates are verified as `requests` would."""

from __future__ import annotations

import http.server
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapter.errors import FetchError
from adapter.http.addresses import AddressPolicy
from adapter.http.fetcher import Fetcher
from adapter.http.findings import CONNECTION
from tests.support.clock import FakeClock

TLS = Path(__file__).resolve().parents[2] / "fixtures" / "tls"


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<html><title>reached</title></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def https_origin() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(TLS / "self-signed.pem", TLS / "self-signed.key")
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_self_signed_certificate_is_refused_with_the_reason(
    https_origin: str, virtual_clock: FakeClock
) -> None:
    with (
        Fetcher(policy=AddressPolicy([https_origin])) as fetcher,
        pytest.raises(FetchError) as caught,
    ):
        fetcher.get(https_origin + "/page")
    assert caught.value.code == CONNECTION.code
    assert caught.value.url == https_origin + "/page"
    assert "CERTIFICATE_VERIFY_FAILED" in caught.value.message
    assert len(virtual_clock.sleeps) == 3  # retried as a failed connection, on virtual time


def test_the_same_server_answers_a_client_that_trusts_its_certificate(https_origin: str) -> None:
    """The refusal above is the certificate's, not a server that never answers."""
    import urllib.request

    context = ssl.create_default_context(cafile=str(TLS / "self-signed.pem"))
    with urllib.request.urlopen(https_origin + "/page", context=context, timeout=5) as resp:
        assert b"reached" in resp.read()
