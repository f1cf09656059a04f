"""MNRead.getReplica: another member node copies an object the CN asked it to replicate.

The bytes are `get`'s, logged as a `replicate` event. Only DataONE's nodes
may call it: a caller whose verified token names a subject in
`auth.cn_subjects` or `auth.replication_subjects` (DataONE would ask the CN's
`isNodeAuthorized`; a slender node trusts its configuration instead). Anyone
else is NotAuthorized, as is every caller when the object's system metadata
does not allow replication or blocks the caller's node (`blockedMemberNode`).
getReplica takes a PID, never a seriesId: a replica is of one version.
"""

from __future__ import annotations

from adapter.api.auth import not_authorized
from adapter.api.call import Call, Response
from adapter.api.exceptions import not_found, service_failure
from adapter.api.read import caller, event_of, object_headers


def get_replica(call: Call) -> Response:
    method = call.method
    who = caller(call)
    pid = call.identifier or ""
    if not call.authority.may_replicate_to(who):
        needs = "a DataONE token" if who.anonymous else f"a member node's token, not {who.subject}"
        raise not_authorized(method, f"getReplica is for DataONE's nodes; it needs {needs}", pid)
    record = call.store.get_record(call.node.info.id, pid, with_bytes=True)
    if record is None:
        raise not_found(method, pid)
    access = call.node.access
    if not access.replication_allowed:
        raise not_authorized(method, "this object's replication policy allows no replicas", pid)
    if who.node_id is not None and who.node_id in access.blocked_nodes:
        raise not_authorized(method, f"this object's replication policy blocks {who.node_id}", pid)
    if record.object_bytes is None:
        raise service_failure(method, "the object's bytes are missing", pid)
    if call.access_log is not None:
        call.access_log.record(event_of(call, who, pid, "replicate"))
    return Response(200, record.object_bytes, object_headers(record), record.media_type)
