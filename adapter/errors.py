"""The adapter's own exceptions.

Problems with a repository's content are findings (values); these are for
conditions a caller must handle: bad configuration, a network failure that
leaves nothing to inspect, a store that is down. Each names what and where.
"""

from __future__ import annotations


class AdapterError(Exception):
    """Base of every error the adapter raises on purpose."""


class ConfigError(AdapterError):
    """The configuration cannot be used; the message lists every problem."""


class FetchError(AdapterError):
    """A fetch produced no response to inspect.

    `code` is a finding code (``fetch/timeout``, ``fetch/too-large`` ...) so the
    pipeline can turn the error into a finding without guessing.
    """

    def __init__(self, code: str, url: str, message: str, status: int | None = None) -> None:
        super().__init__(f"{url}: {message}")
        self.code = code
        self.url = url
        self.message = message
        self.status = status  # the HTTP status when the server answered (a body too large)

    def __reduce__(self) -> tuple[type[FetchError], tuple[str, str, str, int | None]]:
        # crosses processes (a page fetched here, checked in a child): rebuilt from its fields
        return (type(self), (self.code, self.url, self.message, self.status))


class StoreError(AdapterError):
    """The store cannot be read or written (unreachable, locked, wrong schema)."""
