"""The notify worker of `adapter serve`: pages asked for checked at once, the asker answered.

Two threads. `notify-check` takes the pending requests (and announcements) of the inbox,
runs the ordinary sync engine for their node limited to their pages (a `Run` whose
`WorkOptions.only` names them: the same claims, politeness, checks and writes as a scheduled
run, adapter.sync), then settles each request whose page was checked after it arrived:
Accept with the page's DataONE objects (and Announce Ingest for each version committed since
the request), or Reject with the report's summary and the page's errors in plain words.
A page that another process (`adapter worker`, a scheduled run) checks first settles the
request all the same: the decision reads the store, not this thread's outcome. It also
tells each node's `notify.report_to` which pages stopped, or started again, being
harvestable, once after each finished run of the node.

`notify-send` delivers the outbox (adapter.notify.sender) as soon as something is queued,
and again when a retry is due.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from adapter.config.settings import NodeSettings
from adapter.dataone.records import DATASET_FORMAT
from adapter.findings import Severity
from adapter.notify import patterns as p
from adapter.notify.patterns import REQUEST_INGEST, Received, Service
from adapter.notify.sender import Sender
from adapter.store import claims
from adapter.store import notify as kept
from adapter.store.db import Store
from adapter.store.frontier import PageInfo, find_page, list_pages, make_due_now
from adapter.store.history import RunInfo
from adapter.store.notify import Incoming, Outgoing, PageObject
from adapter.sync.drain import Run, WorkOptions
from adapter.sync.fetchers import node_fetcher
from adapter.sync.loop import drive
from adapter.sync.outcome import RunSummary

log = logging.getLogger(__name__)

POLL = 5.0  # seconds between looks at the store when nothing woke the worker
MAX_PENDING = timedelta(hours=24)  # a request whose page could not be checked by then: Reject
MAX_REASONS = 12  # error findings named in a Reject
RUNS_LOOKED_AT = 5  # a node's newest runs read for the newest finished one


class NotifyWorker:
    """The two threads, started by `start` and stopped by `close`."""

    def __init__(
        self,
        store: Store,
        nodes: Sequence[NodeSettings],
        public_url: str,
        *,
        sender: Sender | None = None,
        poll: float = POLL,
    ) -> None:
        self.store = store
        self.nodes = {n.id: n for n in nodes}
        self.public_url = public_url
        self.services = {n.id: p.node_service(public_url, n.short_name, n.name) for n in nodes}
        self.sender = sender or Sender(store, nodes)
        self.poll = poll
        self.stop = threading.Event()
        self._check_due = threading.Event()
        self._send_due = threading.Event()
        self._runs_seen: dict[str, RunInfo] = {}  # node -> newest finished run looked at
        self._threads: list[threading.Thread] = []

    def wake(self) -> None:
        """Something arrived (the inbox): look at the store now."""
        self._check_due.set()
        self._send_due.set()

    def start(self) -> None:
        for name, target in (("notify-check", self._check_loop), ("notify-send", self._send_loop)):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def close(self) -> None:
        self.stop.set()
        self.wake()
        for thread in self._threads:
            thread.join(timeout=60)

    # -- the loops ----------------------------------------------------------------------------

    def _check_loop(self) -> None:
        while not self.stop.is_set():
            self._check_due.clear()
            try:
                self.check_once()
            except Exception:  # the store away, or a bug of ours: logged, tried again
                log.exception("notify: checking the requested pages failed")
            self._check_due.wait(self.poll)

    def _send_loop(self) -> None:
        while not self.stop.is_set():
            self._send_due.clear()
            wait = self.poll
            try:
                self.sender.deliver_due()
                wait = min(self.poll, self.sender.seconds_to_next() or self.poll)
            except Exception:
                log.exception("notify: delivering the outbox failed")
            self._send_due.wait(wait)

    # -- one round ----------------------------------------------------------------------------

    def check_once(self) -> int:
        """Check the pending requests' pages, settle those checked, tell `report_to` of the
        finished runs; how many requests were settled."""
        pending = kept.pending_requests(self.store)
        by_node: dict[str, set[str]] = {}
        for req in pending:
            if req.node_id in self.nodes and req.object_url:
                by_node.setdefault(req.node_id, set()).add(req.object_url)
        for node_id, urls in by_node.items():
            if self.stop.is_set():
                break
            self.check_pages(self.nodes[node_id], urls)
        settled = sum(self.settle(req) for req in pending if req.node_id in self.nodes)
        if settled:
            self._send_due.set()
        for node in self.nodes.values():
            if node.notify.report_to and self.report_after_run(node):
                self._send_due.set()
        return settled

    def check_pages(self, node: NodeSettings, urls: set[str]) -> int:
        """The node's due pages among `urls`, through the sync engine; how many were done."""
        owner = claims.owner_id() + ":notify"
        fetcher, robots = node_fetcher(self.store, node, owner)
        options = WorkOptions(only=frozenset(urls))
        run = Run(self.store, node, self.stop, RunSummary(node.id), owner, fetcher, options,
                  robots=robots)  # fmt: skip
        try:
            return drive(run).result()
        finally:
            run.close()

    def settle(self, req: Incoming) -> bool:
        """Answer `req` if its page was checked after it arrived; whether it was settled."""
        node, url = self.nodes[req.node_id], req.object_url or ""
        found = find_page(self.store, url, node.id)
        page = found[0] if found else None
        checked = page.last_checked_at if page is not None and not page.due else None
        if page is None or checked is None or checked < req.received_at:
            return self._not_yet(req, node, page)
        objects = kept.page_objects(self.store, node.id, url)
        rec = _received(req)
        service = self.services[node.id]
        link = p.check_link(self.public_url, url)
        if page.harvestable and objects:
            answers = self._new_versions(req, rec, service, objects, link)
            if req.kind == REQUEST_INGEST:
                answers.insert(0, self._accept(req, rec, service, objects, link))
            return kept.settle(self.store, req.id, "accepted", answers)
        why = reasons(page, link)
        if req.kind == REQUEST_INGEST:
            answer = _out(req, "reject", p.reject(service, rec, why))
        else:
            to = (req.origin_id, req.origin_inbox)
            doc = p.announce_status(service, to, url, why)
            # not a `report_to` status kind: that one is told on its own terms
            answer = _out(req, "reply-not-harvestable", {**doc, "inReplyTo": req.notification_id})
        return kept.settle(self.store, req.id, "rejected", [answer], reason=why)

    def _not_yet(self, req: Incoming, node: NodeSettings, page: PageInfo | None) -> bool:
        """Not checked since it arrived: made due again if something cleared it (a check
        that was in flight when it came), rejected once MAX_PENDING has passed."""
        now = datetime.now(UTC)
        if now - req.received_at > MAX_PENDING:
            why = (f"{req.object_url} could not be checked within "
                   f"{MAX_PENDING.total_seconds() / 3600:g} hours; ask again later.")  # fmt: skip
            rec, service = _received(req), self.services[node.id]
            answer = _out(req, "reject", p.reject(service, rec, why))
            answers = [answer] if req.kind == REQUEST_INGEST else []
            return kept.settle(self.store, req.id, "rejected", answers, reason=why)
        if page is None or not page.due:
            with self.store.write() as conn:
                make_due_now(conn, node.id, req.object_url or "")
        return False

    def _accept(
        self, req: Incoming, rec: Received, me: Service, objects: list[PageObject], link: str
    ) -> Outgoing:
        docs = [p.dataone_object(me.id, o.pid, o.series_id, link) for o in objects]
        first = objects[0]
        summary = (
            f"{req.object_url} is synced to DataONE as {first.pid}"
            + (f" (seriesId {first.series_id})" if first.series_id else "")
            + f". The check page's report: {link}"
        )
        return _out(req, "accept", p.accept(me, rec, docs, summary))

    def _new_versions(
        self, req: Incoming, rec: Received, me: Service, objects: list[PageObject], link: str
    ) -> list[Outgoing]:
        """Announce Ingest for each Dataset version committed since the request arrived."""
        to = (req.origin_id, req.origin_inbox)
        out = []
        for obj in objects:
            if obj.date_uploaded >= req.received_at and obj.format_id == DATASET_FORMAT:
                doc = p.dataone_object(me.id, obj.pid, obj.series_id, link)
                announce = p.announce_ingest(me, to, doc, req.object_url or "", rec.id)
                out.append(_out(req, "announce-ingest", announce))
        return out

    # -- report_to ----------------------------------------------------------------------------

    def report_after_run(self, node: NodeSettings) -> int:
        """After the node's newest finished run (once each): an Announce to `report_to` for
        each page whose harvestability changed since the last one it was told; how many."""
        runs = self.store.runs(node.id, limit=RUNS_LOOKED_AT)
        finished = [r for r in runs if r.status != "running"]
        seen = self._runs_seen.get(node.id)
        if not finished or (seen is not None and seen.id == finished[0].id):
            return 0
        # pages checked since the run looked at last started (windows overlap; what was
        # told is not told twice): a page a request checked between runs is counted too;
        # after a restart, since the oldest run looked at, or every page
        if seen is not None:
            since: datetime | None = seen.started_at
        else:
            since = finished[-1].started_at if len(runs) == RUNS_LOOKED_AT else None
        self._runs_seen[node.id] = finished[0]
        return self.report_changes(node, since)

    def report_changes(self, node: NodeSettings, since: datetime | None = None) -> int:
        """Queue an Announce for each page (checked since `since`) that became not
        harvestable, or is harvestable again after one said it was not; never two for one
        page and state."""
        target = node.notify.report_to
        if not target:
            return 0
        told = kept.announced_states(self.store, node.id)
        me = self.services[node.id]
        queued = []
        for page in list_pages(self.store, node_id=node.id, checked_since=since):
            state = _status_kind(page)
            if state is None or told.get(page.url, "announce-harvestable") == state:
                continue
            link = p.check_link(self.public_url, page.url)
            if state == "announce-not-harvestable":
                summary = reasons(page, link)
            else:
                summary = f"{page.url} is harvestable again. The check page's report: {link}"
            doc = p.announce_status(me, (target, target), page.url, summary)
            queued.append(Outgoing(node.id, state, target, doc, None, page.url))
        if queued:
            with self.store.write() as conn:
                for out in queued:
                    kept.enqueue(conn, out)
            log.info("notify: %d page status announcement(s) for %s", len(queued), node.id)
        return len(queued)


def _status_kind(page: PageInfo) -> str | None:
    """The announcement a page's state calls for (None: not checked, or gone)."""
    if page.last_status in (None, "gone", "removed", "error"):
        return None
    harvestable = page.harvestable
    if harvestable is None:
        return None
    return "announce-harvestable" if harvestable else "announce-not-harvestable"


def reasons(page: PageInfo, link: str) -> str:
    """Why a page is not harvestable, in plain words: the report's summary first (what the
    check page shows at its top), then its errors, then where the whole report is."""
    report: dict[str, Any] = page.report
    text = str(report.get("text") or "")
    head = text.split("\n\n", 1)[0].strip()
    lines = [head or f"{page.url} is not harvestable (last status {page.last_status})."]
    errors = [f for f in report.get("findings") or [] if f.get("severity") == Severity.ERROR.value]
    seen: set[str] = set()
    for f in errors:
        message = str(f.get("message") or f.get("code"))
        if message not in seen and len(seen) < MAX_REASONS:
            seen.add(message)
            lines.append(f"- {message} ({f.get('code')})")
    lines.append(f"The whole report, on the check page: {link}")
    return "\n".join(lines)


def _received(req: Incoming) -> Received:
    kind_page = req.object_url
    return Received(
        req.kind, req.notification_id, req.origin_id, req.origin_inbox, kind_page, None, req.body
    )


def _out(req: Incoming, kind: str, doc: dict[str, Any]) -> Outgoing:
    return Outgoing(req.node_id, kind, req.origin_inbox, doc, req.notification_id, req.object_url)
