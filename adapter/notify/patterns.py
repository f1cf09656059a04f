"""The COAR Notify patterns the adapter reads and writes, on COAR's own library (`coarnotify`).

`coarnotify` models Accept, Reject, Tentative Accept, Undo Offer and Unprocessable
Notification; the ingest patterns are built here on its generic pattern class: Request
Ingest (`Offer` + `coar-notify:IngestAction`), Announce Ingest (`Announce` +
`coar-notify:IngestAction`), and a plain `Announce` (a repository saying a page is new or
changed, and the adapter telling a repository a page's harvestability changed). They are
registered with the library's factory, so that its parser (and anyone parsing an Accept
whose object is a Request Ingest) recognises them.

Everything here is pure: a dict in, a pattern or `Malformed` out; the answers are dicts.
"""

from __future__ import annotations

import copy
import uuid
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import quote

from coarnotify.core.activitystreams2 import ActivityStreamsTypes
from coarnotify.core.notify import NotifyPattern, NotifyTypes
from coarnotify.exceptions import NotifyException, ValidationError
from coarnotify.factory import COARNotifyFactory
from coarnotify.patterns import (
    Accept,
    Reject,
    TentativelyAccept,
    UndoOffer,
    UnprocessableNotification,
)

from adapter.limits import DEFAULT_LIMITS
from adapter.page.jsonrepair import measure

CONTEXT = ["https://www.w3.org/ns/activitystreams", "https://coar-notify.net"]


class RequestIngest(NotifyPattern):  # type: ignore[misc]  # coarnotify is untyped
    """Request Ingest: "please ingest this resource"; `object` is its landing page."""

    TYPE = [ActivityStreamsTypes.OFFER, NotifyTypes.INGEST_ACTION]


class AnnounceIngest(NotifyPattern):  # type: ignore[misc]  # coarnotify is untyped
    """Announce Ingest: the resource is in (`object`: the DataONE object; `context`: its page)."""

    TYPE = [ActivityStreamsTypes.ANNOUNCE, NotifyTypes.INGEST_ACTION]


class Announce(NotifyPattern):  # type: ignore[misc]  # coarnotify is untyped
    """A plain Announce: a page is new or changed (from a repository), or its
    harvestability changed (from the adapter)."""

    TYPE = ActivityStreamsTypes.ANNOUNCE


for _model in (RequestIngest, AnnounceIngest, Announce):
    if _model not in COARNotifyFactory.MODELS:
        COARNotifyFactory.register(_model)

# what a received notification is to the adapter
REQUEST_INGEST = "request-ingest"
ANNOUNCE = "announce"
UNDO_OFFER = "undo-offer"


MAX_DEPTH = 32  # objects within objects a notification may have (COAR's examples: 4)
# the page reader's depth and node check, at a notification's depth (its bytes bound its nodes)
_SHAPE = replace(DEFAULT_LIMITS, max_json_depth=MAX_DEPTH)


class Malformed(Exception):
    """Not a COAR Notify notification the adapter can read; the message says why."""


@dataclass(frozen=True, slots=True)
class Received:
    """What the adapter needs of a valid notification."""

    kind: str  # REQUEST_INGEST | ANNOUNCE | UNDO_OFFER
    id: str
    origin_id: str
    origin_inbox: str
    page: str | None  # the landing page it is about (None for an Undo)
    withdraws: str | None  # Undo Offer: the id of the request it withdraws
    doc: dict[str, Any]  # the notification as received (with its @context)


def parse(data: Any) -> Received:
    """A received JSON document as a notification the adapter acts on, or Malformed."""
    if not isinstance(data, dict):
        raise Malformed("the body is not a JSON object")
    too_big = measure(data, _SHAPE)  # before the library copies and walks it recursively
    if too_big is not None:
        raise Malformed(f"the notification is {too_big.message}")
    if not isinstance(data.get("id"), str):
        raise Malformed("id is missing: an answer could not say what it answers")
    try:
        pattern = COARNotifyFactory.get_by_object(copy.deepcopy(data))
    except ValidationError as exc:
        raise Malformed(f"not a valid notification: {_errors(exc.errors)}") from None
    except (NotifyException, ValueError) as exc:
        raise Malformed(f"not a valid notification: {exc}") from None
    except TypeError:  # the library's factory found no pattern for these types
        raise Malformed(f"unknown notification type {data.get('type')!r}") from None
    if pattern is None:  # or it returns None, depending on the types registered before
        raise Malformed(f"unknown notification type {data.get('type')!r}")
    origin = pattern.origin
    inbox = origin.inbox if origin is not None else None
    if not inbox:
        raise Malformed("origin.inbox is missing: there is nowhere to answer")
    if isinstance(pattern, RequestIngest | Announce | AnnounceIngest):
        page = _page(data)
        kind = REQUEST_INGEST if isinstance(pattern, RequestIngest) else ANNOUNCE
        return Received(kind, pattern.id, origin.id, inbox, page, None, data)
    if isinstance(pattern, UndoOffer):
        return Received(UNDO_OFFER, pattern.id, origin.id, inbox, None, pattern.in_reply_to, data)
    names = pattern.type if isinstance(pattern.type, str) else ", ".join(pattern.type)
    raise Malformed(f"the adapter acts on Request Ingest, Announce and Undo Offer, not on {names}")


def _page(data: dict[str, Any]) -> str:
    """The landing page a request or announcement names: its object's http(s) `id`."""
    obj = data.get("object")
    page = obj.get("id") if isinstance(obj, dict) else None
    if not isinstance(page, str) or not page.lower().startswith(("http://", "https://")):
        raise Malformed("object.id must be the landing page's http(s) URL")
    return page


def _errors(errors: dict[Any, Any], prefix: str = "") -> str:
    """coarnotify's nested error dict as one line: `origin.inbox: ...; object: ...`."""
    out: list[str] = []
    for key, value in errors.items():
        name = prefix + (key[0] if isinstance(key, tuple) else str(key))
        out += [f"{name}: {message}" for message in value.get("errors", [])]
        nested = value.get("nested")
        if nested:
            out.append(_errors(nested, name + "."))
    return "; ".join(out) or "invalid"


def peek_origin_inbox(data: Any) -> tuple[str | None, str | None, str | None]:
    """(id, origin.id, origin.inbox) as written in a document that may not be valid."""
    if not isinstance(data, dict):
        return None, None, None
    origin = data.get("origin")
    origin = origin if isinstance(origin, dict) else {}
    values = (data.get("id"), origin.get("id"), origin.get("inbox"))
    return tuple(v if isinstance(v, str) else None for v in values)  # type: ignore[return-value]


# -- what the adapter sends -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Service:
    """The adapter as the service of one node: its id (the node's base URL) and inbox."""

    id: str
    inbox: str
    name: str


INBOX_PATH = "/inbox"


def inbox_url(public_url: str) -> str:
    """The adapter's inbox under its public URL."""
    return public_url.rstrip("/") + INBOX_PATH


def node_service(public_url: str, short_name: str, name: str) -> Service:
    """The adapter as one node's service: the node's base URL, the server's inbox."""
    return Service(f"{public_url.rstrip('/')}/{short_name}", inbox_url(public_url), name)


def check_link(public_url: str, page: str) -> str:
    """The check page's report on `page` (what a repository manager reads to fix it)."""
    return f"{public_url.rstrip('/')}/check?url={quote(page, safe='')}"


def _service(id_: str, inbox: str) -> dict[str, Any]:
    return {"id": id_, "inbox": inbox, "type": ActivityStreamsTypes.SERVICE}


def _answer(
    kind: type[NotifyPattern], me: Service, to: tuple[str, str], extra: dict[str, Any]
) -> dict[str, Any]:
    """A pattern of `kind` from `me` to `to` (id, inbox), validated by the library."""
    doc = {
        "@context": list(CONTEXT),
        "id": f"urn:uuid:{uuid.uuid4()}",
        "type": kind.TYPE,
        "actor": {"id": me.id, "name": me.name, "type": ActivityStreamsTypes.SERVICE},
        "origin": _service(me.id, me.inbox),
        "target": _service(*to),
        **extra,
    }
    pattern = kind(doc)  # validates: an answer the library rejects is a bug of ours
    out: dict[str, Any] = pattern.to_jsonld()
    return out


def _request(req: Received) -> dict[str, Any]:
    """The request as the answer's object (its @context dropped: the answer has one)."""
    return {k: v for k, v in req.doc.items() if k != "@context"}


def tentative_accept(me: Service, req: Received, summary: str) -> dict[str, Any]:
    extra = {"inReplyTo": req.id, "object": _request(req), "summary": summary}
    return _answer(TentativelyAccept, me, (req.origin_id, req.origin_inbox), extra)


def accept(
    me: Service, req: Received, objects: list[dict[str, Any]], summary: str
) -> dict[str, Any]:
    """Accept: the request as `object`; the DataONE objects made of the page in `context`
    (the first, with every PID and seriesId listed)."""
    extra: dict[str, Any] = {"inReplyTo": req.id, "object": _request(req), "summary": summary}
    if objects:
        extra["context"] = {**objects[0], "ietf:item": objects[1:]} if objects[1:] else objects[0]
    return _answer(Accept, me, (req.origin_id, req.origin_inbox), extra)


def reject(me: Service, req: Received, summary: str) -> dict[str, Any]:
    extra = {"inReplyTo": req.id, "object": _request(req), "summary": summary}
    return _answer(Reject, me, (req.origin_id, req.origin_inbox), extra)


def unprocessable(me: Service, to: tuple[str, str], in_reply_to: str, why: str) -> dict[str, Any]:
    extra = {"inReplyTo": in_reply_to, "object": {"id": in_reply_to}, "summary": why}
    return _answer(UnprocessableNotification, me, to, extra)


def announce_ingest(
    me: Service, to: tuple[str, str], obj: dict[str, Any], page: str, in_reply_to: str | None
) -> dict[str, Any]:
    """Announce Ingest: `obj` (a DataONE object) is in; `context` is its landing page."""
    extra: dict[str, Any] = {"object": obj, "context": {"id": page, "type": "sorg:AboutPage"}}
    if in_reply_to:
        extra["inReplyTo"] = in_reply_to
    return _answer(AnnounceIngest, me, to, extra)


def announce_status(me: Service, to: tuple[str, str], page: str, summary: str) -> dict[str, Any]:
    """Announce: the page became (or is again) harvestable or not; `summary` says which."""
    extra = {"object": {"id": page, "type": "sorg:AboutPage"}, "summary": summary}
    return _answer(Announce, me, to, extra)


def dataone_object(base_url: str, pid: str, series_id: str | None, report: str) -> dict[str, Any]:
    """A DataONE object as a notification's object: its Member Node URL, PID and seriesId."""
    out: dict[str, Any] = {
        "id": f"{base_url.rstrip('/')}/v2/object/{quote(pid, safe='')}",
        "type": ActivityStreamsTypes.DOCUMENT,
        "identifier": pid,
        "url": report,
    }
    if series_id:
        out["seriesId"] = series_id
    return out
