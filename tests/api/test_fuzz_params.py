"""Hypothesis against the Member Node app: no query string (nor identifier) gives a 5xx.

The app serves a store holding versions, an archived object and a seriesId
with a `+`, on SQLite and PostgreSQL. Every Tier 1 method the app routes
gets query strings made of its own parameter names (repeated, empty, unknown
ones too) with values built from what breaks parsers: out-of-range dates,
huge numbers, `+` and `%2B`, NUL and control characters, overlong and
truncated UTF-8, stray `%`. Each request is written byte for byte by
http.client (no re-encoding) and read by waitress's own request parser into
the WSGI environ the server would build, and the app is called directly:
2,000 requests over a real socket cost a minute on a loaded machine, for
nothing the app sees differently. One test sends them over waitress on
127.0.0.1. Every 4xx body must be a DataONE error document that validates
against DataONE's XSD and names the method's own detail code; on HEAD the
exception travels in headers.
"""

from __future__ import annotations

import http.client
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import cache
from types import SimpleNamespace
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree
from waitress.parser import HTTPRequestParser
from waitress.task import WSGITask

from adapter.api.exceptions import DETAIL_CODES, STATUS
from adapter.config.settings import NodeSettings
from adapter.store.db import Store
from tests.support import stores
from tests.support.d1schemas import validate_error, validate_types
from tests.support.member_node import Served, archive, node_settings, put_dataset, serve_app

FUZZ = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@dataclass
class Node:
    served: Served
    node: NodeSettings
    pids: list[str]

    def connection(self) -> http.client.HTTPConnection:
        host, _, port = self.served.origin.removeprefix("http://").partition(":")
        return http.client.HTTPConnection(host, int(port), timeout=20)


@contextmanager
def build(url: str) -> Iterator[Node]:
    store = Store.open(url)
    node = node_settings()
    for i in range(4):
        put_dataset(store, node, f"10.5555/f{i}", f"Dataset {i}")
    put_dataset(store, node, "10.5555/f1", "Dataset 1, second version")
    put_dataset(store, node, "10.5555/a+b", "plus in the DOI")
    archive(store, node, "https://repo.example/dataset/10.5555/f2")
    records = store.list_objects(node.id, count=100)[1]
    ids = [r.pid for r in records] + sorted({r.series_id for r in records if r.series_id})
    with serve_app(store, [node]) as served:
        yield Node(served, node, ids)
    store.close()


@pytest.fixture(scope="module")
def nodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], Node]]:
    """`nodes(engine)`: the module's one served store on that engine, built when first asked
    for. Each case of the parametrized test below is a parameter set of its own, so a
    module-scoped fixture parametrized through it (indirect) was built again for every case:
    19 stores, schemas and servers where two serve."""
    built: dict[str, Node] = {}
    with ExitStack() as stack:

        def node(engine: str) -> Node:
            if engine not in built:
                folder = tmp_path_factory.mktemp("fuzz")
                url = stack.enter_context(stores.engine_url(engine, folder))
                built[engine] = stack.enter_context(build(url))
            return built[engine]

        yield node


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def served_node(request: pytest.FixtureRequest, nodes: Callable[[str], Node]) -> Node:
    return nodes(request.param)


# (verb, resource, takes an id, DataONE method, its parameters)
METHODS = [
    ("GET", "monitor/ping", False, "ping", ()),
    ("GET", "node", False, "getCapabilities", ()),
    ("GET", "", False, "getCapabilities", ()),
    (
        "GET",
        "object",
        False,
        "listObjects",
        (
            "fromDate",
            "toDate",
            "formatId",
            "identifier",
            "replicaStatus",
            "nodeId",
            "start",
            "count",
        ),
    ),
    ("GET", "object", True, "get", ()),
    ("HEAD", "object", True, "describe", ()),
    ("GET", "meta", True, "getSystemMetadata", ()),
    ("GET", "checksum", True, "getChecksum", ("checksumAlgorithm",)),
    (
        "GET",
        "log",
        False,
        "getLogRecords",
        ("fromDate", "toDate", "event", "idFilter", "pidFilter", "start", "count"),
    ),
    ("POST", "error", False, "synchronizationFailed", ()),
]

# Tokens that reach deep into the parsers, and raw characters a URL may carry.
TOKENS = [
    "2024-01-31",
    "2024-01-31T12:00:00",
    "T00:00:00.001",
    "+00:00",
    "%2B01:00",
    "-14:00",
    "Z",
    "%20",
    "0001-01-01T00:00:00%2B01:00",
    "9999-12-31T23:59:59-01:00",
    "0000-00-00",
    "2024-02-30",
    "1" * 13,
    "9" * 40,
    "0",
    "-1",
    "1.5",
    "1e3",
    "%00",
    "%0A",
    "%7F",
    "%FF",
    "%C0%80",
    "%E0%80",
    "%ED%A0%80",
    "%F4%90%80%80",
    "%",
    "%2",
    "%zz",
    "+",
    "%2F",
    "%26",
    "%3D",
    "true",
    "FALSE",
    "read",
    "SHA-256",
    "md5",
    "urn:node:TESTREPO",
    "doi:10.5555%2Ff1",
    "science-on-schema.org/Dataset;ld%2Bjson",
]
URL_CHARS = "abcXYZ0129-._~!$'()*+,;:@/?"
raw_text = st.text(alphabet=URL_CHARS, max_size=6)
escaped = st.binary(min_size=1, max_size=3).map(lambda b: "".join(f"%{x:02X}" for x in b))
plus = st.sampled_from(["%2B", "+", "-", "%20"])
zones = st.sampled_from(["", "Z", "z"]) | st.builds(
    "{}{:02d}:{:02d}".format, plus, st.integers(0, 14), st.sampled_from([0, 30, 59])
)
# mostly real dates, with the years at the ends of what UTC can hold (bad ones are in TOKENS)
dates = st.builds(
    "{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}{}{}".format,
    st.sampled_from([1, 1, 2, 1970, 2024, 9999, 9999]) | st.integers(1, 9999),
    st.sampled_from([1, 12]) | st.integers(1, 12),
    st.sampled_from([1, 31]) | st.integers(1, 28),
    st.sampled_from([0, 23]) | st.integers(0, 23),
    st.integers(0, 59),
    st.integers(0, 59),
    st.sampled_from(["", ".0", ".001", ".1234567891"]),
    zones,
)
# the first and last days UTC can hold, at any hour and zone: near the edge of datetime
edge_dates = st.builds(
    "{}T{:02d}:{:02d}:00{}".format,
    st.sampled_from(["0001-01-01", "9999-12-31"]),
    st.integers(0, 23),
    st.integers(0, 59),
    zones,
)
numbers = st.integers(-(10**15), 10**40).map(str)
parts = st.sampled_from(TOKENS) | raw_text | escaped
values = st.one_of(
    st.sampled_from(TOKENS),
    dates,
    edge_dates,
    numbers,
    st.lists(parts, max_size=6).map("".join),
    st.lists(st.sampled_from(TOKENS) | raw_text, max_size=3).map(lambda p: f"a{''.join(p)}%00b"),
)


# A strategy is validated and sized up by Hypothesis the first time it is drawn from, so the
# ones below are built once (module level or cached by their arguments), not per example.
@cache
def good(name: str) -> st.SearchStrategy[str]:
    """Values a client could well send for this parameter."""
    if name in ("fromDate", "toDate"):
        return dates | edge_dates
    if name in ("start", "count"):
        return st.integers(0, 20).map(str)
    if name in ("identifier", "idFilter", "pidFilter"):
        return st.sampled_from(["doi:10.5555%2Ff1", "doi:10.5555%2Fa%2Bb", "nothing"])
    if name == "formatId":
        return st.sampled_from(["science-on-schema.org%2FDataset;ld%2Bjson", "text/csv"])
    if name == "replicaStatus":
        return st.sampled_from(["true", "false"])
    if name == "event":
        return st.sampled_from(["read", "create", "replicate"])
    if name == "checksumAlgorithm":
        return st.sampled_from(["MD5", "SHA-1", "sha256", "SHA-512"])
    return st.just("urn:node:TESTREPO")


@cache
def mostly_good(name: str) -> st.SearchStrategy[str]:
    """Mostly good values, so a hostile one is not hidden behind another's error."""
    return st.one_of(good(name), good(name), values)


# a raw `?` would start the query, and only slashes would name no object
made_up = values.map(lambda v: v.replace("?", "%3F")).filter(lambda v: v.strip("/"))
shapes = st.sampled_from(["plain", "plain", "bare name", "repeated", "junk", "empty"])
junk_names = raw_text | escaped


@cache
def object_ids(pids: tuple[str, ...]) -> st.SearchStrategy[str]:
    return st.sampled_from(pids).map(lambda pid: quote(pid, safe=":+")) | made_up


@cache
def chosen_names(names: tuple[str, ...]) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(names or ("x",)), max_size=4, unique=True)


@cache
def requests_for(
    resource: str, takes_id: bool, names: tuple[str, ...], pids: tuple[str, ...]
) -> st.SearchStrategy[tuple[str, str]]:
    """(raw path after /v2, raw query string): mostly the method's own parameters."""
    return _requests_for(resource, takes_id, names, pids)


@st.composite
def _requests_for(
    draw: st.DrawFn, resource: str, takes_id: bool, names: tuple[str, ...], pids: tuple[str, ...]
) -> tuple[str, str]:
    path = resource
    if takes_id:
        path = f"{resource}/{draw(object_ids(pids))}"
    chosen = draw(chosen_names(names))
    parts = [f"{name}={draw(mostly_good(name))}" for name in chosen]
    shape = draw(shapes)
    if shape == "bare name" and parts:
        parts[0] = parts[0].partition("=")[0]
    elif shape == "repeated" and parts:
        parts.append(parts[0])
    elif shape == "junk":
        parts.append(f"{draw(junk_names)}={draw(values)}")
    elif shape == "empty":
        parts.insert(draw(st.integers(0, len(parts))), "")  # `&&`, a leading or trailing `&`
    return path, "&".join(parts)


@dataclass
class Answer:
    status: int
    headers: dict[str, str]  # names in lower case
    body: bytes


class _Wire:
    """Where http.client writes a request: the bytes it would send."""

    def __init__(self) -> None:
        self.data = bytearray()

    def sendall(self, data: bytes) -> None:
        self.data += data


def write_request(node: Node, verb: str, target: str, body: bytes | None) -> bytes:
    """The request as http.client puts it on the wire."""
    conn = node.connection()
    wire = _Wire()
    conn.sock = wire
    conn.putrequest(verb, target, skip_accept_encoding=True)
    if body is not None:
        conn.putheader("Content-Type", "multipart/mixed; boundary=b")
        conn.putheader("Content-Length", str(len(body)))
    conn.endheaders(body)
    return bytes(wire.data)


def call_app(node: Node, raw: bytes, verb: str) -> Answer:
    """The app called with the environ waitress builds from `raw` (its parser and task)."""
    server = node.served.server
    parser = HTTPRequestParser(server.adj)
    rest = raw
    while rest and not parser.completed:
        rest = rest[parser.received(rest) :]
    assert parser.completed and parser.error is None, parser.error
    channel = SimpleNamespace(
        server=server, addr=("127.0.0.1", 40000), check_client_disconnected=lambda: False
    )
    environ = WSGITask(channel, parser).get_environment()
    started: list[Any] = []
    chunks: list[bytes] = []

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        started[:] = [status, headers]
        return chunks.append

    result = server.application(environ, start_response)
    try:
        chunks.extend(result)
    finally:
        getattr(result, "close", lambda: None)()
    status, headers = started
    body = b"" if verb == "HEAD" else b"".join(chunks)  # as a client reads a HEAD answer
    return Answer(int(status.split()[0]), {k.lower(): v for k, v in headers}, body)


def over_waitress(node: Node, raw: bytes) -> Answer:
    """The same bytes sent to waitress on 127.0.0.1."""
    conn = node.connection()
    try:
        conn.connect()
        assert conn.sock is not None
        conn.sock.sendall(raw)
        verb = raw.split(b" ", 1)[0].decode()
        response = http.client.HTTPResponse(conn.sock, method=verb)
        response.begin()
        body = response.read()
        return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, body)
    finally:
        conn.close()


def check(answer: Answer, verb: str, method: str) -> None:
    status, body = answer.status, answer.body
    assert status < 500, (status, body[:500])
    if status < 400:
        if method in ("listObjects", "getLogRecords", "getCapabilities", "getChecksum"):
            validate_types(body)
        return
    assert status in STATUS.values(), status
    listed: set[str | None] = {DETAIL_CODES.get(method, {}).get(name) for name in STATUS}
    expected = {code for code in listed if code} | {"0"}
    if verb == "HEAD":
        assert body == b""
        assert answer.headers.get("dataone-exception-name")
        assert answer.headers.get("dataone-exception-detailcode") in expected
        return
    validate_error(body)
    root = etree.fromstring(body)
    assert root.get("errorCode") == str(status)
    assert STATUS[root.get("name") or ""] == status
    assert root.get("detailCode") in expected, (method, root.get("detailCode"))


APIS = st.sampled_from(["v2", "v1"])
BODIES = st.binary(max_size=300)


def draw_request(
    data: st.DataObject, node: Node, verb: str, resource: str, takes_id: bool, names: Any
) -> bytes:
    path, query = data.draw(requests_for(resource, takes_id, names, tuple(node.pids)))
    api = data.draw(APIS)
    target = f"/{node.node.short_name}/{api}/{path}" + (f"?{query}" if query else "")
    body = data.draw(BODIES) if verb == "POST" else None
    return write_request(node, verb, target, body)


# ping and getCapabilities put none of their parameters into a statement: they are fuzzed on
# SQLite only. Every other method's statements go to both engines, which differ in what they
# take (PostgreSQL refuses NUL in text and years its timestamps cannot hold).
NO_SQL = ("ping", "getCapabilities")
CASES = [
    pytest.param(engine, *m, id=f"{engine}-{m[3]}-{m[1] or 'root'}")
    for engine in ("sqlite", "postgres")
    for m in METHODS
    if engine == "sqlite" or m[3] not in NO_SQL
]


@pytest.mark.slow  # 1,700 requests; the quick loop has the real-server test below
@pytest.mark.parametrize(("engine", "verb", "resource", "takes_id", "method", "names"), CASES)
@FUZZ
@given(data=st.data())
def test_no_query_string_or_identifier_is_a_server_error(
    nodes: Callable[[str], Node],
    engine: str,
    verb: str,
    resource: str,
    takes_id: bool,
    method: str,
    names: tuple[str, ...],
    data: st.DataObject,
) -> None:
    served_node = nodes(engine)
    raw = draw_request(data, served_node, verb, resource, takes_id, names)
    check(call_app(served_node, raw, verb), verb, method)


ANY_METHOD = st.sampled_from(METHODS)


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@settings(FUZZ, max_examples=40)
@given(data=st.data())
def test_over_waitress_no_request_is_a_server_error(served_node: Node, data: st.DataObject) -> None:
    """The real server, on every method: what it reads is what the app was handed above."""
    verb, resource, takes_id, method, names = data.draw(ANY_METHOD)
    raw = draw_request(data, served_node, verb, resource, takes_id, names)
    answer = over_waitress(served_node, raw)
    check(answer, verb, method)
    assert call_app(served_node, raw, verb).status == answer.status
