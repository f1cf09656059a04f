"""The check page as a WSGI application: server-rendered HTML, no JavaScript needed.

    GET  /check                 the form
    GET  /check?url=URL|DOI     the report (200 whatever the verdict: a permalink)
    POST /check                 url, or pasted `content`, or an uploaded `file`
    GET  /findings              the finding catalogue, one anchor per code
    GET  /static/NAME           the style sheet, and copy.js (an optional Copy button)
    GET  /ops...                the operator's view of the store (`adapter.web.ops`), when
                                the application has one (`--ops`), to a caller on loopback
                                or presenting the operator's secret (`adapter.web.opsaccess`)
    POST /ops/login             the operator's secret, typed once: a cookie

`Accept: application/json` on /check answers the JSON report of
`adapter check-dataset --json` instead of the page. Everything is imported
and every template compiled when the application is built, so a request pays
only for its check. Every response carries a Content-Security-Policy that
allows no inline script and nothing from elsewhere, and every value from a
fetched page is escaped by the templates (autoescape), never marked safe.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import jinja2
import markupsafe

from adapter.findings import FindingType, catalogue
from adapter.models import DatasetReport
from adapter.report.jsonview import to_json
from adapter.report.verdicts import verdict
from adapter.store import notify as notify_store
from adapter.store import overview
from adapter.web.checking import PASTED_URL, BadInput, Checker
from adapter.web.forms import Form, TooLarge, body_form, query_form
from adapter.web.ops import Ops, code_counts, stored_view, when
from adapter.web.ratelimit import RateLimit
from adapter.web.view import report_view

log = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; script-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    ("Content-Security-Policy", CSP),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("X-Frame-Options", "DENY"),
]
MAX_CHECKS = 4  # checks at once per process (a waitress server has 8 threads by default)
BUSY_RETRY = 5  # seconds a client told "busy" waits
FORM_OVERHEAD = 64 * 1024  # the form's other fields and multipart boundaries
# the top-level paths this application answers (a dispatcher routes them here)
PATHS = frozenset({"", "check", "findings", "static", "ops"})
_STAGE_ORDER = {
    name: i
    for i, name in enumerate(
        ["fetch", "robots", "discover", "sitemap", "extract", "normalize", "dataone", "signposting"]
    )
}
_STATIC_TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}


@dataclass(slots=True)
class Response:
    status: str
    body: bytes
    content_type: str = "text/html; charset=utf-8"
    headers: list[tuple[str, str]] = field(default_factory=list)


@functools.cache
def templates() -> jinja2.Environment:
    """The templates, compiled once a process (0.3 CPU s): every WebApp of the process (each
    node's under `adapter serve`, each test's) renders with the same ones, read-only."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,  # every value is escaped: fetched pages are a stranger's text
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["when"] = when
    env.filters["ticks"] = ticks
    env.tests["http_url"] = _is_http_url  # only these become links: never javascript: or data:
    for name in env.list_templates():  # compiled now, not on the first request
        env.get_template(name)
    return env


class WebApp:
    """The check page; `rate` limits the checks per client address (None: no limit)."""

    def __init__(
        self,
        checker: Checker,
        rate: RateLimit | None = None,
        ops: Ops | None = None,
        max_checks: int = MAX_CHECKS,
    ) -> None:
        self.checker = checker
        self.rate = rate
        self.ops = ops
        # checks wait on strangers' servers: they never take every server thread
        self.running = threading.BoundedSemaphore(max_checks)
        self.max_checks = max_checks
        self.env = templates()
        self.static = {p.name: p.read_bytes() for p in (HERE / "static").iterdir() if p.is_file()}
        self.catalogue = by_stage(catalogue())

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        verb = str(environ.get("REQUEST_METHOD", "GET")).upper()
        try:
            response = self.route(environ, verb)
        except Exception:  # a bug: say so in the page, keep the traceback in the log
            log.exception("web request failed: %s %s", verb, environ.get("PATH_INFO"))
            response = self.page(environ, "error.html", "500 Internal Server Error", {})
        headers = [
            ("Content-Type", response.content_type),
            ("Content-Length", str(len(response.body))),
            *SECURITY_HEADERS,
            *response.headers,
        ]
        start_response(response.status, headers)
        return [] if verb == "HEAD" else [response.body]

    def route(self, environ: dict[str, Any], verb: str) -> Response:
        path = str(environ.get("PATH_INFO", "")) or "/"
        posts = ("/check", "/ops/login")
        if verb not in ("GET", "HEAD", "POST") or (verb == "POST" and path not in posts):
            return Response(
                "405 Method Not Allowed", b"method not allowed\n", "text/plain", [("Allow", "GET")]
            )
        if path == "/":
            return Response("303 See Other", b"", headers=[("Location", _base(environ) + "/check")])
        if path == "/check":
            return self.check(environ, verb)
        if path == "/findings":
            return self.page(environ, "findings.html", "200 OK", {"groups": self.catalogue})
        if path == "/ops" or path.startswith("/ops/"):
            return self.operator(environ, path, verb)
        if path.startswith("/static/") and path[8:] in self.static:
            name = path[8:]
            kind = _STATIC_TYPES.get(Path(name).suffix, "application/octet-stream")
            return Response(
                "200 OK", self.static[name], kind, [("Cache-Control", "public, max-age=3600")]
            )
        return self.page(environ, "error.html", "404 Not Found", {"missing": path})

    # -- the check ----------------------------------------------------------

    def check(self, environ: dict[str, Any], verb: str) -> Response:
        wants_json = _wants_json(environ)
        try:
            form = self._form(environ, verb)
        except TooLarge as exc:
            return self._refusal(environ, "413 Content Too Large", str(exc), Form(), wants_json)
        if not _asks_for_check(form):
            if verb == "POST":
                message = "give a URL or a DOI, paste HTML or JSON-LD, or choose a file"
                return self._refusal(environ, "400 Bad Request", message, form, wants_json)
            return self.page(environ, "check.html", "200 OK", {"form": form, "report": None})
        client = str(environ.get("REMOTE_ADDR") or "-")
        refused = self._admit(client)
        if refused is not None:
            status, message, wait = refused
            response = self._refusal(environ, status, message, form, wants_json)
            response.headers.append(("Retry-After", str(wait)))
            return response
        try:  # admitted: holds one of the running slots
            report = self._run(form)
        except BadInput as exc:
            return self._refusal(environ, "400 Bad Request", str(exc), form, wants_json)
        finally:
            self.running.release()
        log.info("web check %s from %s: %s", report.url, client, verdict(report))
        if wants_json:
            return _json("200 OK", to_json(report))
        view = report_view(report, PASTED_URL if _pasted(form) else None)
        context = {"form": form, "report": view, "json_link": _permalink(environ, form)}
        response = self.page(environ, "check.html", "200 OK", context)
        response.headers.append(("Cache-Control", "no-store"))
        return response

    def _admit(self, client: str) -> tuple[str, str, int] | None:
        """None and a running slot taken, or (status, why, Retry-After) refusing the check.

        A server that is busy refuses before the client's budget is counted.
        """
        if not self.running.acquire(blocking=False):
            why = f"{self.max_checks} checks are running already; try again in a few seconds"
            return "503 Service Unavailable", why, BUSY_RETRY
        if self.rate is not None:
            decision = self.rate.admit(client)
            if not decision.allowed:
                self.running.release()
                why = (
                    f"at most {self.rate.per_minute} checks a minute from one address; "
                    f"try again in {decision.retry_after} s"
                )
                return "429 Too Many Requests", why, decision.retry_after
        return None

    # -- the operator's view ---------------------------------------------------

    def operator(self, environ: dict[str, Any], path: str, verb: str = "GET") -> Response:
        context: dict[str, Any]
        if self.ops is None:
            why = "the operator view is served only with --ops (and a store)"
            context = {"missing": path, "why": why}
            return self.page(environ, "error.html", "404 Not Found", context)
        if path == "/ops/login":
            return self.login(environ, verb)
        if not self.ops.access.allows(environ):
            return self.page(
                environ,
                "ops_login.html",
                "401 Unauthorized",
                {"secret_set": bool(self.ops.access.token), "wrong": False, "next": path},
            )
        response = self.operator_page(environ, path)
        response.headers.append(("Cache-Control", "no-store"))
        return response

    def login(self, environ: dict[str, Any], verb: str) -> Response:
        """The operator's secret, typed once: a cookie holding its digest, then /ops."""
        assert self.ops is not None
        access = self.ops.access
        context = {"secret_set": bool(access.token), "wrong": False, "next": "/ops"}
        if verb != "POST":
            return self.page(environ, "ops_login.html", "200 OK", context)
        form = body_form(environ, 4096)
        if not access.matches(form.get("token")):
            context["wrong"] = True
            return self.page(environ, "ops_login.html", "401 Unauthorized", context)
        secure = environ.get("wsgi.url_scheme") == "https"
        headers = [
            ("Location", _base(environ) + "/ops"),
            access.cookie_header((_base(environ) or "") + "/ops", secure),
        ]
        return Response("303 See Other", b"", headers=headers)

    def operator_page(self, environ: dict[str, Any], path: str) -> Response:
        context: dict[str, Any]
        assert self.ops is not None
        ops, q = self.ops, query_form(environ)
        node = q.get("node")
        offset = _offset(q)
        if path == "/ops":
            nodes = ops.nodes()
            runs = ops.recent_runs()
            charts = ops.charts([n.id for n in nodes])
            notify = notify_store.counts(ops.store)
            context = {"nodes": nodes, "runs": runs, "charts": charts, "notify": notify}
            return self.page(environ, "ops.html", "200 OK", context)
        if path == "/ops/node" and node:
            view = ops.node(node)
            context = {
                "n": view,
                "codes": overview.code_totals(ops.store, node),
                "charts": ops.charts([node]),
            }
            return self.page(environ, "ops_node.html", "200 OK", context)
        if path == "/ops/runs":
            listing = overview.runs(ops.store, node or None, offset)
            context = {"node": node, "listing": listing, "query": _query(node=node)}
            return self.page(environ, "ops_runs.html", "200 OK", context)
        if path.startswith("/ops/runs/") and path[10:].isdigit():
            run = overview.run(ops.store, int(path[10:]))
            if run is not None:
                context = {"run": run, "codes": code_counts(run)}
                return self.page(environ, "ops_run.html", "200 OK", context)
        elif path == "/ops/pages" and node:
            code, status = q.get("code") or None, q.get("status") or None
            pages = overview.pages(ops.store, node, code=code, status=status, offset=offset)
            context = {
                "node": node,
                "code": code,
                "state": status,
                "listing": pages,
                "query": _query(node=node, code=code, status=status),
            }
            return self.page(environ, "ops_pages.html", "200 OK", context)
        elif path == "/ops/page" and node:
            row = overview.page(ops.store, node, q.get("url"))
            if row is not None:
                context = {"row": row, "stored": stored_view(row.report, ops.profile(node))}
                return self.page(environ, "ops_page.html", "200 OK", context)
        elif path == "/ops/queue":
            queue = overview.queue(ops.store, node or None, offset)
            context = {"node": node, "listing": queue, "query": _query(node=node)}
            return self.page(environ, "ops_queue.html", "200 OK", context)
        elif path in ("/ops/notify", "/ops/notify/sent"):
            sent = path.endswith("/sent")
            page_of = notify_store.sent_page if sent else notify_store.received_page
            context = {
                "node": node,
                "sent": sent,
                "listing": page_of(ops.store, node or None, offset),
                "counts": notify_store.counts(ops.store),
                "query": _query(node=node),
            }
            return self.page(environ, "ops_notify.html", "200 OK", context)
        elif path == "/ops/failures":
            failures = overview.failures(ops.store, node or None, offset)
            context = {"node": node, "listing": failures, "query": _query(node=node)}
            return self.page(environ, "ops_failures.html", "200 OK", context)
        return self.page(environ, "error.html", "404 Not Found", {"missing": path})

    def _form(self, environ: dict[str, Any], verb: str) -> Form:
        if verb == "POST":
            return body_form(environ, self.checker.limits.max_page_bytes + FORM_OVERHEAD)
        return query_form(environ)

    def _run(self, form: Form) -> DatasetReport:
        upload = form.files.get("file")
        profile = form.get("profile")
        if upload is not None and upload[1].strip():
            return self.checker.check_content(upload[1], form.get("address"), upload[0], profile)
        if form.get("content").strip():
            return self.checker.check_content(
                form.get("content").encode(), form.get("address"), profile=profile
            )
        return self.checker.check_url(form.get("url"), profile)

    def _refusal(
        self, environ: dict[str, Any], status: str, message: str, form: Form, wants_json: bool
    ) -> Response:
        if wants_json:
            return _json(status, {"error": message})
        context = {"form": form, "report": None, "error": message}
        return self.page(environ, "check.html", status, context)

    def page(
        self, environ: dict[str, Any], template: str, status: str, context: dict[str, Any]
    ) -> Response:
        html = self.env.get_template(template).render(
            base=_base(environ), status=status, ops_on=self.ops is not None, **context
        )
        return Response(status, html.encode("utf-8"), headers=[("Vary", "Accept")])


def by_stage(types: list[FindingType]) -> list[tuple[str, list[FindingType]]]:
    """The catalogue by stage (the code's first part), in the order a check meets them."""
    groups: dict[str, list[FindingType]] = {}
    for t in types:
        groups.setdefault(t.code.split("/", 1)[0], []).append(t)
    return sorted(groups.items(), key=lambda kv: (_STAGE_ORDER.get(kv[0], 99), kv[0]))


def ticks(text: object) -> markupsafe.Markup:
    """`name` as <code>name</code>, after escaping everything: safe for a stranger's text."""
    escaped = str(markupsafe.escape(text))
    return markupsafe.Markup(re.sub(r"`([^`<>]+)`", r"<code>\1</code>", escaped))


def _offset(q: Form) -> int:
    """A listing's first row: `offset`, else `page` (1-based) of PER_PAGE rows."""
    for name, scale in (("offset", 1), ("page", overview.PER_PAGE)):
        value = q.get(name).strip()
        if value.isdigit() and len(value) < 10:
            return max(0, int(value) - (scale > 1)) * scale
    return 0


def _query(**params: str | None) -> str:
    """A listing's own query string, for its page links (`&offset=` is appended)."""
    return urlencode({k: v for k, v in params.items() if v})


def _is_http_url(value: object) -> bool:
    return isinstance(value, str) and value.lower().startswith(("http://", "https://"))


def _pasted(form: Form) -> bool:
    """Whether the check read pasted or uploaded content (then nothing was fetched)."""
    upload = form.files.get("file")
    return bool(form.get("content").strip() or (upload and upload[1].strip()))


def _asks_for_check(form: Form) -> bool:
    upload = form.files.get("file")
    return bool(
        form.get("url").strip() or form.get("content").strip() or (upload and upload[1].strip())
    )


def _wants_json(environ: dict[str, Any]) -> bool:
    """JSON when the client prefers application/json to text/html (a browser never does)."""
    weights: dict[str, float] = {}
    for item in str(environ.get("HTTP_ACCEPT", "")).split(","):
        kind, *params = (p.strip() for p in item.split(";"))
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        weights[kind.lower()] = max(q, weights.get(kind.lower(), 0.0))
    return weights.get("application/json", 0.0) > weights.get("text/html", 0.0)


def _json(status: str, value: object) -> Response:
    body = json.dumps(value, indent=2, ensure_ascii=False).encode("utf-8")
    return Response(status, body, "application/json", [("Vary", "Accept")])


def _base(environ: dict[str, Any]) -> str:
    """Where this application is mounted (SCRIPT_NAME), for the links it writes."""
    return str(environ.get("SCRIPT_NAME", "")).rstrip("/")


def _permalink(environ: dict[str, Any], form: Form) -> str:
    """The report's address, for a URL check (pasted content has none)."""
    url = form.get("url").strip()
    upload = form.files.get("file")
    if not url or form.get("content").strip() or (upload and upload[1].strip()):
        return ""
    query = {"url": url, **({"profile": form.get("profile")} if form.get("profile") else {})}
    return f"{_base(environ)}/check?{urlencode(query)}"
