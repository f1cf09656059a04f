"""The store's versioned migrations and the triggers they install (SQLite and PostgreSQL).

Why not alembic: the schema is small, it must upgrade from inside the installed
package (no alembic.ini, no env.py, no script directory) on both engines, and
the one thing we need from a migration tool is "run the numbered steps this
database has not seen yet, under a lock". `MIGRATIONS` is that list.

How to change the schema: edit the tables in `adapter.store.schema` (they are
always the newest shape), then append a step to `MIGRATIONS` that brings an
existing database of the previous version to the new shape (add a column, an
index ...). A fresh database is created from the tables and stamped with the
newest version; an older one runs only the steps it is missing. Nothing is ever
dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from sqlalchemy import (
    Connection,
    MetaData,
    func,
    inspect,
    literal,
    select,
    text,
)
from sqlalchemy import event as sa_event
from sqlalchemy.schema import CreateIndex

from adapter.errors import StoreError
from adapter.store.schema import (
    access_log,
    graph_documents,
    identifiers,
    ix_frontier_natural,
    ix_frontier_status,
    ix_notify_inbox_node,
    ix_notify_outbox_node,
    ix_series_source,
    metadata,
    node_policy,
    notify_inbox,
    notify_outbox,
    page_codes,
    records,
    schema_version,
    series,
    sitegraphs,
    sysmeta_log,
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
MIGRATIONS.append(
    (
        8,
        "graph_documents and sitegraphs: a sitegraph's Datasets and its validators",
        lambda conn: metadata.create_all(conn, tables=[graph_documents, sitegraphs]),
    )
)
MIGRATIONS.append(
    (
        9,
        "notify_inbox, notify_outbox: COAR Notify received and sent",
        lambda conn: metadata.create_all(conn, tables=[notify_inbox, notify_outbox]),
    )
)


def _notify_by_node(conn: Connection) -> None:
    """A node's notifications newest first from an index: /ops/notify?node=X at 100,000
    sent read and sorted every row (270 ms of CPU for its first page, 440 for its last)."""
    for index in (ix_notify_inbox_node, ix_notify_outbox_node):
        conn.execute(CreateIndex(index, if_not_exists=True))


MIGRATIONS.append(
    (10, "notify_inbox, notify_outbox: indexes by node, newest first", _notify_by_node)
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
