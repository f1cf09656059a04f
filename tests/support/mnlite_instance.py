"""An mnlite node folder written the way mnlite writes one, for the import tests.

The tables are opersist's models (DataONEorg/mnlite `opersist/models/thing.py`,
`subject.py`, `accessrule.py`) declared again with the same SQLAlchemy column
types, so `create_all` emits the CREATE TABLE statements opersist's models produce
on SQLite and the rows are stored as SQLAlchemy stores them there (timestamps as
naive UTC text, JSON as text, the permission enum by name, booleans as 0/1).
Blobs are `data/<a>/<b>/<c>/<sha256>.bin` with their `.json` side file (opersist's
`flob.py`), holding `json.dumps(jsonld, indent=2, sort_keys=True)` of the JSON-LD
the spider read (soscan/opersistpipeline.py), and the PID is `sha256:<hex>` of it.
"""

from __future__ import annotations

import enum
import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    Column,
    DateTime,
    Enum,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    create_engine,
    insert,
)

FORMAT = "science-on-schema.org/Dataset;ld+json"


class AllowedPermissions(enum.Enum):
    read = "read"
    write = "write"
    changePermission = "changePermission"


meta = MetaData()
subject = Table(
    "subject",
    meta,
    Column("subject", String, primary_key=True),
    Column("name", String, index=True),
    Column("t", DateTime(timezone=True)),
    Column("t_mod", DateTime(timezone=True)),
)
accessrule = Table(
    "accessrule",
    meta,
    Column("_id", Integer, primary_key=True, autoincrement=True),
    Column("t", DateTime(timezone=True)),
    Column("t_mod", DateTime(timezone=True)),
    Column("permission", Enum(AllowedPermissions)),
)
accessrule_subject = Table(
    "accessrule_subject",
    meta,
    Column("accessrule_id", Integer, ForeignKey("accessrule._id")),
    Column("subject", String, ForeignKey("subject.subject")),
)
thing = Table(
    "thing",
    meta,
    Column("checksum_sha256", String, primary_key=True),
    Column("identifier", String, index=True, nullable=True, unique=True),
    Column("series_id", String, index=True, nullable=True),
    Column("size_bytes", Integer, nullable=False),
    Column("checksum_md5", String, nullable=False),
    Column("checksum_sha1", String, nullable=False),
    Column("identifiers", JSON),
    Column("t_added", DateTime(timezone=True)),
    Column("t_content_modified", DateTime(timezone=True)),
    Column("date_modified", DateTime(timezone=True), index=True),
    Column("date_uploaded", DateTime(timezone=True), nullable=True),
    Column("content", String, nullable=False),
    Column("media_type_name", String, nullable=True, index=True),
    Column("file_name", String, nullable=True, index=True),
    Column("source", String, nullable=False, index=True),
    Column("format_id", String, index=True),
    Column("serial_version", Integer),
    Column("replication_allowed", Boolean),
    Column("number_replicas", Integer),
    Column(
        "replication_preferred", JSON(none_as_null=True)
    ),  # opersist: JSON(String), a truthy none_as_null
    Column(
        "replication_blocked", JSON(none_as_null=True)
    ),  # opersist: JSON(String), a truthy none_as_null
    Column("archived", Boolean, index=True),
    Column("authoritative_member_node", String, index=True),
    Column("origin_member_node", String, index=True),
    Column("obsoletes", String, nullable=True, index=True),
    Column("obsoleted_by", String, nullable=True, index=True),
    Column("submitter_id", Integer, ForeignKey("subject.subject")),
    Column("rights_holder_id", Integer, ForeignKey("subject.subject")),
    Column("_meta", JSON, nullable=True),
    CheckConstraint("identifier != series_id"),
)
thing_accessrule = Table(
    "thing_accessrule",
    meta,
    Column("thing_id", String, ForeignKey("thing.checksum_sha256")),
    Column("accessrule_id", Integer, ForeignKey("accessrule._id")),
)

SUBMITTER = "http://orcid.org/0000-0002-1825-0097"
OWNER = "CN=urn:node:MNLITE,DC=dataone,DC=org"


def blob_of(jsonld: Any) -> bytes:
    """What mnlite stores for the JSON-LD it read (and hashes for the PID)."""
    return json.dumps(jsonld, indent=2, sort_keys=True).encode("utf-8")


def pid_of(jsonld: Any) -> str:
    return "sha256:" + hashlib.sha256(blob_of(jsonld)).hexdigest()


@dataclass
class MnThing:
    """One object as mnlite holds it (the PID is its blob's sha256)."""

    jsonld: Any
    source: str
    series_id: str | None
    date_uploaded: datetime
    date_modified: datetime
    obsoletes: str | None = None
    obsoleted_by: str | None = None
    archived: bool = False
    serial_version: int = 1
    access: tuple[tuple[str, str], ...] = (("public", "read"),)
    blob: bytes | None = None  # stored instead of blob_of(jsonld): a damaged blob
    write_blob: bool = True  # False: the blob is missing
    file_name: str = "tmpq8x2k1va"  # mnlite's temporary file's name
    extra: dict[str, Any] = field(default_factory=dict)  # column values written instead

    @property
    def pid(self) -> str:
        return pid_of(self.jsonld)


def node_json(node_id: str, sitemap: str, **spider: Any) -> dict[str, Any]:
    return {
        "node": {
            "node_id": node_id,
            "state": "up",
            "name": "Moved Repository",
            "description": "A node that mnlite served",
            "base_url": "https://sonode.example/MOVED/v2",
            "schedule": {
                "hour": "*",
                "day": "*",
                "min": "0,10,20,30,40,50",
                "mon": "*",
                "sec": "5",
                "wday": "?",
                "year": "*",
            },
            "subject": SUBMITTER,
            "contact_subject": SUBMITTER,
        },
        "data_folder": "data",
        "content_database": "sqlite:///content.db",
        "created": "2023-01-02T03:04:05+00:00",
        "default_submitter": SUBMITTER,
        "default_owner": OWNER,
        "spider": {"sitemap_urls": [sitemap], **spider},
    }


def write_instance(
    folder: Path,
    node: dict[str, Any],
    things: list[MnThing],
    settings: dict[str, Any] | None = None,
) -> Path:
    """The node folder: node.json, settings.json, content.db and data/ (returns the folder)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "node.json").write_text(json.dumps(node, indent=2), "utf-8")
    if settings is not None:
        (folder / "settings.json").write_text(json.dumps(settings), "utf-8")
    engine = create_engine(f"sqlite:///{folder / 'content.db'}")
    meta.create_all(engine)
    now = datetime(2023, 1, 2, tzinfo=UTC)
    with engine.begin() as conn:
        for name in (SUBMITTER, OWNER, "public"):
            conn.execute(insert(subject).values(subject=name, name=name, t=now, t_mod=now))
        rules: dict[tuple[str, str], int] = {}
        for t in things:
            for rule in t.access:
                if rule not in rules:
                    perm = AllowedPermissions[rule[1]]
                    rid = conn.execute(
                        insert(accessrule).values(permission=perm, t=now, t_mod=now)
                    ).inserted_primary_key
                    assert rid is not None
                    rules[rule] = int(rid[0])
                    conn.execute(
                        insert(accessrule_subject).values(
                            accessrule_id=rules[rule], subject=rule[0]
                        )
                    )
        for t in things:
            _write_thing(conn, folder, t, rules)
    engine.dispose()
    return folder


def _write_thing(conn: Any, folder: Path, t: MnThing, rules: dict[tuple[str, str], int]) -> None:
    data = blob_of(t.jsonld)
    sha = hashlib.sha256(data).hexdigest()
    rel = f"{sha[0]}/{sha[1]}/{sha[2]}/{sha}.bin"
    if t.write_blob:
        path = folder / "data" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(t.blob if t.blob is not None else data)
        side = {"identifier": t.pid, "media_type": "application/ld+json", "source": t.source}
        path.with_suffix(".json").write_text(json.dumps(side), "utf-8")
    values: dict[str, Any] = {
        "checksum_sha256": sha,
        "identifier": t.pid,
        "series_id": t.series_id,
        "size_bytes": len(data),
        "checksum_md5": hashlib.md5(data).hexdigest(),
        "checksum_sha1": hashlib.sha1(data).hexdigest(),
        "identifiers": [],
        "t_added": t.date_uploaded,
        "t_content_modified": t.date_uploaded,
        "date_modified": t.date_modified,
        "date_uploaded": t.date_uploaded,
        "content": rel,
        "media_type_name": "application/ld+json",
        "file_name": t.file_name,
        "source": t.source,
        "format_id": FORMAT,
        "serial_version": t.serial_version,
        "replication_allowed": False,
        "number_replicas": 0,
        "replication_preferred": [],
        "replication_blocked": [],
        "archived": t.archived,
        "obsoletes": t.obsoletes,
        "obsoleted_by": t.obsoleted_by,
        "submitter_id": SUBMITTER,
        "rights_holder_id": OWNER,
        "_meta": {"http_status": 200, "source": t.source},
    }
    conn.execute(insert(thing).values(values | t.extra))
    for rule in t.access:
        conn.execute(insert(thing_accessrule).values(thing_id=sha, accessrule_id=rules[rule]))
