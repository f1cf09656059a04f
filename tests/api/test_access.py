"""Access policy, DataONE tokens, getReplica and the log's two views, over HTTP.

The app runs under waitress on 127.0.0.1 over a real store (SQLite and
PostgreSQL); a coordinating node of our own (tests.support.tokens) signs the
tokens with a key whose self-signed certificate is the node's
`auth.cn_certificate`. Callers are plain `requests` and DataONE's own
`MemberNodeClient_2_0`, which sends a token as `Authorization: Bearer`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import d1_client.mnclient_2_0
import d1_common.types.exceptions
import jwt
import pytest
import requests
from lxml import etree

from adapter.config.settings import AuthSettings, NodeSettings
from adapter.models import SyncRecord
from adapter.store.accesslog import AccessEvent, LogQuery, LogRetention
from adapter.store.db import Store
from tests.api.test_server import start_serve, stop_serve
from tests.support import stores
from tests.support.d1schemas import pyxb_parse, validate_types
from tests.support.member_node import Served, node_settings, put_dataset, serve_app
from tests.support.tokens import (
    BLOCKED_MN_SUBJECT,
    CN_SUBJECT,
    CURATOR,
    MN_SUBJECT,
    OWNER,
    STRANGER,
    TestCN,
    bearer,
    forger,
    sign,
)

store_url = stores.store_url  # every test here runs on SQLite and on PostgreSQL

CONTACT = "http://orcid.org/0000-0002-1825-0097"


@pytest.fixture(scope="module")
def cn(tmp_path_factory: pytest.TempPathFactory) -> TestCN:
    return TestCN.create(tmp_path_factory.mktemp("cn"))


def private_node() -> NodeSettings:
    return node_settings(
        "urn:node:PRIVATE",
        dataone={
            "contact_subject": CONTACT,
            "rights_holder": OWNER,
            "access_policy": [{"subject": CURATOR, "permissions": ["write"]}],  # implies read
            "replication": {"allowed": True, "blocked": ["urn:node:BLOCKED"]},
        },
    )


def public_node() -> NodeSettings:
    return node_settings("urn:node:OPEN")  # public read, replication not allowed


def auth_for(cn: TestCN) -> AuthSettings:
    return AuthSettings(
        cn_certificate=cn.certificate,
        cn_subjects=(CN_SUBJECT,),
        replication_subjects=(MN_SUBJECT, BLOCKED_MN_SUBJECT),
    )


@dataclass
class World:
    store: Store
    store_url: str
    served: Served
    cn: TestCN
    private: NodeSettings
    public: NodeSettings
    hidden: list[SyncRecord]  # the private node's objects
    shown: list[SyncRecord]  # the public node's

    def url(self, node: NodeSettings, path: str) -> str:
        return self.served.base(node) + path

    def get(self, node: NodeSettings, path: str, subject: str | None = None) -> requests.Response:
        headers = bearer(self.cn.token(subject)) if subject else {}
        return requests.get(self.url(node, path), headers=headers, timeout=10)

    def client(self, node: NodeSettings, token: str | None = None) -> Any:
        return d1_client.mnclient_2_0.MemberNodeClient_2_0(
            f"{self.served.origin}/{node.short_name}", timeout_sec=10, jwt_token=token
        )


@pytest.fixture
def world(store_url: str, cn: TestCN) -> Iterator[World]:
    store = Store.open(store_url)
    private, public = private_node(), public_node()
    for i in range(3):
        put_dataset(store, private, f"10.5555/p{i}", f"Private {i}")
    put_dataset(store, public, "10.5555/open", "Open")
    hidden = store.list_objects(private.id)[1]
    shown = store.list_objects(public.id)[1]
    with serve_app(store, [private, public], auth=auth_for(cn)) as served:
        yield World(store, store_url, served, cn, private, public, hidden, shown)
    store.close()


def error(response: requests.Response, status: int, name: str, detail: str) -> etree._Element:
    assert response.status_code == status, response.text
    root = etree.fromstring(response.content)
    assert (root.get("name"), root.get("detailCode")) == (name, detail), response.text
    return root


def headers_error(response: requests.Response, name: str, detail: str) -> None:
    assert response.status_code == 401
    assert response.headers["DataONE-Exception-Name"] == name
    assert response.headers["DataONE-Exception-DetailCode"] == detail


# -- the access policy ------------------------------------------------------------------


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_restricted_objects_are_hidden_from_anonymous_callers(world: World) -> None:
    listing = pyxb_parse(world.get(world.private, "/object").content)
    assert (listing.total, len(listing.objectInfo)) == (0, 0)
    assert pyxb_parse(world.get(world.public, "/object").content).total == 1
    pid = world.hidden[0].pid
    error(world.get(world.private, f"/object/{pid}"), 401, "NotAuthorized", "1000")
    error(world.get(world.private, f"/meta/{pid}"), 401, "NotAuthorized", "1040")
    error(world.get(world.private, f"/checksum/{pid}"), 401, "NotAuthorized", "1400")
    headers_error(
        requests.head(world.url(world.private, f"/object/{pid}"), timeout=10),
        "NotAuthorized",
        "1360",
    )
    series = quote(world.hidden[0].series_id or "", safe="")
    error(world.get(world.private, f"/object/{series}"), 401, "NotAuthorized", "1000")
    error(world.get(world.private, "/object/doi:nothing-here"), 404, "NotFound", "1020")
    public = world.shown[0]
    assert world.get(world.public, f"/object/{public.pid}").status_code == 200


@pytest.mark.parametrize("subject", [CURATOR, OWNER, CN_SUBJECT])
def test_a_granting_token_lists_and_reads_through_dataones_client(
    world: World, subject: str
) -> None:
    client = world.client(world.private, world.cn.token(subject))
    listing = client.listObjects(start=0, count=10)
    assert [info.identifier.value() for info in listing.objectInfo] == [r.pid for r in world.hidden]
    for record in world.hidden:
        stored = world.store.get_record(world.private.id, record.pid, with_bytes=True)
        assert stored is not None and client.get(record.pid).content == stored.object_bytes
        sysmeta = client.getSystemMetadata(record.pid)
        assert sysmeta.rightsHolder.value() == OWNER
        assert sysmeta.accessPolicy.allow[0].subject[0].value() == CURATOR
        assert client.getChecksum(record.pid).value() == record.checksum
        assert client.describe(record.pid)["DataONE-Checksum"].endswith(record.checksum)


def test_a_token_for_another_subject_is_refused(world: World) -> None:
    pid = world.hidden[0].pid
    error(world.get(world.private, f"/object/{pid}", STRANGER), 401, "NotAuthorized", "1000")
    error(world.get(world.private, f"/meta/{pid}", MN_SUBJECT), 401, "NotAuthorized", "1040")
    listing = pyxb_parse(world.get(world.private, "/object", STRANGER).content)
    assert listing.total == 0
    client = world.client(world.private, world.cn.token(STRANGER))
    with pytest.raises(d1_common.types.exceptions.NotAuthorized):
        client.get(pid)
    # a stranger's token still reads what is public
    assert world.get(world.public, f"/object/{world.shown[0].pid}", STRANGER).status_code == 200


def _bad_tokens(cn: TestCN) -> dict[str, str]:
    hour_ago = time.time() - 7200
    return {
        "expired": cn.token(CURATOR, issued=hour_ago, lifetime=3600),
        "forged": sign(forger(), CURATOR),
        "future": cn.token(CURATOR, issued=time.time() + 3600),
        "no subject": cn.token(CURATOR, sub=None, userId=None),
        "no exp": jwt.encode({"sub": CURATOR, "iat": int(time.time())}, cn.key, algorithm="RS256"),
        "HS256": jwt.encode(
            {"sub": CURATOR, "iat": int(time.time()), "exp": int(time.time()) + 60},
            "a shared secret of some length, and more",
            algorithm="HS256",
        ),
        "garbage": "not.a.token",
    }


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_bad_expired_and_forged_tokens_are_invalid_tokens(world: World) -> None:
    pid = world.hidden[0].pid
    for why, token in _bad_tokens(world.cn).items():
        headers = bearer(token)
        for path, node, detail in (
            (f"/object/{pid}", world.private, "1010"),
            (f"/meta/{pid}", world.private, "1050"),
            (f"/checksum/{pid}", world.private, "1430"),
            ("/object", world.private, "1530"),
            (f"/object/{world.shown[0].pid}", world.public, "1010"),  # also for public objects
            ("/log", world.public, "1470"),
            (f"/replica/{pid}", world.private, "2183"),
        ):
            response = requests.get(world.url(node, path), headers=headers, timeout=10)
            root = error(response, 401, "InvalidToken", detail)
            assert root.findtext("description"), why
    expired = world.client(world.private, _bad_tokens(world.cn)["expired"])
    with pytest.raises(d1_common.types.exceptions.InvalidToken):
        expired.get(pid)
    head = requests.head(
        world.url(world.private, f"/object/{pid}"), headers=bearer("x.y.z"), timeout=10
    )
    headers_error(head, "InvalidToken", "1370")


def test_a_token_within_the_leeway_is_accepted(world: World) -> None:
    token = world.cn.token(CURATOR, issued=time.time() - 3630, lifetime=3600)  # 30 s past exp
    response = requests.get(
        world.url(world.private, f"/object/{world.hidden[0].pid}"),
        headers=bearer(token),
        timeout=10,
    )
    assert response.status_code == 200


def test_without_a_certificate_tokens_are_ignored(store_url: str, cn: TestCN) -> None:
    store = Store.open(store_url)
    private, public = private_node(), public_node()
    hidden = put_dataset(store, private, "10.5555/p", "Private").created[0]
    shown = put_dataset(store, public, "10.5555/o", "Open").created[0]
    forged = bearer(sign(forger(), CURATOR))
    with serve_app(store, [private, public]) as served:
        anyone = requests.get(f"{served.base(public)}/object/{shown}", headers=forged, timeout=10)
        assert anyone.status_code == 200  # a web client's token does not break public reads
        nobody = requests.get(
            f"{served.base(private)}/object/{hidden}",
            headers=bearer(cn.token(CURATOR)),
            timeout=10,
        )
        error(nobody, 401, "NotAuthorized", "1000")  # nothing can grant it: no token is verified
    store.close()


# -- getReplica ---------------------------------------------------------------------------


def test_get_replica_needs_a_member_nodes_token(world: World) -> None:
    record = world.hidden[1]
    path = f"/replica/{record.pid}"
    error(world.get(world.private, path), 401, "NotAuthorized", "2182")
    error(world.get(world.private, path, CURATOR), 401, "NotAuthorized", "2182")
    error(world.get(world.private, path, OWNER), 401, "NotAuthorized", "2182")
    replica = world.client(world.private, world.cn.token(MN_SUBJECT)).getReplica(record.pid)
    original = world.client(world.private, world.cn.token(CN_SUBJECT)).get(record.pid)
    assert replica.content == original.content
    assert replica.headers["DataONE-Checksum"] == f"{record.checksum_algorithm},{record.checksum}"
    assert world.get(world.private, path, CN_SUBJECT).status_code == 200  # the CN may too
    error(world.get(world.private, path, BLOCKED_MN_SUBJECT), 401, "NotAuthorized", "2182")
    error(world.get(world.private, "/replica/sha256:nothing", MN_SUBJECT), 404, "NotFound", "2185")
    series = quote(record.series_id or "", safe="")
    error(world.get(world.private, f"/replica/{series}", MN_SUBJECT), 404, "NotFound", "2185")


def test_get_replica_where_replication_is_not_allowed(world: World) -> None:
    response = world.get(world.public, f"/replica/{world.shown[0].pid}", MN_SUBJECT)
    root = error(response, 401, "NotAuthorized", "2182")
    assert "allows no replicas" in (root.findtext("description") or "")
    with pytest.raises(d1_common.types.exceptions.NotAuthorized):
        world.client(world.public, world.cn.token(MN_SUBJECT)).getReplica(world.shown[0].pid)


def test_node_document_states_what_the_node_offers(world: World) -> None:
    document = world.get(world.private, "/node").content
    validate_types(document)
    root = etree.fromstring(document)
    assert root.get("replicate") == "false"  # it accepts no replicas (MNReplication.replicate)
    services = {(s.get("name"), s.get("version")): s.get("available") for s in root.iter("service")}
    assert services[("MNRead", "v2")] == "true"  # getReplica is an MNRead method
    assert services[("MNReplication", "v2")] == "false"


# -- getLogRecords ------------------------------------------------------------------------


def _read_everything(world: World) -> None:
    agent = {"User-Agent": "access-test/2.0"}
    for record in world.hidden:
        headers = {**agent, **bearer(world.cn.token(CURATOR))}
        assert (
            requests.get(
                world.url(world.private, f"/object/{record.pid}"), headers=headers, timeout=10
            ).status_code
            == 200
        )
    mn = {**agent, **bearer(world.cn.token(MN_SUBJECT))}
    pid = world.hidden[0].pid
    assert (
        requests.get(
            world.url(world.private, f"/replica/{pid}"), headers=mn, timeout=10
        ).status_code
        == 200
    )
    for _ in range(2):
        assert (
            requests.get(
                world.url(world.public, f"/object/{world.shown[0].pid}"), headers=agent, timeout=10
            ).status_code
            == 200
        )


def test_the_cn_sees_every_entry_with_filters_and_paging(world: World) -> None:
    _read_everything(world)
    client = world.client(world.private, world.cn.token(CN_SUBJECT))
    log = client.getLogRecords()
    assert log.total == 4
    entries = log.logEntry
    assert [(e.event, e.subject.value()) for e in entries] == [
        ("read", CURATOR),
        ("read", CURATOR),
        ("read", CURATOR),
        ("replicate", MN_SUBJECT),
    ]
    assert {e.ipAddress for e in entries} == {"127.0.0.1"}
    assert {e.userAgent for e in entries} == {"access-test/2.0"}
    assert [e.identifier.value() for e in entries] == [r.pid for r in world.hidden] + [
        world.hidden[0].pid
    ]
    replicate = client.getLogRecords(event="replicate")
    assert (replicate.total, replicate.logEntry[0].identifier.value()) == (1, world.hidden[0].pid)
    assert client.getLogRecords(idFilter=world.hidden[0].pid).total == 2
    assert client.getLogRecords(idFilter="sha256:").total == 4
    assert client.getLogRecords(idFilter="doi:").total == 0
    moments = [e.dateLogged for e in entries]
    assert client.getLogRecords(fromDate=moments[1]).total == 3
    assert client.getLogRecords(toDate=moments[1]).total == 1
    assert client.getLogRecords(fromDate=moments[3] + timedelta(seconds=1)).total == 0
    page = client.getLogRecords(start=1, count=2)
    assert (page.start, page.count, page.total) == (1, 2, 4)
    assert [e.entryId for e in page.logEntry] == [e.entryId for e in entries[1:3]]
    with pytest.raises(d1_common.types.exceptions.InvalidRequest):
        client.getLogRecords(start=4)
    # the public node's log, seen by the CN: the anonymous reads, with their address
    public = world.client(world.public, world.cn.token(CN_SUBJECT)).getLogRecords()
    assert [(e.subject.value(), e.ipAddress) for e in public.logEntry] == [
        ("public", "127.0.0.1")
    ] * 2


def test_other_callers_see_public_entries_withheld_and_nothing_restricted(world: World) -> None:
    _read_everything(world)
    for subject in (None, CURATOR, OWNER, MN_SUBJECT):
        private = pyxb_parse(world.get(world.private, "/log", subject).content)
        assert private.total == 0
        public = pyxb_parse(world.get(world.public, "/log", subject).content)
        assert public.total == 2
        assert {(e.ipAddress, e.subject.value(), e.event) for e in public.logEntry} == {
            ("withheld", "withheld", "read")
        }


def test_entries_past_the_retention_are_neither_shown_nor_kept(store_url: str, cn: TestCN) -> None:
    store = Store.open(store_url)
    node = public_node()
    pid = put_dataset(store, node, "10.5555/o", "Open").created[0]
    now = datetime.now(UTC)
    old = [
        AccessEvent(node.id, pid, "read", "public", "10.0.0.1", "old", now - timedelta(days=days))
        for days in (40, 20)
    ]
    store.append_access_events(old, LogRetention(keep_days=3650, max_entries=10**6), now)
    retention = LogRetention(keep_days=30, max_entries=10**6)
    with serve_app(store, [node], auth=auth_for(cn), retention=retention) as served:
        cn_view = bearer(cn.token(CN_SUBJECT))
        log = pyxb_parse(
            requests.get(f"{served.base(node)}/log", headers=cn_view, timeout=10).content
        )
        assert [e.userAgent for e in log.logEntry] == ["old"]  # the 20-day-old one
        assert log.total == 1
        ancient = quote((now - timedelta(days=400)).isoformat())
        assert (
            pyxb_parse(
                requests.get(
                    f"{served.base(node)}/log?fromDate={ancient}", headers=cn_view, timeout=10
                ).content
            ).total
            == 1
        )
        assert store.access_events(node.id, LogQuery())[0] == 2  # not pruned until a write
        assert requests.get(f"{served.base(node)}/object/{pid}", timeout=10).status_code == 200
        log = pyxb_parse(
            requests.get(f"{served.base(node)}/log", headers=cn_view, timeout=10).content
        )
        assert log.total == 2
    assert store.access_events(node.id, LogQuery())[0] == 2  # the 40-day-old one is gone
    assert {e.user_agent for e in store.access_events(node.id, LogQuery())[1]} == {
        "old",
        f"python-requests/{requests.__version__}",
    }
    store.close()


# -- POST /error --------------------------------------------------------------------------

REPORT = (
    b'<error name="SynchronizationFailed" errorCode="500" detailCode="6001" pid="PID">'
    b"<description>could not sync</description></error>"
)


def _post_error(world: World, subject: str | None, token: str | None = None) -> requests.Response:
    if token is None and subject is not None:
        token = world.cn.token(subject)
    headers = bearer(token) if token else {}
    return requests.post(
        world.url(world.private, "/error"),
        files={"message": ("message", REPORT, "text/xml")},
        headers=headers,
        timeout=10,
    )


def test_only_the_cn_may_post_errors_once_tokens_are_verified(world: World) -> None:
    error(_post_error(world, None), 401, "NotAuthorized", "2162")
    error(_post_error(world, CURATOR), 401, "NotAuthorized", "2162")
    error(_post_error(world, MN_SUBJECT), 401, "NotAuthorized", "2162")
    error(_post_error(world, None, sign(forger(), CN_SUBJECT)), 401, "InvalidToken", "2164")
    ok = _post_error(world, CN_SUBJECT)
    assert (ok.status_code, ok.text) == (200, "OK")
    assert len(world.store.sync_failures(world.private.id)) == 1


# -- adapter serve --config -----------------------------------------------------------------


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
# the file's auth and access_log sections reach the command's app: nothing here differs by
# engine (the tests above check tokens, the log and its retention on both)
@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_adapter_serve_takes_auth_and_retention_from_the_configuration(
    world: World, tmp_path: Path
) -> None:
    config = tmp_path / "nodes.yaml"
    config.write_text(
        f"""store_url: "{world.store_url}"
auth:
  cn_certificate: "{world.cn.public_key_file}"
  cn_subjects: ["{CN_SUBJECT}"]
  replication_subjects: ["{MN_SUBJECT}"]
access_log:
  keep_days: 7
nodes:
  - id: {world.private.id}
    name: Private repository
    start: {{sitemap_urls: ["https://repo.example/sitemap.xml"]}}
    dataone:
      submitter: "{OWNER}"
      rights_holder: "{OWNER}"
      contact_subject: "{OWNER}"
      access_policy: [{{subject: "{CURATOR}", permissions: [read]}}]
      replication: {{allowed: true}}
""",
        "utf-8",
    )
    process, bases = start_serve("--config", str(config))
    try:
        base = bases[world.private.id]
        pid = world.hidden[0].pid
        assert requests.get(f"{base}/object/{pid}", timeout=10).status_code == 401
        curator = bearer(world.cn.token(CURATOR))
        assert requests.get(f"{base}/object/{pid}", headers=curator, timeout=10).status_code == 200
        mn = bearer(world.cn.token(MN_SUBJECT))
        assert requests.get(f"{base}/replica/{pid}", headers=mn, timeout=10).status_code == 200
        forged = bearer(sign(forger(), CURATOR))
        error(
            requests.get(f"{base}/object/{pid}", headers=forged, timeout=10),
            401,
            "InvalidToken",
            "1010",
        )
        cn_view = bearer(world.cn.token(CN_SUBJECT))
        log = pyxb_parse(requests.get(f"{base}/log", headers=cn_view, timeout=10).content)
        assert [(e.event, e.subject.value()) for e in log.logEntry] == [
            ("read", CURATOR),
            ("replicate", MN_SUBJECT),
        ]
    finally:
        assert stop_serve(process) == 0
