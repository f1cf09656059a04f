"""The store's tables (SQLAlchemy Core, SQLite and PostgreSQL), always in their newest shape.

`adapter.store.migrations` brings an older database to this shape and creates a new one.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
)

metadata = MetaData()


def utc(value: datetime) -> datetime:
    """Aware UTC for writing and comparing (naive values are taken as UTC)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def utc_or_none(value: datetime | None) -> datetime | None:
    return None if value is None else utc(value)


# Timestamps: always UTC (SQLite keeps them as naive text; the store attaches UTC on read).
Stamp = DateTime(timezone=True)
BigId = BigInteger().with_variant(Integer, "sqlite")  # SQLite autoincrements INTEGER only

schema_version = Table(
    "schema_version",
    metadata,
    Column("version", Integer, primary_key=True),
    Column("description", Text, nullable=False),
    Column("applied_at", Stamp, nullable=False),
)

# One row per landing page of a node: what the sitemaps said, what we saw last, what is due.
# claimed_by / lease_until let many workers share the frontier (FOR UPDATE SKIP LOCKED).
frontier = Table(
    "frontier",
    metadata,
    Column("id", BigId, primary_key=True, autoincrement=True),
    Column("node_id", String(200), nullable=False),
    Column("url", Text, nullable=False),
    Column("sitemap", Text),  # the sitemap that listed it last
    Column("lastmod", Stamp),  # the sitemap's <lastmod>
    Column("links_json", Text),  # its Signmap rs:ln links, as JSON
    Column("etag", Text),
    Column("last_modified", Text),  # the Last-Modified header, verbatim
    Column("content_checksum", String(80)),  # sha256 of the Datasets minus volatile properties
    Column("last_status", String(40)),  # new | harvested | not-modified | not-harvestable | ...
    Column("http_status", Integer),
    Column("last_report", Text),  # the last report, JSON
    Column("first_seen_run", BigInteger),
    Column("last_seen_run", BigInteger),  # the last run whose discovery listed it
    Column("last_checked_at", Stamp),
    Column("missing_runs", Integer, nullable=False, default=0),
    Column("due", Boolean, nullable=False, default=True),
    Column("claimed_by", String(200)),
    Column("lease_until", Stamp),
    UniqueConstraint("node_id", "url", name="uq_frontier_node_url"),
)
Index("ix_frontier_due", frontier.c.node_id, frontier.c.due, frontier.c.id)
# the operator view's lists: by outcome, and in natural URL order (shorter first: ds/9 < ds/10);
# the id last, so a deep page is found in the index alone
ix_frontier_status = Index(
    "ix_frontier_status",
    frontier.c.node_id,
    frontier.c.last_status,
    func.length(frontier.c.url),
    frontier.c.url,
    frontier.c.id,
)
# A sitegraph's Datasets: each one's JSON-LD as cut out of the graph, beside its frontier
# row (kept off the frontier, whose rows are read by the thousand for the operator view);
# a row with a document is checked from it, never fetched (adapter.discovery.sitegraph).
graph_documents = Table(
    "graph_documents",
    metadata,
    Column("frontier_id", BigInteger, primary_key=True, autoincrement=False),
    Column("node_id", String(200), nullable=False),
    Column("checksum", String(80), nullable=False),  # sha256 of the document
    Column("document", LargeBinary, nullable=False),
)
Index("ix_graph_documents_node", graph_documents.c.node_id)
# What a node's last whole read of each sitegraph gave: validators for the next run's
# conditional GET and the body's checksum (same bytes without validators: unchanged too).
sitegraphs = Table(
    "sitegraphs",
    metadata,
    Column("node_id", String(200), primary_key=True),
    Column("url", String(2048), primary_key=True),
    Column("etag", Text),
    Column("last_modified", Text),
    Column("checksum", String(80)),
    Column("datasets", Integer),
    Column("read_at", Stamp),
)

ix_frontier_natural = Index(
    "ix_frontier_natural",
    frontier.c.node_id,
    func.length(frontier.c.url),
    frontier.c.url,
    frontier.c.id,
)

# The finding codes of each page's last report, one row per (page, code), with the page's
# last outcome: kept by triggers on the frontier, so the operator view counts and lists a
# code's pages from an index, whatever the node's size.
page_codes = Table(
    "page_codes",
    metadata,
    Column("frontier_id", BigInteger, primary_key=True),
    Column("code", String(200), primary_key=True),
    Column("node_id", String(200), nullable=False),
    Column("url", Text, nullable=False),
    Column("severity", String(20)),
    Column("status", String(40)),  # the page's last_status
)
Index(
    "ix_page_codes_list",
    page_codes.c.node_id,
    page_codes.c.code,
    func.length(page_codes.c.url),
    page_codes.c.url,
    page_codes.c.frontier_id,
)
Index(
    "ix_page_codes_status",
    page_codes.c.node_id,
    page_codes.c.code,
    page_codes.c.status,
    func.length(page_codes.c.url),
    page_codes.c.url,
    page_codes.c.frontier_id,
)
Index("ix_page_codes_count", page_codes.c.node_id, page_codes.c.code, page_codes.c.severity)

# One row per DataONE object; immutable columns are written once (see records.py).
records = Table(
    "records",
    metadata,
    Column("id", BigId, primary_key=True, autoincrement=True),
    Column("node_id", String(200), nullable=False),
    Column("pid", String(800), nullable=False),
    Column("series_id", String(800)),
    Column("format_id", String(200), nullable=False),
    Column("checksum_algorithm", String(20), nullable=False),
    Column("checksum", String(128), nullable=False),
    Column("size", BigInteger, nullable=False),
    Column("source_url", Text, nullable=False),
    Column("date_uploaded", Stamp, nullable=False),
    Column("date_modified", Stamp, nullable=False),  # dateSysMetadataModified
    Column("media_type", String(200), nullable=False),
    Column("file_name", Text),
    Column("obsoletes", String(800)),
    Column("obsoleted_by", String(800)),
    Column("archived", Boolean, nullable=False, default=False),
    Column("serial_version", Integer, nullable=False, default=1),
    Column("submitter", Text, nullable=False),
    Column("rights_holder", Text, nullable=False),
    Column("describes_pid", String(800)),  # a metadata copy -> its Dataset object
    Column("object_bytes", LargeBinary, nullable=False),
    UniqueConstraint("node_id", "pid", name="uq_records_node_pid"),
)
Index("ix_records_modified", records.c.node_id, records.c.date_modified, records.c.pid)
Index("ix_records_series", records.c.node_id, records.c.series_id)

# One row per series: which landing page owns it, its head and the content key of the head.
series = Table(
    "series",
    metadata,
    Column("node_id", String(200), primary_key=True),
    Column("series_id", String(800), primary_key=True),
    Column("source_url", Text, nullable=False),  # the landing page that owns the series
    Column("head_pid", String(800), nullable=False),
    Column("content_key", String(80), nullable=False),  # sha256 minus volatile properties
    Column("describes_series", String(800)),  # a metadata copy's series -> the Dataset's
)
# a page's series (archive_unlisted, refresh_packages run per page written)
ix_series_source = Index("ix_series_source", series.c.node_id, series.c.source_url)

# Every identifier the store has given out (PIDs and seriesIds, of every node), once: the
# primary key makes "never reused, across time and nodes" a constraint, race-free on both
# engines (a second claim of an identifier inserts nothing; see ledger.claim_identifier).
identifiers = Table(
    "identifiers",
    metadata,
    Column("identifier", String(800), primary_key=True),
    Column("node_id", String(200), nullable=False),
    Column("kind", String(10), nullable=False),  # pid | sid
)

# Every create, new version and archive, in order, for an external consumer.
outbox = Table(
    "outbox",
    metadata,
    Column("seq", BigId, primary_key=True, autoincrement=True),
    Column("node_id", String(200), nullable=False),
    Column("event", String(20), nullable=False),  # create | update | archive
    Column("pid", String(800), nullable=False),
    Column("series_id", String(800)),
    Column("created_at", Stamp, nullable=False),
    Column("acked_at", Stamp),
)
Index("ix_outbox_pending", outbox.c.node_id, outbox.c.acked_at, outbox.c.seq)

runs = Table(
    "runs",
    metadata,
    Column("id", BigId, primary_key=True, autoincrement=True),
    Column("node_id", String(200), nullable=False),
    Column("started_at", Stamp, nullable=False),
    Column("finished_at", Stamp),
    Column("status", String(20), nullable=False),  # running | ok | failed | interrupted
    Column("owner", String(200)),  # host:pid of the process running it
    Column("summary", Text),  # RunSummary.as_dict(), JSON
    Column("error", Text),
)
Index("ix_runs_node", runs.c.node_id, runs.c.id)

# SynchronizationFailed documents the CN posts to the Member Node's /error.
sync_failures = Table(
    "sync_failures",
    metadata,
    Column("id", BigId, primary_key=True, autoincrement=True),
    Column("node_id", String(200), nullable=False),
    Column("pid", String(800)),
    Column("received_at", Stamp, nullable=False),
    Column("xml", Text, nullable=False),
)

# Who read what through the Member Node API (getLogRecords); written in batches by the
# API's buffer (adapter.api.accesslog), pruned to a retention limit as batches arrive.
access_log = Table(
    "access_log",
    metadata,
    Column("id", BigId, primary_key=True, autoincrement=True),
    Column("node_id", String(200), nullable=False),
    Column("pid", String(800), nullable=False),
    Column("event", String(40), nullable=False),  # read | replicate | ...
    Column("subject", Text, nullable=False),
    Column("ip_address", String(64), nullable=False),
    Column("user_agent", Text, nullable=False),
    Column("date_logged", Stamp, nullable=False),
)
Index("ix_access_log_node_date", access_log.c.node_id, access_log.c.date_logged, access_log.c.id)

# The per-node clock behind dateSysMetadataModified: strictly increasing, never backwards.
node_clock = Table(
    "node_clock",
    metadata,
    Column("node_id", String(200), primary_key=True),
    Column("last_stamp", Stamp, nullable=False),
)

# Every change of an object's system metadata, appended in the order of the node clock
# (a create, an obsoletedBy, an archive, a policy update): listObjects pages over this log,
# so a change appends a row and never moves one (docs/sync-and-api.md, "How listObjects
# orders"). Written by triggers on `records` (below), so no write path can forget it.
sysmeta_log = Table(
    "sysmeta_log",
    metadata,
    Column("id", BigId, primary_key=True, autoincrement=True),
    Column("node_id", String(200), nullable=False),
    Column("stamp", Stamp, nullable=False),  # the record's new dateSysMetadataModified
    Column("pid", String(800), nullable=False),
    # the object's previous change (null for its first): the entry is an object's first
    # change in a window [F, T) when prev_stamp is null or before F, a test on the row alone
    Column("prev_stamp", Stamp),
)
Index(
    "ix_sysmeta_log_node_stamp",
    sysmeta_log.c.node_id,
    sysmeta_log.c.stamp,
    sysmeta_log.c.pid,
    sysmeta_log.c.prev_stamp,
)

# The policy each node's system metadata was last written with (access, replication,
# rightsHolder, as JSON): a run whose configuration differs updates every live record.
node_policy = Table(
    "node_policy",
    metadata,
    Column("node_id", String(200), primary_key=True),
    Column("policy", Text, nullable=False),
    Column("applied_at", Stamp, nullable=False),
)

# COAR Notify (adapter.notify): what trusted origins sent to /inbox, kept as received, and
# what it became (pending until the page was checked: accepted, rejected or withdrawn).
notify_inbox = Table(
    "notify_inbox",
    metadata,
    Column("id", BigId, primary_key=True, autoincrement=True),
    Column("node_id", String(200), nullable=False),
    Column("received_at", Stamp, nullable=False),
    Column("notification_id", Text, nullable=False),  # the sender's `id` (inReplyTo of answers)
    Column("kind", String(40), nullable=False),  # request-ingest | announce | undo-offer
    Column("origin_id", Text, nullable=False),
    Column("origin_inbox", Text, nullable=False),
    Column("object_url", Text),  # the landing page asked about
    # pending | accepted | rejected | withdrawn (requests); noted | ignored (an Undo)
    Column("state", String(20), nullable=False),
    Column("reason", Text),  # why it was rejected, in plain words
    Column("decided_at", Stamp),
    Column("body", Text, nullable=False),  # the notification as received (JSON)
)
Index("ix_notify_inbox_state", notify_inbox.c.state, notify_inbox.c.id)
# /ops/notify?node=X pages newest first: without it a page read and sorted every row
ix_notify_inbox_node = Index("ix_notify_inbox_node", notify_inbox.c.node_id, notify_inbox.c.id)
Index("ix_notify_inbox_sender", notify_inbox.c.origin_id, notify_inbox.c.notification_id)

# What the adapter sends (answers, Announce Ingest, page status announcements), retried with
# backoff until the receiving inbox answers 201/202 or `attempts` reaches the limit (failed).
notify_outbox = Table(
    "notify_outbox",
    metadata,
    Column("id", BigId, primary_key=True, autoincrement=True),
    Column("node_id", String(200), nullable=False),
    Column("created_at", Stamp, nullable=False),
    Column("kind", String(40), nullable=False),  # tentative-accept | accept | reject | ...
    Column("target_inbox", Text, nullable=False),
    Column("in_reply_to", Text),
    Column("page_url", Text),
    Column("body", Text, nullable=False),  # the notification (JSON-LD)
    Column("state", String(20), nullable=False),  # pending | delivered | failed
    Column("attempts", Integer, nullable=False, default=0),
    Column("next_attempt_at", Stamp, nullable=False),
    Column("last_error", Text),
    Column("http_status", Integer),
    Column("delivered_at", Stamp),
)
Index("ix_notify_outbox_due", notify_outbox.c.state, notify_outbox.c.next_attempt_at)
Index(
    "ix_notify_outbox_page", notify_outbox.c.node_id, notify_outbox.c.page_url, notify_outbox.c.id
)
ix_notify_outbox_node = Index("ix_notify_outbox_node", notify_outbox.c.node_id, notify_outbox.c.id)
