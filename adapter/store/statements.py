"""The store's hot statements, built once (see `adapter.store.prepared`).

`adapter.store.ledger` (records, series, outbox, node clock) and `adapter.store.frontier`
(`finish_page`, discovery's upserts) run these instead of building Core
constructs per call. Each is a Core construct of `adapter.store.schema`'s tables
with its values as named parameters; tests/store/test_pagesql.py runs the same
page scripts through them and through SQLAlchemy Core executing the same
constructs, and compares every table.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import product
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    Boolean,
    ClauseElement,
    ColumnElement,
    Select,
    Table,
    bindparam,
    false,
    func,
    literal_column,
    null,
    or_,
    select,
    true,
    update,
)
from sqlalchemy.dialects import sqlite

from adapter.store import schema as t
from adapter.store.prepared import Prepared

if TYPE_CHECKING:  # the module itself only for a store on PostgreSQL
    from sqlalchemy.dialects.postgresql import Insert as PgInsert

P = bindparam
_c, _r, _s, _f = t.node_clock, t.records, t.series, t.frontier


def insert(table: Table, dialect: str) -> PgInsert | sqlite.Insert:
    """`dialect`'s INSERT of `table`, with its ON CONFLICT. SQLAlchemy's PostgreSQL dialect
    is imported only by a store on PostgreSQL: with its asyncpg module it was 0.05 s of
    every sync's start on SQLite."""
    if dialect == "postgresql":
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(table)
    return sqlite.insert(table)


def _clock_row(dialect: str) -> ClauseElement:
    ins = insert(_c, dialect)
    return ins.values(node_id=P("node"), last_stamp=P("epoch")).on_conflict_do_nothing(
        index_elements=["node_id"]
    )


CLOCK_ROW = Prepared(_clock_row)  # the node's clock row, once


def _clock_read(dialect: str) -> ClauseElement:
    """The node's last stamp (locked until commit) and the database server's clock, not the
    worker's: one clock for workers on many machines, read in the same round trip."""
    now: ColumnElement[Any] = (
        func.clock_timestamp()
        if dialect == "postgresql"
        else literal_column("strftime('%Y-%m-%d %H:%M:%f', 'now')")
    )
    return select(_c.c.last_stamp, now).where(_c.c.node_id == P("node")).with_for_update()


CLOCK_READ = Prepared(_clock_read)
CLOCK_WRITE = Prepared(
    lambda _: update(_c).where(_c.c.node_id == P("node")).values(last_stamp=P("stamp"))
)


ENDED = ("gone", "removed")  # frontier.ENDED (frontier imports this module)


def _series_state(count: int | None) -> Callable[[str], ClauseElement]:
    """The series (locked), whether its head is archived, and whether its owning page
    has left: gone (404/410), removed, or missing from the latest discovery.

    `count`: that many series at once (`sid0` ...), the first column saying which; None: one
    (`sid`)."""

    def build(_: str) -> ClauseElement:
        owner = _f.alias("owner")
        ended: list[ClauseElement] = [literal_column(f"'{status}'") for status in ENDED]
        left = owner.c.last_status.in_(ended) | (owner.c.missing_runs > literal_column("0"))
        which = (
            _s.c.series_id == P("sid")
            if count is None
            else _s.c.series_id.in_([P(f"sid{n}") for n in range(count)])
        )
        return (
            select(
                _s.c.series_id,
                _s.c.source_url,
                _s.c.head_pid,
                _s.c.content_key,
                _r.c.archived,
                func.coalesce(left, false()),
            )
            .select_from(
                _s.join(_r, (_r.c.node_id == _s.c.node_id) & (_r.c.pid == _s.c.head_pid)).outerjoin(
                    owner, (owner.c.node_id == _s.c.node_id) & (owner.c.url == _s.c.source_url)
                )
            )
            .where(_s.c.node_id == P("node"), which)
            .with_for_update(of=_s)
        )

    return build


SERIES_STATE = Prepared(_series_state(None))
SERIES_STATES = [Prepared(_series_state(n)) for n in range(1, 9)]  # by count: [n - 1]
SERIES_HEAD = Prepared(
    lambda _: select(_s.c.head_pid).where(_s.c.node_id == P("node"), _s.c.series_id == P("sid"))
)
PID_EXISTS = Prepared(
    lambda _: select(_r.c.id).where(_r.c.node_id == P("node"), _r.c.pid == P("pid"))
)

RECORD_COLUMNS = [c.name for c in _r.c if c.name != "id"]  # every value given
RECORD_INSERT = Prepared(
    lambda _: _r.insert().inline().values({name: P(name) for name in RECORD_COLUMNS})
)
SERIES_INSERT = Prepared(
    lambda _: (
        _s.insert()
        .inline()
        .values(
            node_id=P("node"),
            series_id=P("sid"),
            source_url=P("source_url"),
            head_pid=P("head_pid"),
            content_key=P("content_key"),
            describes_series=P("describes_series"),
        )
    )
)
SERIES_MOVE = Prepared(
    lambda _: (
        update(_s)
        .where(_s.c.node_id == P("node"), _s.c.series_id == P("sid"))
        .values(head_pid=P("head_pid"), content_key=P("content_key"), source_url=P("source_url"))
    )
)


def _claim_identifier(dialect: str) -> ClauseElement:
    i = t.identifiers
    ins = insert(i, dialect)
    return ins.values(
        identifier=P("ident"), node_id=P("node"), kind=P("kind")
    ).on_conflict_do_nothing(index_elements=["identifier"])


ID_CLAIM = Prepared(_claim_identifier)  # rowcount 1: ours now; 0: given out before


def _claim_identifiers(count: int, *, kinds: bool = False) -> Prepared:
    """`count` identifiers claimed in one statement; it returns those now ours. All of one
    kind (`kind`), or with `kinds` each of its own (`kind0` ...: a first sync's pages,
    `adapter.store.newpages`)."""

    def build(dialect: str) -> ClauseElement:
        i = t.identifiers
        ins = insert(i, dialect)
        rows: list[dict[str, Any]] = [
            {
                "identifier": P(f"ident{n}"),
                "node_id": P("node"),
                "kind": P(f"kind{n}" if kinds else "kind"),
            }
            for n in range(count)
        ]
        return (
            ins.values(rows)
            .on_conflict_do_nothing(index_elements=["identifier"])
            .returning(i.c.identifier)
        )

    return Prepared(build)


ID_CLAIMS = [_claim_identifiers(n) for n in range(1, 9)]  # by how many: ID_CLAIMS[n - 1]
ID_CLAIMS_KINDS = [_claim_identifiers(n, kinds=True) for n in range(1, 65)]  # by how many: [n - 1]


def _pages_owning(count: int) -> Prepared:
    """Which of `count` pages (`url0` ...) own a series of the node."""

    def build(_: str) -> ClauseElement:
        urls: list[ColumnElement[Any]] = [P(f"url{n}") for n in range(count)]
        return (
            select(_s.c.source_url)
            .where(_s.c.node_id == P("node"), _s.c.source_url.in_(urls))
            .distinct()
        )

    return Prepared(build)


PAGES_OWNING = [_pages_owning(n) for n in range(1, 9)]  # by how many: [n - 1]
ID_OWNER = Prepared(
    lambda _: select(t.identifiers.c.node_id).where(t.identifiers.c.identifier == P("ident"))
)
# the live heads of a page's series (ledger.archive_unlisted picks those it no longer lists);
# no ORDER BY: SQLite, without statistics, would walk the (node, series) key in order over
# every series of the node instead of the (node, source_url) index (the caller sorts)
PAGE_HEADS = Prepared(
    lambda _: (
        select(_s.c.head_pid, _s.c.series_id)
        .select_from(_s.join(_r, (_r.c.node_id == _s.c.node_id) & (_r.c.pid == _s.c.head_pid)))
        .where(_s.c.node_id == P("node"), _s.c.source_url == P("url"), _r.c.archived.is_(false()))
    )
)


# every series a page owns, with its head's state and format (packages.refresh_packages);
# no ORDER BY, as above
PAGE_SERIES = Prepared(
    lambda _: (
        select(
            _s.c.series_id,
            _s.c.head_pid,
            _r.c.archived,
            _s.c.describes_series,
            _r.c.format_id,
        )
        .select_from(_s.join(_r, (_r.c.node_id == _s.c.node_id) & (_r.c.pid == _s.c.head_pid)))
        .where(_s.c.node_id == P("node"), _s.c.source_url == P("url"))
    )
)


def _pages_without_package() -> Select[Any]:
    """The pages owning a live Dataset series that has no resource map series yet, in URL
    order after `after` (keyset paging: a page that cannot get a map is not read again)."""
    maps = _s.alias("maps")
    has_map = (
        select(maps.c.series_id)
        .where(
            maps.c.node_id == _s.c.node_id,
            maps.c.series_id == _s.c.series_id + P("suffix"),
        )
        .exists()
    )
    return (
        select(_s.c.source_url)
        .select_from(_s.join(_r, (_r.c.node_id == _s.c.node_id) & (_r.c.pid == _s.c.head_pid)))
        .where(
            _s.c.node_id == P("node"),
            _s.c.describes_series.is_(None),
            _r.c.format_id != P("map_format"),
            _r.c.archived.is_(false()),
            _s.c.source_url > P("after"),
            ~has_map,
        )
        .distinct()
        .order_by(_s.c.source_url)
    )


# not a hot statement (once per run, by batches): plain Core, so it can take a LIMIT
PAGES_WITHOUT_PACKAGE = _pages_without_package()
EVENT_INSERT = Prepared(
    lambda _: (
        t.outbox.insert()
        .inline()
        .values(
            node_id=P("node"),
            event=P("event"),
            pid=P("pid"),
            series_id=P("sid"),
            created_at=P("stamp"),
        )
    )
)


def _bump(obsolete: bool, archive: bool) -> Prepared:
    """obsoletedBy null -> value and/or archived false -> true: one way (see ledger._bump)."""

    def build(_: str) -> ClauseElement:
        where = [_r.c.node_id == P("node"), _r.c.pid == P("pid")]
        values: dict[str, Any] = {
            "date_modified": P("stamp"),
            "serial_version": _r.c.serial_version + literal_column("1"),
        }
        if obsolete:
            where.append(_r.c.obsoleted_by.is_(None))
            values["obsoleted_by"] = P("obsoleted_by")
        if archive:
            where.append(_r.c.archived.is_(false()))
            values["archived"] = true()
        return update(_r).where(*where).values(values)

    return Prepared(build)


BUMP = {(o, a): _bump(o, a) for o, a in product((True, False), repeat=2) if o or a}


def _finish(validators: bool, checksum: bool, report: bool) -> Prepared:
    """The frontier row's outcome; only while `owner` still holds the claim."""

    def build(_: str) -> ClauseElement:
        values: dict[str, Any] = {
            "last_status": P("status"),
            "http_status": P("http_status"),
            "last_checked_at": P("checked_at"),
            "due": false(),
            "claimed_by": null(),
            "lease_until": null(),
        }
        if validators:
            values |= {"etag": P("etag"), "last_modified": P("last_modified")}
        if checksum:
            values["content_checksum"] = P("content_checksum")
        if report:
            values["last_report"] = P("last_report")
        mine = (_f.c.id == P("row_id"), _f.c.claimed_by == P("owner"))
        return update(_f).where(*mine).values(values)

    return Prepared(build)


FINISH = {flags: _finish(*flags) for flags in product((True, False), repeat=3)}


def _new_pages(dialect: str) -> ClauseElement:
    f = _f
    ins = insert(f, dialect)
    return ins.values(
        node_id=bindparam("node_id"),
        url=bindparam("url"),
        sitemap=bindparam("sitemap"),
        lastmod=bindparam("lastmod"),
        links_json=bindparam("links_json"),
        first_seen_run=bindparam("run_id"),
        last_seen_run=bindparam("run_id"),
        missing_runs=literal_column("0"),
        due=true(),
    ).on_conflict_do_nothing(index_elements=["node_id", "url"])


def _seen_pages(_: str) -> ClauseElement:
    f = _f
    return (
        update(f)
        .where(f.c.id == bindparam("row_id"))
        .values(
            sitemap=bindparam("sitemap"),
            lastmod=bindparam("lastmod"),
            links_json=bindparam("links_json"),
            last_seen_run=bindparam("run_id"),
            missing_runs=literal_column("0"),
            due=or_(f.c.due, bindparam("make_due", type_=Boolean)),
        )
    )


# discovery's upserts: a million-URL index runs each a million times
FRONTIER_NEW = Prepared(_new_pages)
FRONTIER_SEEN = Prepared(_seen_pages)
