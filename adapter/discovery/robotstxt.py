"""robots.txt (RFC 9309) parsing: the pure parser, no fetching.

Matching is Protego's (our product token's group, longest match, Allow wins
ties). `adapter.discovery.robots` fetches, caches and gates on top of this.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from protego import Protego


def product_token(user_agent: str) -> str:
    """The product token robots.txt groups are matched against (`Name` of `Name/1.0 (...)`)."""
    return user_agent.split("/", 1)[0].split()[0] if user_agent.strip() else "*"


@dataclass(frozen=True, slots=True)
class RobotsPolicy:
    """What one robots.txt says to one user agent. `rules=None` means no file (allow all)."""

    user_agent: str
    rules: Protego | None = None
    disallow_all: bool = False
    reason: str = ""  # why everything is disallowed
    sitemaps: tuple[str, ...] = ()
    crawl_delay: float | None = None

    def can_fetch(self, url: str) -> bool:
        if self.disallow_all:
            return False
        if self.rules is None or urlsplit(url).path == "/robots.txt":
            return True
        try:
            return bool(self.rules.can_fetch(url, self.user_agent))
        except (ValueError, TypeError, UnicodeError):
            return True  # Protego choked on the URL, not on a rule; no rule forbids it


def parse_robots(body: bytes, user_agent: str, max_bytes: int = 512_000) -> RobotsPolicy:
    """Parse robots.txt bytes for `user_agent`; never raises."""
    text = body[:max_bytes].decode("utf-8", errors="replace")
    text = text.removeprefix("\ufeff")  # a BOM would hide the first line from the parser
    token = product_token(user_agent)
    try:
        rules = Protego.parse(text)
        sitemaps = tuple(dict.fromkeys(s.strip() for s in rules.sitemaps if s.strip()))
        delay = rules.crawl_delay(token)
    except Exception:  # Protego is third-party; a bad file must not end the run
        return RobotsPolicy(token)
    crawl_delay = float(delay) if delay is not None and float(delay) >= 0 else None
    return RobotsPolicy(token, rules, sitemaps=sitemaps, crawl_delay=crawl_delay)
