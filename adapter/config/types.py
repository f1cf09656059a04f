"""The checked value types of the settings: URLs, node ids, patterns, cron, ...

Each is a `str` (or tuple) with a validator that says, in an operator's
words, what is wrong and what a right value looks like. `adapter.config.settings`
builds the configuration models from them.
"""

from __future__ import annotations

import re
from difflib import get_close_matches
from functools import cache
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, Field

from adapter.findings import catalogue

NODE_ID = re.compile(r"^urn:node:[A-Za-z0-9][A-Za-z0-9_.-]*$")
CHECK_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*(/[a-z0-9][a-z0-9-]*)*$")
LABEL = r"[a-z0-9]([a-z0-9-]*[a-z0-9])?"
HOST = re.compile(rf"^{LABEL}(\.{LABEL})*(:\d+)?$")


def _http_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{value!r} is not an absolute http(s) URL (like https://repo.example/)")
    if any(c.isspace() for c in value):
        raise ValueError(f"{value!r} contains white space")
    return value


def _node_id(value: str) -> str:
    if not NODE_ID.fullmatch(value):
        raise ValueError(f"{value!r} is not a node id like urn:node:MYREPO")
    return value


def _regex(value: str) -> str:
    try:
        re.compile(value)
    except re.error as exc:
        raise ValueError(f"{value!r} is not a valid regular expression ({exc})") from None
    return value


def _host(value: str) -> str:
    if not HOST.fullmatch(value.lower()):
        raise ValueError(
            f"{value!r} is not a host name (like files.example.org or files.example.org:8443)"
        )
    return value.lower()


def _check_name(value: str) -> str:
    """A name in dataone.REQUIREMENTS, or a finding code (or prefix) with a slash."""
    # lazy: the requirements pull in the check stages, which `adapter --help` does not need
    from adapter.dataone.requirements import REQUIREMENTS

    example = f"{', '.join(sorted(REQUIREMENTS))}, or a finding code such as 'signposting/cite-as'"
    if not CHECK_NAME.fullmatch(value):
        raise ValueError(f"{value!r} is not a check name (one of {example})")
    if "/" not in value and value not in REQUIREMENTS:
        close = get_close_matches(value, list(REQUIREMENTS), n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise ValueError(f"{value!r} is not a check name ({hint}one of {example})")
    if "/" in value and not any(code.startswith(value) for code in _finding_codes()):
        raise ValueError(f"{value!r} starts no finding code (`adapter findings` lists them)")
    return value


@cache
def _finding_codes() -> tuple[str, ...]:
    return tuple(t.code for t in catalogue())


def _shapes_source(value: str) -> str:
    """`soso` (the bundled shapes) or a readable Turtle file, as given or from the working dir."""
    if value != "soso" and not Path(value).is_file():
        raise ValueError(f"{value!r} is neither 'soso' (the bundled shapes) nor a readable file")
    return value


def read_public_key(path: str | Path) -> Any:
    """The RSA public key in a PEM file: a certificate (the CN's server certificate) or a key.

    Raises ValueError saying what the file is not; used by the settings and by
    `adapter.api.auth`, which verifies DataONE tokens with it.
    """
    # lazy: cryptography is needed only where tokens are verified
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    try:
        data = Path(path).read_bytes()[: 1024 * 1024]
    except OSError as exc:
        raise ValueError(f"{str(path)!r} cannot be read ({exc.strerror or exc})") from None
    key: Any = None
    try:
        if b"-----BEGIN CERTIFICATE-----" in data:
            key = x509.load_pem_x509_certificate(data).public_key()
        elif b"-----BEGIN PUBLIC KEY-----" in data or b"-----BEGIN RSA PUBLIC KEY-----" in data:
            key = load_pem_public_key(data)
    except ValueError as exc:
        raise ValueError(f"{str(path)!r} is not a readable PEM file ({exc})") from None
    if key is None:
        raise ValueError(f"{str(path)!r} holds no PEM certificate or public key")
    if not isinstance(key, RSAPublicKey):
        raise ValueError(f"{str(path)!r} holds no RSA key (DataONE tokens are signed RS256)")
    return key


def _public_key_file(value: Path) -> Path:
    read_public_key(value)
    return value


def non_empty(value: tuple[Any, ...]) -> tuple[Any, ...]:
    if not value:
        raise ValueError("must hold at least one item")
    return value


def _crontab(value: str) -> str:
    from adapter.config.crontab import cron_trigger  # lazy: APScheduler, only for a cron value

    try:
        cron_trigger(value)
    except ValueError as exc:
        raise ValueError(f"{value!r} is not a valid cron expression: {exc}") from None
    return value


def _timezone(value: str) -> str:
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"{value!r} is not a time zone name (like UTC or Europe/Berlin)") from None
    return value


HttpUrl = Annotated[str, AfterValidator(_http_url)]
NodeId = Annotated[str, AfterValidator(_node_id)]
Regex = Annotated[str, AfterValidator(_regex)]
Host = Annotated[str, AfterValidator(_host)]
CheckName = Annotated[str, AfterValidator(_check_name)]
ShapesSource = Annotated[str, AfterValidator(_shapes_source)]
NonEmpty = Annotated[str, Field(min_length=1)]
PublicKeyFile = Annotated[Path, AfterValidator(_public_key_file)]


Crontab = Annotated[str, AfterValidator(_crontab)]
TimeZone = Annotated[str, AfterValidator(_timezone)]
