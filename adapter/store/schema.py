"""The store's tables and their versioned migrations (SQLAlchemy Core, SQLite and PostgreSQL).

Why not alembic: the schema is small, it must upgrade from inside the installed
package (no alembic.ini, no env.py, no script directory) on both engines, and
the one thing we need from a migration tool is "run the numbered steps this
database has not seen yet, under a lock". `MIGRATIONS` is that list.

How to change the schema: edit the tables below (they are always the newest
shape), then append a step to `MIGRATIONS` that brings an existing database of
the previous version to the new shape (add a column, an index ...). A fresh
database is created from the tables and stamped with the newest version; an
older one runs only the steps it is missing. Nothing is ever dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Connection,
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
    inspect,
    literal,
    select,
    text,
)
from sqlalchemy import event as sa_event
from sqlalchemy.schema import CreateIndex

from adapter.errors import StoreError

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

LOG_TRIGGERS = ("records_log_insert", "records_log_update")
_LOG_ROW = (
    "INSERT INTO sysmeta_log (node_id, stamp, pid, prev_stamp) "
    "VALUES (NEW.node_id, NEW.date_modified, NEW.pid, {prev})"
)
_SQLITE_TRIGGERS = (
    "CREATE TRIGGER IF NOT EXISTS records_log_insert AFTER INSERT ON records "
    f"BEGIN {_LOG_ROW.format(prev='NULL')}; END",
    "CREATE TRIGGER IF NOT EXISTS records_log_update AFTER UPDATE OF date_modified ON records "
    "WHEN NEW.date_modified IS NOT OLD.date_modified "
    f"BEGIN {_LOG_ROW.format(prev='OLD.date_modified')}; END",
)
_POSTGRES_TRIGGERS = (
    f"""CREATE OR REPLACE FUNCTION sysmeta_log_append() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    {_LOG_ROW.format(prev="NULL")};
  ELSIF NEW.date_modified IS DISTINCT FROM OLD.date_modified THEN
    {_LOG_ROW.format(prev="OLD.date_modified")};
  END IF;
  RETURN NULL;
END $$ LANGUAGE plpgsql""",
    "DROP TRIGGER IF EXISTS records_log_insert ON records",
    "CREATE TRIGGER records_log_insert AFTER INSERT ON records "
    "FOR EACH ROW EXECUTE FUNCTION sysmeta_log_append()",
    "DROP TRIGGER IF EXISTS records_log_update ON records",
    "CREATE TRIGGER records_log_update AFTER UPDATE OF date_modified ON records "
    "FOR EACH ROW EXECUTE FUNCTION sysmeta_log_append()",
)


def install_log_triggers(conn: Connection) -> None:
    """The triggers that append to `sysmeta_log` whenever a record's date changes (idempotent)."""
    pg = conn.dialect.name == "postgresql"
    for statement in _POSTGRES_TRIGGERS if pg else _SQLITE_TRIGGERS:
        conn.exec_driver_sql(statement)


@sa_event.listens_for(metadata, "after_create")
def _log_created(_target: MetaData, conn: Connection, **_kw: object) -> None:
    """A fresh schema (or the migration's new table) gets the triggers once both tables exist."""
    found = inspect(conn)
    if found.has_table("records") and found.has_table("sysmeta_log"):
        install_log_triggers(conn)


Step = Callable[[Connection], None]

# (version, description, step) in order. Step 1 is the initial schema (see module docstring).
MIGRATIONS: list[tuple[int, str, Step]] = [
    (
        1,
        "initial schema: frontier, records, series, outbox, runs, sync_failures, node_clock",
        lambda conn: metadata.create_all(conn),
    ),
]


def _add_column(table: str, column: str, ddl_type: str) -> Step:
    def step(conn: Connection) -> None:
        if column not in {c["name"] for c in inspect(conn).get_columns(table)}:
            conn.execute(text(f"ALTER TABLE {table} ADD COLUMN {column} {ddl_type}"))

    return step


MIGRATIONS.append(
    (2, "runs.owner: the process running it", _add_column("runs", "owner", "VARCHAR(200)"))
)
MIGRATIONS.append(
    (
        3,
        "access_log: read events for getLogRecords",
        lambda conn: metadata.create_all(conn, tables=[access_log]),
    )
)


def _identifiers(conn: Connection) -> None:
    """The identifier registry, filled with what the store already published.

    A PID two nodes already share (written before the registry) stays valid for both
    records; the registry names the first node, and no third object can take it."""
    identifiers.create(conn, checkfirst=True)
    r, s, i = records, series, identifiers
    taken = select(i.c.identifier)
    conn.execute(
        i.insert().from_select(
            ["identifier", "node_id", "kind"],
            select(r.c.pid, func.min(r.c.node_id), literal("pid"))
            .where(r.c.pid.not_in(taken))
            .group_by(r.c.pid),
        )
    )
    conn.execute(
        i.insert().from_select(
            ["identifier", "node_id", "kind"],
            select(s.c.series_id, func.min(s.c.node_id), literal("sid"))
            .where(s.c.series_id.not_in(taken))
            .group_by(s.c.series_id),
        )
    )


MIGRATIONS.append(
    (4, "identifiers: every PID and seriesId given out, unique across nodes", _identifiers)
)


def _change_log(conn: Connection) -> None:
    """The change log, filled with one entry per existing record at its dateSysMetadataModified.

    Their order is the order listObjects gave them before; nothing else changes
    (no PID, no date, no archive). Records that already have their entry are skipped,
    so the step is safe on a database whose tables were created newer."""
    metadata.create_all(conn, tables=[sysmeta_log, node_policy])
    install_log_triggers(conn)
    r, lg = records, sysmeta_log
    logged = select(lg.c.id).where(
        lg.c.node_id == r.c.node_id, lg.c.pid == r.c.pid, lg.c.stamp == r.c.date_modified
    )
    conn.execute(
        lg.insert().from_select(
            ["node_id", "stamp", "pid"],
            select(r.c.node_id, r.c.date_modified, r.c.pid)
            .where(~logged.exists())
            .order_by(r.c.node_id, r.c.date_modified, r.c.pid),
        )
    )


MIGRATIONS.append(
    (
        5,
        "sysmeta_log: every system-metadata change, for listObjects; node_policy",
        _change_log,
    )
)
MIGRATIONS.append(
    (
        6,
        "ix_series_source: a page's series by index (each page write, and resource maps)",
        lambda conn: ix_series_source.create(conn, checkfirst=True),
    )
)

_CODE_ROWS_SQLITE = (
    "INSERT OR IGNORE INTO page_codes (frontier_id, code, node_id, url, severity, status) "
    "SELECT NEW.id, json_extract(value, '$.code'), NEW.node_id, NEW.url, "
    "json_extract(value, '$.severity'), NEW.last_status "
    "FROM json_each(CASE WHEN json_valid(NEW.last_report) "
    "THEN NEW.last_report ELSE '{}' END, '$.findings') "
    "WHERE json_type(value, '$.code') = 'text'"
)
_CODE_TRIGGERS_SQLITE = (
    "CREATE TRIGGER IF NOT EXISTS page_codes_insert AFTER INSERT ON frontier "
    f"WHEN NEW.last_report IS NOT NULL BEGIN {_CODE_ROWS_SQLITE}; END",
    "CREATE TRIGGER IF NOT EXISTS page_codes_update AFTER UPDATE OF last_report, url ON frontier "
    "WHEN NEW.last_report IS NOT OLD.last_report OR NEW.url IS NOT OLD.url "
    f"BEGIN DELETE FROM page_codes WHERE frontier_id = OLD.id; {_CODE_ROWS_SQLITE}; END",
    "CREATE TRIGGER IF NOT EXISTS page_codes_status AFTER UPDATE OF last_status ON frontier "
    "WHEN NEW.last_status IS NOT OLD.last_status AND NEW.last_report IS OLD.last_report "
    "AND NEW.url IS OLD.url "
    "BEGIN UPDATE page_codes SET status = NEW.last_status WHERE frontier_id = NEW.id; END",
    "CREATE TRIGGER IF NOT EXISTS page_codes_delete AFTER DELETE ON frontier "
    "BEGIN DELETE FROM page_codes WHERE frontier_id = OLD.id; END",
)
_CODE_TRIGGERS_POSTGRES = (
    """CREATE OR REPLACE FUNCTION page_codes_keep() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.last_report IS NOT DISTINCT FROM OLD.last_report
     AND NEW.url IS NOT DISTINCT FROM OLD.url THEN
    UPDATE page_codes SET status = NEW.last_status WHERE frontier_id = NEW.id;
    RETURN NULL;
  END IF;
  IF TG_OP <> 'INSERT' THEN
    DELETE FROM page_codes WHERE frontier_id = OLD.id;
  END IF;
  IF TG_OP <> 'DELETE' AND NEW.last_report IS NOT NULL THEN
    INSERT INTO page_codes (frontier_id, code, node_id, url, severity, status)
    SELECT NEW.id, f->>'code', NEW.node_id, NEW.url, min(f->>'severity'), NEW.last_status
    FROM jsonb_array_elements(CASE WHEN jsonb_typeof(NEW.last_report::jsonb->'findings') = 'array'
         THEN NEW.last_report::jsonb->'findings' ELSE '[]'::jsonb END) AS f
    WHERE jsonb_typeof(f->'code') = 'string'
    GROUP BY f->>'code';
  END IF;
  RETURN NULL;
END $$ LANGUAGE plpgsql""",
    "DROP TRIGGER IF EXISTS page_codes_insert ON frontier",
    "CREATE TRIGGER page_codes_insert AFTER INSERT ON frontier FOR EACH ROW "
    "WHEN (NEW.last_report IS NOT NULL) EXECUTE FUNCTION page_codes_keep()",
    "DROP TRIGGER IF EXISTS page_codes_update ON frontier",
    "CREATE TRIGGER page_codes_update AFTER UPDATE OF last_report, url, last_status ON frontier "
    "FOR EACH ROW WHEN (NEW.last_report IS DISTINCT FROM OLD.last_report "
    "OR NEW.url IS DISTINCT FROM OLD.url OR NEW.last_status IS DISTINCT FROM OLD.last_status) "
    "EXECUTE FUNCTION page_codes_keep()",
    "DROP TRIGGER IF EXISTS page_codes_delete ON frontier",
    "CREATE TRIGGER page_codes_delete AFTER DELETE ON frontier FOR EACH ROW "
    "EXECUTE FUNCTION page_codes_keep()",
)


def install_code_triggers(conn: Connection) -> None:
    """The triggers that keep `page_codes` as each page's last report changes (idempotent)."""
    pg = conn.dialect.name == "postgresql"
    for statement in _CODE_TRIGGERS_POSTGRES if pg else _CODE_TRIGGERS_SQLITE:
        conn.exec_driver_sql(statement)


@sa_event.listens_for(metadata, "after_create")
def _codes_created(_target: MetaData, conn: Connection, **_kw: object) -> None:
    if inspect(conn).has_table("page_codes"):
        install_code_triggers(conn)


def _page_codes(conn: Connection) -> None:
    """page_codes and the frontier's list indexes, filled from the reports already stored."""
    metadata.create_all(conn, tables=[page_codes])  # installs the triggers (after_create)
    for index in (ix_frontier_status, ix_frontier_natural):  # expressions: not reflected
        conn.execute(CreateIndex(index, if_not_exists=True))
    # an update that sets nothing new fires no trigger: the rows are copied once, here
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql(
            "INSERT INTO page_codes (frontier_id, code, node_id, url, severity, status) "
            "SELECT fr.id, f->>'code', fr.node_id, fr.url, min(f->>'severity'), "
            "min(fr.last_status) FROM frontier fr, "
            "jsonb_array_elements(CASE WHEN jsonb_typeof(fr.last_report::jsonb->'findings') "
            "= 'array' THEN fr.last_report::jsonb->'findings' ELSE '[]'::jsonb END) AS f "
            "WHERE fr.last_report IS NOT NULL AND jsonb_typeof(f->'code') = 'string' "
            "GROUP BY fr.id, f->>'code' ON CONFLICT DO NOTHING"
        )
    else:
        conn.exec_driver_sql(
            "INSERT OR IGNORE INTO page_codes (frontier_id, code, node_id, url, severity, status) "
            "SELECT fr.id, json_extract(j.value, '$.code'), fr.node_id, fr.url, "
            "json_extract(j.value, '$.severity'), fr.last_status FROM frontier fr, "
            "json_each(CASE WHEN json_valid(fr.last_report) THEN fr.last_report ELSE '{}' END, "
            "'$.findings') AS j "
            "WHERE fr.last_report IS NOT NULL AND json_type(j.value, '$.code') = 'text'"
        )


MIGRATIONS.append(
    (7, "page_codes: each page's finding codes, and the operator view's indexes", _page_codes)
)
LATEST = MIGRATIONS[-1][0]


def current_version(conn: Connection) -> int | None:
    """The schema version of this database, or None when it has no schema yet."""
    if not inspect(conn).has_table("schema_version"):
        return None
    found = conn.execute(
        select(schema_version.c.version).order_by(schema_version.c.version.desc()).limit(1)
    ).scalar()
    return int(found) if found is not None else None


def upgrade(conn: Connection) -> list[int]:
    """Bring the database to `LATEST` inside the caller's transaction; the versions applied."""
    if conn.dialect.name == "postgresql":  # one upgrader at a time across processes
        conn.execute(text("SELECT pg_advisory_xact_lock(4242001)"))
    version = current_version(conn)
    now = datetime.now(UTC)
    if version is None:
        metadata.create_all(conn)
        conn.execute(
            schema_version.insert().values(
                version=LATEST, description=MIGRATIONS[-1][1], applied_at=now
            )
        )
        return [LATEST]
    if version > LATEST:
        raise StoreError(
            f"the store's schema version {version} is newer than this adapter knows "
            f"({LATEST}); upgrade the adapter"
        )
    applied = []
    for number, description, step in MIGRATIONS:
        if number > version:
            step(conn)
            conn.execute(
                schema_version.insert().values(
                    version=number, description=description, applied_at=now
                )
            )
            applied.append(number)
    return applied
