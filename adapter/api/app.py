"""The DataONE Member Node read API (Tier 1) as one WSGI application.

Every configured node is served at `/<short name>/v2` (and `/v1`), like
DataONE's own slender-node host. The application only reads the store; the one
thing it writes is a synchronization failure the coordinating node reports.
Routing works on the *raw* request target (waitress's `REQUEST_URI`), because
PATH_INFO has `%2F` already turned into `/` and a PID may contain both.
Query parameters the API does not define are ignored (clients add their own,
e.g. d1_client's `nodeId`); every defined one is validated. Each request is
logged at INFO (`adapter -v serve`) with its status, size and time.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import unquote, urlsplit

from adapter.api.accesslog import RETENTION
from adapter.api.auth import OPEN, Authority
from adapter.api.call import (
    Call,
    EventLog,
    Handler,
    MemberNode,
    RecordStore,
    Response,
    StartResponse,
)
from adapter.api.exceptions import D1Error, not_implemented, service_failure
from adapter.api.params import decode_pid
from adapter.api.read import HANDLERS as READ_HANDLERS
from adapter.api.replica import get_replica
from adapter.api.xml import error_headers, error_xml
from adapter.errors import StoreError
from adapter.store.accesslog import LogRetention

log = logging.getLogger(__name__)

METHOD_KEY = "adapter.d1_method"  # set in environ: the DataONE method a request was routed to


# (resource, takes an identifier) -> {HTTP verb: DataONE method}; D1-API REST URLs.
ROUTES: dict[tuple[str, bool], dict[str, str]] = {
    ("", False): {"GET": "getCapabilities"},
    ("node", False): {"GET": "getCapabilities"},
    ("monitor/ping", False): {"GET": "ping"},
    ("object", False): {"GET": "listObjects", "POST": "create"},
    ("object", True): {"GET": "get", "HEAD": "describe", "PUT": "update", "DELETE": "delete"},
    ("meta", True): {"GET": "getSystemMetadata"},
    ("meta", False): {"PUT": "updateSystemMetadata"},
    ("checksum", True): {"GET": "getChecksum"},
    ("log", False): {"GET": "getLogRecords"},
    ("error", False): {"POST": "synchronizationFailed"},
    ("dirtySystemMetadata", False): {"POST": "systemMetadataChanged"},
    ("replica", True): {"GET": "getReplica"},
    ("generate", False): {"POST": "generateIdentifier"},
    ("archive", True): {"PUT": "archive"},
    ("isAuthorized", True): {"GET": "isAuthorized"},
    ("replicate", False): {"POST": "replicate"},
}
ID_RESOURCES = frozenset(resource for resource, has_id in ROUTES if has_id)
HANDLERS: dict[str, Handler] = {**READ_HANDLERS, "getReplica": get_replica}


class MemberNodeApp:
    """WSGI application serving every given node from one store."""

    def __init__(
        self,
        store: RecordStore,
        nodes: Sequence[MemberNode],
        handlers: dict[str, Handler] | None = None,
        access_log: EventLog | None = None,
        authority: Authority = OPEN,
        retention: LogRetention = RETENTION,
    ) -> None:
        self.store = store
        self.access_log = access_log
        self.authority = authority
        self.retention = retention
        self.nodes: dict[str, MemberNode] = {}
        self.handlers = HANDLERS if handlers is None else handlers
        self.serve_nodes(nodes)

    def serve_nodes(self, nodes: Sequence[MemberNode]) -> None:
        """Serve these nodes (before the server runs: a node's baseURL may name its port).

        Every node needs a configured baseURL: taking it from the request's Host
        header would let any client make the Node document point elsewhere.
        """
        for node in nodes:
            if not node.info.base_url:
                raise ValueError(f"node {node.info.id} has no baseURL to publish")
        self.nodes = {node.info.short_name: node for node in nodes}

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        verb = str(environ.get("REQUEST_METHOD", "GET")).upper()
        began = time.perf_counter()
        try:
            call = self.route(environ, verb)
            environ[METHOD_KEY] = call.method
            response = self.dispatch(call, verb)
        except D1Error as error:
            response = error_response(error, verb == "HEAD")
        target = str(environ.get("REQUEST_URI") or environ.get("PATH_INFO", ""))[:300]
        elapsed = round((time.perf_counter() - began) * 1000, 1)
        log.info(
            "%s %s",
            verb,
            target,
            extra={
                "event": "request",
                "status": response.status,
                "bytes": len(response.body),
                "ms": elapsed,
                "client": environ.get("REMOTE_ADDR", "-"),
            },
        )
        return _send(response, start_response, head=verb == "HEAD")

    def route(self, environ: dict[str, Any], verb: str) -> Call:
        path, query = raw_target(environ)
        short_raw, _, rest = path.lstrip("/").partition("/")
        node = self.nodes.get(unquote(short_raw))
        if node is None:
            bases = ", ".join(f"/{name}/v2" for name in sorted(self.nodes))
            raise D1Error("NotFound", f"no member node at this path; served: {bases}")
        try:
            return self._route_in_node(environ, verb, node, rest, query)
        except D1Error as error:
            raise _with_node(error, node) from None

    def _route_in_node(
        self,
        environ: dict[str, Any],
        verb: str,
        node: MemberNode,
        rest: str,
        query: str,
    ) -> Call:
        version, _, rest = rest.partition("/")
        if version not in ("v1", "v2"):
            raise not_implemented("", f"API version {version[:20]!r} is not served; use v2 or v1")
        resource, identifier = _split_resource(rest.rstrip("/") if rest != "/" else "")
        methods = ROUTES.get((resource, identifier is not None))
        shown = rest[:200]  # echoed back, escaped, never more than this
        if methods is None:
            raise not_implemented("", f"no DataONE method at /{shown}")
        d1_method = methods.get(verb) or (methods.get("GET") if verb == "HEAD" else None)
        if d1_method is None:
            allowed = ", ".join(sorted(methods))
            raise not_implemented("", f"{verb} is not a DataONE method at /{shown}; use {allowed}")
        return Call(
            method=d1_method,
            api=version,
            node=node,
            store=self.store,
            query=query,
            environ=environ,
            base_url=node.info.base_url or "",  # never empty: see serve_nodes
            identifier=None if identifier is None else decode_pid(identifier, d1_method),
            head=verb == "HEAD",
            access_log=self.access_log,
            authority=self.authority,
            retention=self.retention,
        )

    def dispatch(self, call: Call, verb: str) -> Response:
        try:
            return self._handle(call, verb)
        except D1Error as error:
            raise _with_node(error, call.node) from None

    def _handle(self, call: Call, verb: str) -> Response:
        handler = self.handlers.get(call.method)
        if handler is None:
            raise not_implemented(call.method, f"{call.method} is not offered by this node")
        try:
            return handler(call)
        except (D1Error, KeyboardInterrupt):
            raise
        except StoreError as exc:
            log.error("%s %s on %s: %s", verb, call.method, call.node.info.id, exc)
            raise service_failure(
                call.method, "the store cannot be read; try again later"
            ) from None
        except Exception:
            log.exception("%s %s on %s failed", verb, call.method, call.node.info.id)
            raise service_failure(call.method, "internal error; the operator has the log") from None


def _with_node(error: D1Error, node: MemberNode) -> D1Error:
    error.node_id = node.info.id
    return error


def raw_target(environ: dict[str, Any]) -> tuple[str, str]:
    """(raw path, raw query) as the client sent them, percent-escapes intact.

    waitress gives REQUEST_URI, gunicorn RAW_URI; elsewhere PATH_INFO is all
    there is (already decoded: `%2F` can no longer be told from `/`), so it is
    re-escaped only for `%` to keep the decoder's view consistent.
    """
    raw = environ.get("REQUEST_URI") or environ.get("RAW_URI")
    if raw:
        if not raw.startswith("/"):  # absolute-form request target
            parts = urlsplit(raw)
            raw = parts.path + ("?" + parts.query if parts.query else "")
        path, _, query = raw.partition("?")
        path, _, _ = path.partition("#")
        script = environ.get("SCRIPT_NAME", "")
        if script and path.startswith(script):
            path = path[len(script) :]
    else:
        path = str(environ.get("PATH_INFO", "")).encode("latin-1").decode("utf-8", "replace")
        path = path.replace("%", "%25")
        query = str(environ.get("QUERY_STRING", ""))
    return "/" + path.lstrip("/"), query


def _split_resource(rest: str) -> tuple[str, str | None]:
    """`object/a%2Fb` -> ("object", "a%2Fb"); everything after the resource is the id."""
    if rest == "monitor/ping":
        return rest, None
    resource, sep, identifier = rest.partition("/")
    if resource in ID_RESOURCES and sep and identifier:
        return resource, identifier
    return rest, None


def error_response(error: D1Error, head: bool) -> Response:
    node_id = error.node_id
    response = Response(error.status)
    if head:
        response.headers = error_headers(error, node_id)
    else:
        response.body = error_xml(error, node_id)
    return response


_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    409: "Conflict",
    413: "Payload Too Large",
    500: "Internal Server Error",
    501: "Not Implemented",
}


def _send(response: Response, start_response: StartResponse, head: bool) -> Iterable[bytes]:
    headers = [("Content-Type", response.content_type), *response.headers]
    if not any(name.lower() == "content-length" for name, _ in headers):
        headers.append(("Content-Length", str(len(response.body))))
    start_response(f"{response.status} {_REASONS.get(response.status, 'Error')}", headers)
    return [] if head else [response.body]
