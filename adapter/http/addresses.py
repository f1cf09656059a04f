"""Which addresses a fetch may reach: the defence against server-side request forgery.

URLs come from strangers' sitemaps, links and redirects. Only http(s) is
fetched, and a URL the operator did not name must resolve to public
addresses only: never loopback, private, link-local, cloud metadata,
unspecified, multicast or reserved ranges, whatever the spelling
(`2130706433`, `0x7f.1`, `[::ffff:127.0.0.1]`, `localhost.`). The operator's
origins (scheme, host, port) are trusted one by one. The check runs on the
resolved address, and `adapter.http.connections` connects to exactly the address
that was checked, so a DNS answer that changes between check and connect
(rebinding) cannot slip through.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Iterable
from urllib.parse import SplitResult, urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# addresses that must never be reached from a stranger's URL, whatever the flags say
CLOUD_METADATA = frozenset(
    {
        ipaddress.ip_address("169.254.169.254"),  # AWS, GCP, Azure, OpenStack, ...
        ipaddress.ip_address("169.254.170.2"),  # AWS ECS task metadata
        ipaddress.ip_address("100.100.100.200"),  # Alibaba Cloud
        ipaddress.ip_address("fd00:ec2::254"),  # AWS over IPv6
    }
)
NAT64 = ipaddress.ip_network("64:ff9b::/96")


class UnsafeAddress(Exception):
    """A connection was refused because the host resolved to a non-public address.

    Deliberately not an OSError, so urllib3 and requests let it through unwrapped.
    """

    def __init__(self, host: str, address: str, reason: str) -> None:
        bare = host.strip("[]")
        where = f"address {address}" if bare == address else f"host {bare} resolves to {address}"
        super().__init__(f"{where}, which {reason}")
        self.host = host
        self.address = address
        self.reason = reason


def _port(parts: SplitResult) -> int | None:
    try:
        return parts.port
    except ValueError:  # not a number, or out of range: no port, as for a missing one
        return None


def origin(url: str) -> str:
    """scheme://host:port, with the default port made explicit."""
    parts = urlsplit(url)
    return origin_of(parts.scheme, parts.hostname or "", _port(parts))


def host_key(url: str) -> str:
    """The unit of politeness: host and port."""
    parts = urlsplit(url)
    return f"{(parts.hostname or '').lower()}:{_port(parts) or ''}"


def origin_of(scheme: str, host: str, port: int | None) -> str:
    scheme = scheme.lower()
    host = host.strip("[]").lower()
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port or (443 if scheme == 'https' else 80)}"


def _embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, 6to4, NAT64), if any."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def non_public_reason(address: str) -> str | None:
    """None for a public unicast address, else what kind of address it is."""
    try:
        ip: IPAddress = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return "is not an IP address"
    inner = _embedded_ipv4(ip)
    if inner is not None:
        reason = non_public_reason(str(inner))
        return f"embeds {inner}, which {reason}" if reason else None
    if ip in CLOUD_METADATA:
        return "is a cloud metadata address"
    kinds = (
        ("is_unspecified", "an unspecified"),
        ("is_loopback", "a loopback"),
        ("is_link_local", "a link-local"),
        ("is_multicast", "a multicast"),
        ("is_private", "a private"),
        ("is_reserved", "a reserved"),
    )
    for attribute, name in kinds:
        if getattr(ip, attribute):
            return f"is {name} address"
    if not ip.is_global:
        return "is not a public address"
    return None


def resolve(host: str, port: int) -> list[str]:
    """Every address `host` resolves to (IP literals in any spelling resolve to themselves)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    out: list[str] = []
    for info in infos:
        address = str(info[4][0])
        if address not in out:
            out.append(address)
    return out


class AddressPolicy:
    """Which URLs may be fetched: http(s) only; non-public addresses only where trusted.

    The operator's origins (the URL on the command line, a node's entry URLs,
    the hosts a node allows) are trusted; every other URL must resolve to
    public addresses only, checked on each connection (so after every
    redirect too) against the very address the socket connects to.
    """

    def __init__(self, trusted_origins: Iterable[str] = (), allow_private: bool = False) -> None:
        self._trusted = {origin(u) for u in trusted_origins}
        self._allow_private = allow_private
        self._lock = threading.Lock()

    def trust(self, url: str) -> None:
        with self._lock:
            self._trusted.add(origin(url))

    def is_trusted(self, url: str) -> bool:
        return origin(url) in self._trusted

    def origin_trusted(self, scheme: str, host: str, port: int | None) -> bool:
        return self._allow_private or origin_of(scheme, host, port) in self._trusted

    def refusal(self, url: str, max_length: int) -> str | None:
        """None when `url` may be fetched as far as its text shows, else why not.

        Names are resolved and checked again at connect time (`addresses_for`);
        this early check gives a clear reason before any connection is tried.
        """
        if len(url) > max_length:
            return f"URL longer than max_url_length ({max_length} characters)"
        parts = urlsplit(url)
        if parts.scheme.lower() not in ("http", "https"):
            return f"scheme {parts.scheme or '(none)'!r} is not http or https"
        if not parts.hostname:
            return "URL has no host"
        try:
            port = parts.port
        except ValueError:
            return "URL has an invalid port"
        if self._allow_private or self.is_trusted(url):
            return None
        if parts.username is not None or parts.password is not None:
            return "URL carries user credentials (user@host), a common disguise"
        try:
            self.addresses_for(parts.scheme, parts.hostname, port or 80)
        except UnsafeAddress as exc:
            return str(exc)
        except (OSError, UnicodeError):
            return None  # unresolvable: the connection itself will fail and say so
        return None

    def addresses_for(self, scheme: str, host: str, port: int) -> list[str]:
        """The addresses a connection to `host` may use; raises UnsafeAddress if any is unsafe.

        All must be public: a name that resolves to a public and a private
        address is refused, since the connection could land on either.
        """
        addresses = resolve(host.strip("[]"), port)
        if self.origin_trusted(scheme, host, port):
            return addresses
        for address in addresses:
            reason = non_public_reason(address)
            if reason:
                raise UnsafeAddress(host, address, reason)
        return addresses
