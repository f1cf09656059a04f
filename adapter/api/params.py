"""Parameters of Member Node requests, parsed exactly as DataONE clients send them.

Pure functions: raw path and query text in, typed values out, a `D1Error`
(InvalidRequest or NotFound with the caller's method) for anything else.

- Identifiers in paths are percent-decoded from the *raw* request target:
  `%2F` is a slash inside the PID and a literal `+` stays a plus
  (D1-API `design/PIDs.txt`); never form-decoded.
- Dates follow `rest_comms.txt`: `yyyy-MM-dd[Thh:mm:ss[.S][zone]]`, UTC
  when the zone is missing; the CN sends `...T00:00:00.001+00:00`, and a raw
  `+` that a client forgot to escape may arrive as a space.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from urllib.parse import unquote

from adapter.api.exceptions import invalid_request, not_found

MAX_PID_CHARS = 800  # D1-XSD Identifier
MAX_QUERY_CHARS = 8192  # a listObjects query is under 300 characters
MAX_PARAM_CHARS = 2048
MAX_INT_DIGITS = 12

_DATE = re.compile(
    r"""^(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})
    (?:[T ](?P<h>\d{2}):(?P<mi>\d{2})(?::(?P<s>\d{2})(?:[.,](?P<f>\d{1,9}))?)?)?
    \s?(?P<z>Z|z|[+\- ]\d{2}(?::?\d{2})?)?$""",
    re.VERBOSE | re.ASCII,
)


@dataclass(frozen=True, slots=True)
class Query:
    """A query string split into names and values, each decoded once, `+` kept."""

    values: dict[str, str]

    def get(self, name: str) -> str | None:
        return self.values.get(name)


def parse_query(raw: str, method: str) -> Query:
    """Split `a=1&b=2`; percent-decode without turning `+` into a space.

    A repeated name is an error: the API defines none that repeat, and picking
    one silently would hide a client's mistake.
    """
    if len(raw) > MAX_QUERY_CHARS:
        raise invalid_request(method, f"query string longer than {MAX_QUERY_CHARS} characters")
    values: dict[str, str] = {}
    for part in raw.split("&"):
        if not part:
            continue
        name, _, value = part.partition("=")
        name = _decode(name, method, "parameter name")
        if name in values:
            raise invalid_request(method, f"parameter {name!r} given more than once")
        decoded = _decode(value, method, f"parameter {name!r}")
        if len(decoded) > MAX_PARAM_CHARS:
            raise invalid_request(method, f"parameter {name!r} is too long")
        values[name] = decoded
    return Query(values)


def _decode(text: str, method: str, what: str) -> str:
    try:
        return unquote(text, encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        raise invalid_request(method, f"{what} is not valid UTF-8 after percent-decoding") from None


def parse_date(value: str | None, name: str, method: str) -> datetime | None:
    """A DataONE date parameter as an aware UTC datetime (microsecond precision)."""
    if value is None or value == "":
        return None
    match = _DATE.match(value.strip()) if len(value) <= 64 else None
    if match is None:
        raise invalid_request(
            method,
            f"{name}={value!r} is not a date like 2024-01-31, 2024-01-31T12:00:00Z "
            "or 2024-01-31T12:00:00.000+00:00",
        )
    g = match.groupdict()
    fraction = (g["f"] or "0")[:6].ljust(6, "0")
    try:
        moment = datetime(
            int(g["y"]),
            int(g["mo"]),
            int(g["d"]),
            int(g["h"] or 0),
            int(g["mi"] or 0),
            int(g["s"] or 0),
            int(fraction),
            tzinfo=_zone(g["z"]),
        )
    except ValueError as exc:
        raise invalid_request(method, f"{name}={value!r} is not a real date ({exc})") from None
    try:
        return moment.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00:00+01:00 is before the first representable UTC
        raise invalid_request(
            method, f"{name}={value!r} is out of range (years 1 to 9999 in UTC)"
        ) from None


def _zone(text: str | None) -> timezone:
    if text is None or text in ("Z", "z"):
        return UTC
    sign = -1 if text[0] == "-" else 1  # "+" or a space that was a "+"
    digits = text[1:].replace(":", "")
    hours, minutes = int(digits[:2]), int(digits[2:4] or 0)
    if hours > 23 or minutes > 59:
        raise ValueError(f"zone offset {text.strip()} is out of range")
    return timezone(sign * timedelta(hours=hours, minutes=minutes))


def parse_count(value: str | None, name: str, method: str, default: int, cap: int) -> int:
    """A non-negative integer; `count` above the cap is lowered (the caller checks total)."""
    if value is None or value == "":
        return min(default, cap)
    text = value.strip()
    if not text.isascii() or not text.isdigit() or len(text) > MAX_INT_DIGITS:
        raise invalid_request(method, f"{name}={value!r} is not a whole number >= 0")
    return min(int(text), cap)


def parse_bool(value: str | None, name: str, method: str) -> bool | None:
    if value is None or value == "":
        return None
    lowered = value.strip().lower()
    if lowered not in ("true", "false"):
        raise invalid_request(method, f"{name}={value!r} is neither true nor false")
    return lowered == "true"


def decode_pid(raw: str, method: str) -> str:
    """The identifier in a raw path segment; one that cannot exist is NotFound."""
    try:
        pid = unquote(raw, encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        raise not_found(method, raw) from None
    if not valid_identifier(pid):
        raise not_found(method, pid[:MAX_PID_CHARS])
    return pid


def valid_identifier(value: str) -> bool:
    """D1-XSD Identifier: non-empty, at most 800 characters, no white space or controls."""
    # str.isprintable is False for every white space but the ASCII space, and for controls
    return 0 < len(value) <= MAX_PID_CHARS and value.isprintable() and " " not in value


def checked_text(value: str | None, name: str, method: str) -> str | None:
    """A free-text filter (formatId, nodeId, event): no control characters.

    A NUL cannot even be sent to PostgreSQL; an empty value means "no filter".
    """
    if value is None or value == "":
        return None
    if not all(c.isprintable() or c == " " for c in value):
        raise invalid_request(method, f"{name} contains control characters")
    return value


def checked_identifier(value: str | None, name: str, method: str) -> str | None:
    if value is None or value == "":
        return None
    if not valid_identifier(value):
        raise invalid_request(
            method, f"{name} is not a DataONE identifier (1-800 characters, no white space)"
        )
    return value


# DataONE checksum labels (LoC names, D1-XSD ChecksumAlgorithm) -> hashlib names.
CHECKSUM_ALGORITHMS: dict[str, str] = {
    "MD5": "md5",
    "SHA-1": "sha1",
    "SHA-224": "sha224",
    "SHA-256": "sha256",
    "SHA-384": "sha384",
    "SHA-512": "sha512",
}


def algorithm_key(label: str) -> str:
    """`SHA-256`, `SHA256`, `sha_256` and `sha256` are one algorithm."""
    return label.strip().lower().replace("-", "").replace("_", "")


_BY_KEY = {algorithm_key(label): label for label in CHECKSUM_ALGORITHMS}


def parse_algorithm(value: str | None, method: str) -> str | None:
    """The DataONE label for a `checksumAlgorithm` in any spelling clients use."""
    if value is None or value == "":
        return None
    label = _BY_KEY.get(algorithm_key(value))
    if label is None:
        supported = ", ".join(CHECKSUM_ALGORITHMS)
        raise invalid_request(
            method, f"checksumAlgorithm {value!r} is not supported; supported: {supported}"
        )
    return label
