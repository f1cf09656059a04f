"""The node's policy in its system metadata: a changed configuration is an update the CN sees.

Access policy, replication policy and rightsHolder come from the configuration,
not from the pages (see adapter.api.sysmeta). The CN notices a change of system
metadata only by a new `dateSysMetadataModified` (and DataONE expects
`serialVersion` to count every change), so a run whose policy differs from the
one the node's records were last written with updates every live (unarchived)
record: serialVersion + 1, a new stamp from the node clock (hence an entry in
the change log listObjects pages over), and the new rightsHolder. `submitter` is
immutable in DataONE and stays as first written. No new object is made.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Connection, bindparam, false, select, update

from adapter.store import schema as t
from adapter.store.ledger import MS, next_stamp
from adapter.store.statements import insert


def apply_policy(conn: Connection, node_id: str, policy: str, rights_holder: str) -> int:
    """Record the node's policy (JSON); when it changed, update every live record.

    The first policy a node is seen with (a new node, or a store just upgraded) is
    only remembered: the records were written under it. The number of records updated."""
    p, r = t.node_policy, t.records
    known = conn.execute(
        select(p.c.policy).where(p.c.node_id == node_id).with_for_update()
    ).scalar()
    if known == policy:
        return 0
    if known is None:  # remembered without a stamp: nothing changed for the CN
        ins = insert(p, conn.dialect.name)
        values = {"node_id": node_id, "policy": policy, "applied_at": datetime.now(UTC)}
        conn.execute(ins.values(values).on_conflict_do_nothing(index_elements=["node_id"]))
        return 0
    stamp = next_stamp(conn, node_id)  # locks the node clock until commit
    pids = (
        conn.execute(
            select(r.c.pid)
            .where(r.c.node_id == node_id, r.c.archived.is_(false()))
            .order_by(r.c.date_modified, r.c.pid)
        )
        .scalars()
        .all()
    )
    if pids:
        stamps = [stamp + i * MS for i in range(len(pids))]
        conn.execute(
            update(r)
            .where(r.c.node_id == node_id, r.c.pid == bindparam("b_pid"))
            .values(
                date_modified=bindparam("b_stamp"),
                serial_version=r.c.serial_version + 1,
                rights_holder=rights_holder,
            ),
            [{"b_pid": pid, "b_stamp": s} for pid, s in zip(pids, stamps, strict=True)],
        )
        _advance_clock(conn, node_id, stamps[-1])
    conn.execute(update(p).where(p.c.node_id == node_id).values(policy=policy, applied_at=stamp))
    return len(pids)


def _advance_clock(conn: Connection, node_id: str, last: datetime) -> None:
    """The clock moves to the last stamp handed out, so the next one comes after it."""
    c = t.node_clock
    conn.execute(update(c).where(c.c.node_id == node_id).values(last_stamp=last))
