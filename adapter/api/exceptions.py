"""DataONE exceptions as the Member Node API answers them.

Every DataONE method names its own detail code for each exception it may
raise (D1-API `api_template/MN*.py`); the coordinating node and DataONE's
clients read both the HTTP status and the detail code, so the pair is looked
up here per method rather than chosen at each call site.
"""

from __future__ import annotations

from dataclasses import dataclass

# exception name -> HTTP status (D1-API `api_template/Exceptions.py`)
STATUS: dict[str, int] = {
    "InvalidRequest": 400,
    "InvalidSystemMetadata": 400,
    "UnsupportedType": 400,
    "NotAuthorized": 401,
    "InvalidToken": 401,
    "NotFound": 404,
    "IdentifierNotUnique": 409,
    "VersionMismatch": 409,
    "InsufficientResources": 413,
    "ServiceFailure": 500,
    "NotImplemented": 501,
}

# method -> exception name -> detail code (D1-API MNCore, MNRead, MNStorage,
# MNAuthorization, MNReplication). Methods we do not implement only need
# NotImplemented; ServiceFailure lets a store outage answer with the right code.
DETAIL_CODES: dict[str, dict[str, str]] = {
    "ping": {"NotImplemented": "2041", "ServiceFailure": "2042", "InsufficientResources": "2045"},
    "getLogRecords": {
        "NotAuthorized": "1460",
        "InvalidRequest": "1480",
        "ServiceFailure": "1490",
        "InvalidToken": "1470",
        "NotImplemented": "1461",
    },
    "getCapabilities": {"NotImplemented": "2160", "ServiceFailure": "2162"},
    "get": {
        "NotAuthorized": "1000",
        "NotFound": "1020",
        "ServiceFailure": "1030",
        "InvalidToken": "1010",
        "NotImplemented": "1001",
        "InsufficientResources": "1002",
    },
    "getSystemMetadata": {
        "NotAuthorized": "1040",
        "NotImplemented": "1041",
        "NotFound": "1060",
        "ServiceFailure": "1090",
        "InvalidToken": "1050",
    },
    "describe": {
        "NotAuthorized": "1360",
        "NotFound": "1380",
        "ServiceFailure": "1390",
        "InvalidToken": "1370",
        "NotImplemented": "1361",
    },
    "getChecksum": {
        "NotAuthorized": "1400",
        "NotFound": "1420",
        "InvalidRequest": "1402",
        "ServiceFailure": "1410",
        "InvalidToken": "1430",
        "NotImplemented": "1401",
    },
    "listObjects": {
        "NotAuthorized": "1520",
        "InvalidRequest": "1540",
        "NotImplemented": "1560",
        "ServiceFailure": "1580",
        "InvalidToken": "1530",
    },
    "synchronizationFailed": {
        "NotImplemented": "2160",
        "ServiceFailure": "2161",
        "NotAuthorized": "2162",
        "InvalidToken": "2164",
    },
    "systemMetadataChanged": {"NotImplemented": "1330", "InvalidRequest": "1334"},
    "getReplica": {
        "NotImplemented": "2180",
        "ServiceFailure": "2181",
        "NotAuthorized": "2182",
        "InvalidToken": "2183",
        "InsufficientResources": "2184",
        "NotFound": "2185",
    },
    "create": {"NotImplemented": "1101"},
    "update": {"NotImplemented": "1201"},
    "generateIdentifier": {"NotImplemented": "2194"},
    "delete": {"NotImplemented": "2904"},
    "archive": {"NotImplemented": "2914"},
    "updateSystemMetadata": {"NotImplemented": "4866"},
    "isAuthorized": {"NotImplemented": "1780"},
    "replicate": {"NotImplemented": "2150"},
}

# Used when no DataONE method matches the request (unknown path, wrong verb).
NO_METHOD = ""


@dataclass
class D1Error(Exception):
    """One DataONE exception, ready to be serialised as XML or HEAD headers."""

    name: str
    description: str
    method: str = NO_METHOD
    identifier: str | None = None
    node_id: str | None = None  # filled in once the request is routed to a node

    @property
    def status(self) -> int:
        return STATUS[self.name]

    @property
    def detail_code(self) -> str:
        """The method's own code, or "0" (GMN's choice) when the method has none."""
        return DETAIL_CODES.get(self.method, {}).get(self.name, "0")

    def __str__(self) -> str:
        return f"{self.name} ({self.status}/{self.detail_code}): {self.description}"


def not_found(method: str, identifier: str) -> D1Error:
    return D1Error(
        "NotFound",
        "No object with this identifier on this node; see CNRead.resolve for other nodes.",
        method,
        identifier,
    )


def invalid_request(method: str, description: str, identifier: str | None = None) -> D1Error:
    return D1Error("InvalidRequest", description, method, identifier)


def not_implemented(method: str, description: str) -> D1Error:
    return D1Error("NotImplemented", description, method)


def service_failure(method: str, description: str, identifier: str | None = None) -> D1Error:
    return D1Error("ServiceFailure", description, method, identifier)
