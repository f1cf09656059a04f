"""What a Member Node request is to its handlers: the call, the response, the node, the store.

The application (`adapter.api.app`) routes a request to a `Call`; the handlers
(`adapter.api.read`, `adapter.api.syncfailed`) answer it with a `Response`.
Both sides import these types from here, so neither imports the other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from adapter.api.accesslog import RETENTION
from adapter.api.auth import OPEN, PUBLIC_ACCESS, Authority, NodeAccess
from adapter.api.schedule import Schedule
from adapter.api.xml import NodeInfo
from adapter.models import SyncRecord
from adapter.store.accesslog import AccessEvent, LogQuery, LogRetention
from adapter.store.history import FailureCaps
from adapter.store.listing import ListedObject, Window

XML = "text/xml; charset=utf-8"
StartResponse = Callable[[str, list[tuple[str, str]]], Any]


class RecordStore(Protocol):
    """What the API needs from the store (adapter.store.db.Store provides it)."""

    def list_objects(
        self,
        node_id: str,
        *,
        from_date: datetime | None = None,
        to_date: datetime | None = None,
        format_id: str | None = None,
        identifier: str | None = None,
        start: int = 0,
        count: int = 1000,
    ) -> tuple[int, list[SyncRecord]]: ...

    def list_entries(
        self, window: Window, *, start: int = 0, count: int = 1000
    ) -> tuple[int, list[ListedObject]]: ...

    def get_record(
        self, node_id: str, pid: str, *, with_bytes: bool = False
    ) -> SyncRecord | None: ...

    def resolve_sid(self, node_id: str, sid: str) -> str | None: ...

    def access_events(
        self, node_id: str, query: LogQuery, *, start: int = 0, count: int = 100
    ) -> tuple[int, list[AccessEvent]]: ...

    def keep_sync_failure(
        self, node_id: str, pid: str | None, text: str, caps: FailureCaps
    ) -> int | None: ...


class EventLog(Protocol):
    """Takes access events without waiting on the store (adapter.api.accesslog.EventBuffer)."""

    def record(self, event: AccessEvent) -> None: ...

    def flush(self) -> None: ...


@dataclass(frozen=True, slots=True)
class MemberNode:
    """One served node: what its Node document says, and how its sysmeta is written.

    `harvest` gives the schedule published at a moment (a cron in a zone with
    daylight saving time publishes other UTC hours in summer); without it the
    Node document publishes `info.schedule`.
    """

    info: NodeInfo
    sysmeta: Callable[[SyncRecord], bytes]
    harvest: Callable[[datetime], Schedule] | None = None
    access: NodeAccess = PUBLIC_ACCESS  # its access and replication policy

    @property
    def public_read(self) -> bool:
        """Its access policy lets anyone read its objects."""
        return self.access.public_read


@dataclass(slots=True)
class Call:
    """One request, routed: the DataONE method it names and what it carries."""

    method: str  # DataONE method name (listObjects, get, ...)
    api: str  # v1 | v2
    node: MemberNode
    store: RecordStore
    query: str  # raw query string, decoded by d1params
    environ: dict[str, Any]
    base_url: str  # this node's base URL without version, from configuration only
    identifier: str | None = None  # decoded from the path
    head: bool = False
    access_log: EventLog | None = None  # where reads are logged (None: not logged)
    authority: Authority = OPEN  # verifies tokens, knows DataONE's node subjects
    retention: LogRetention = RETENTION  # getLogRecords shows nothing older


@dataclass(slots=True)
class Response:
    status: int
    body: bytes = b""
    headers: list[tuple[str, str]] = field(default_factory=list)
    content_type: str = XML


Handler = Callable[[Call], Response]
