"""Who may read /ops: a caller on loopback, or one who presents the operator's secret.

/ops shows every page's stored report and the queue, so it is served only when
asked for (`--ops`) and then only to a caller on a loopback address (the
operator on the machine, or through an SSH tunnel) or to one who presents the
operator's secret: `Authorization: Bearer SECRET` from a script, or the
secret typed once into /ops/login, which sets a cookie holding a digest of it
(never the secret itself). Without a secret configured, only loopback callers
get in. Behind a reverse proxy on the same host every caller looks like
loopback: give the server `--trusted-proxy`, so the client it names is judged.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from dataclasses import dataclass
from http.cookies import CookieError, SimpleCookie
from typing import Any

COOKIE = "adapter_ops"
TOKEN_ENV = "ADAPTER_OPS_TOKEN"


@dataclass(frozen=True, slots=True)
class OpsAccess:
    """The operator's secret (None: loopback callers only)."""

    token: str | None = None

    @property
    def session(self) -> str:
        """The cookie's value: a digest of the secret, useless for a Bearer header."""
        if not self.token:
            return ""
        return hmac.new(self.token.encode(), b"adapter ops session", hashlib.sha256).hexdigest()

    def allows(self, environ: dict[str, Any]) -> bool:
        return on_loopback(environ) or self.presents_secret(environ)

    def presents_secret(self, environ: dict[str, Any]) -> bool:
        if not self.token:
            return False
        auth = str(environ.get("HTTP_AUTHORIZATION", ""))
        scheme, _, value = auth.partition(" ")
        if scheme.lower() == "bearer" and self.matches(value.strip()):
            return True
        cookie = cookie_value(environ, COOKIE)
        return bool(cookie) and hmac.compare_digest(cookie.encode(), self.session.encode())

    def matches(self, given: str) -> bool:
        """Whether `given` is the secret, in constant time."""
        return bool(self.token) and hmac.compare_digest(given.encode(), str(self.token).encode())

    def cookie_header(self, path: str, secure: bool) -> tuple[str, str]:
        flags = f"Path={path}; HttpOnly; SameSite=Strict" + ("; Secure" if secure else "")
        return ("Set-Cookie", f"{COOKIE}={self.session}; {flags}")


def on_loopback(environ: dict[str, Any]) -> bool:
    """Whether the caller (REMOTE_ADDR, the trusted proxy's client when one is set) is local."""
    address = str(environ.get("REMOTE_ADDR") or "").strip("[]")
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
    return (mapped or ip).is_loopback


def cookie_value(environ: dict[str, Any], name: str) -> str:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(str(environ.get("HTTP_COOKIE", "")))
    except CookieError:
        return ""
    morsel = jar.get(name)
    return morsel.value if morsel is not None else ""
