"""Reading an mnlite node's store (DataONEorg/mnlite `opersist`), read-only, for the import.

An mnlite node is a folder: `node.json` (the node document's values, the spider's
sitemaps, opersist's `content_database` and `data_folder`), an optional
`settings.json` (per-node spider settings), the SQLite database opersist's
SQLAlchemy models created (tables `thing`, `subject`, `accessrule`,
`accessrule_subject`, `thing_accessrule`) and the blob folder, where each
object's bytes are `<a>/<b>/<c>/<sha256>.bin` (the `thing.content` column, relative
to the blob folder). The database is opened with SQLite's `mode=ro`, so the
import can run beside a live mnlite; nothing here writes.

Values are read as SQLAlchemy stored them on SQLite: timestamps as naive UTC text
(opersist writes aware UTC, the SQLite dialect drops the zone), booleans as 0/1,
JSON columns as text, the permission enum by name. Malformed values are kept as
None and judged by the planner (`adapter.migrate.mnlite_plan`), never raised here.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from adapter.errors import ConfigError

NODE_JSON = "node.json"
SETTINGS_JSON = "settings.json"
DEFAULT_DATABASE = "sqlite:///content.db"  # opersist's default
DEFAULT_BLOBS = "data"
MAX_CONFIG_BYTES = 1024 * 1024  # node.json and settings.json are a few KB


@dataclass(frozen=True, slots=True)
class Access:
    """One allow rule of an object: a subject and a permission (read, write, changePermission)."""

    subject: str
    permission: str


@dataclass(frozen=True, slots=True)
class Thing:
    """One row of opersist's `thing` table, with its subjects and access rules resolved."""

    sha256: str  # the primary key: the sha256 of the blob's bytes
    identifier: str | None  # the PID
    series_id: str | None
    size: int | None
    md5: str | None
    sha1: str | None
    date_uploaded: datetime | None
    date_modified: datetime | None  # dateSysMetadataModified
    content: str | None  # the blob's path under the blob folder
    media_type: str | None
    file_name: str | None
    source: str | None  # the landing page the JSON-LD came from
    format_id: str | None
    serial_version: int | None
    archived: bool
    obsoletes: str | None
    obsoleted_by: str | None
    submitter: str | None
    rights_holder: str | None
    origin_member_node: str | None
    authoritative_member_node: str | None
    replication_allowed: bool | None
    number_replicas: int | None
    replication_preferred: tuple[str, ...] = ()
    replication_blocked: tuple[str, ...] = ()
    access: tuple[Access, ...] = ()


@dataclass(slots=True)
class Instance:
    """An mnlite node folder: its configuration files and the things of its store."""

    path: Path
    node_json: dict[str, Any]
    settings_json: dict[str, Any]
    database: Path
    blobs: Path
    things: list[Thing] = field(default_factory=list)


def _json_file(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    if path.stat().st_size > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_CONFIG_BYTES} bytes; not an mnlite file")
    try:
        data = json.loads(path.read_text("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a JSON object was expected")
    return data


def _database_path(root: Path, url: object) -> Path:
    """opersist's `content_database` (a SQLAlchemy URL, relative to the node folder)."""
    text = str(url or DEFAULT_DATABASE)
    if not text.startswith("sqlite:///"):
        raise ConfigError(
            f"{root / NODE_JSON}: content_database {text!r} is not SQLite; export it to an "
            "SQLite file with opersist's tables and point content_database at it"
        )
    path = Path(text.removeprefix("sqlite:///"))
    return path if path.is_absolute() else root / path


def open_instance(path: str | Path) -> Instance:
    """The node folder's files, checked to be an mnlite node; ConfigError says what is wrong."""
    root = Path(path)
    if not root.is_dir():
        raise ConfigError(f"{root}: not a folder (give the mnlite node folder, with node.json)")
    node_json = _json_file(root / NODE_JSON)
    if not node_json:
        raise ConfigError(f"{root}: no {NODE_JSON}; not an mnlite node folder")
    database = _database_path(root, node_json.get("content_database"))
    if not database.is_file():
        raise ConfigError(f"{database}: the node's content database is missing")
    blobs = Path(str(node_json.get("data_folder") or DEFAULT_BLOBS))
    return Instance(
        path=root,
        node_json=node_json,
        settings_json=_json_file(root / SETTINGS_JSON),
        database=database,
        blobs=(blobs if blobs.is_absolute() else root / blobs).resolve(),
    )


def _stamp(value: object) -> datetime | None:
    if value is None:
        return None
    try:
        when = datetime.fromisoformat(str(value).strip().replace(" ", "T", 1))
    except ValueError:
        return None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _int(value: object) -> int | None:
    try:
        return None if value is None else int(str(value))
    except ValueError:
        return None


def _flag(value: object) -> bool | None:
    if value is None:
        return None
    return str(value).strip().lower() in ("1", "true", "t")


def _names(value: object) -> tuple[str, ...]:
    """A JSON list of node ids (replication_preferred/blocked), as text."""
    try:
        data = json.loads(str(value)) if isinstance(value, str | bytes) else value
    except ValueError:
        return ()
    return tuple(str(v) for v in data) if isinstance(data, list) else ()


THING_COLUMNS = (
    "checksum_sha256, identifier, series_id, size_bytes, checksum_md5, checksum_sha1, "
    "date_uploaded, date_modified, content, media_type_name, file_name, source, format_id, "
    "serial_version, archived, obsoletes, obsoleted_by, submitter_id, rights_holder_id, "
    "origin_member_node, authoritative_member_node, replication_allowed, number_replicas, "
    "replication_preferred, replication_blocked"
)


def _access_rules(db: sqlite3.Connection) -> dict[str, tuple[Access, ...]]:
    """thing sha256 -> its allow rules, in rule order."""
    rules: dict[str, list[Access]] = {}
    try:
        rows = db.execute(
            "SELECT ta.thing_id, ar.permission, s.subject FROM thing_accessrule ta "
            "JOIN accessrule ar ON ar._id = ta.accessrule_id "
            "JOIN accessrule_subject s ON s.accessrule_id = ar._id "
            "ORDER BY ta.thing_id, ar._id, s.subject"
        ).fetchall()
    except sqlite3.DatabaseError:  # an older store without the rule tables
        return {}
    for thing_id, permission, subject in rows:
        if thing_id is None or subject is None:
            continue
        name = str(permission or "read").rsplit(".", 1)[-1]  # the enum's name
        rules.setdefault(str(thing_id), []).append(Access(str(subject), name))
    return {k: tuple(v) for k, v in rules.items()}


def read_things(instance: Instance) -> list[Thing]:
    """Every thing of the node's database, oldest change first (read-only)."""
    uri = f"{instance.database.resolve().as_uri()}?mode=ro"
    try:
        db = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as exc:
        raise ConfigError(f"{instance.database}: cannot be opened ({exc})") from exc
    try:
        try:
            rows = db.execute(
                f"SELECT {THING_COLUMNS} FROM thing ORDER BY date_modified, identifier"
            ).fetchall()
        except sqlite3.DatabaseError as exc:
            raise ConfigError(
                f"{instance.database}: not an opersist database (no readable thing table: {exc})"
            ) from exc
        access = _access_rules(db)
    finally:
        db.close()
    return [_thing(row, access) for row in rows]


def _thing(row: tuple[Any, ...], access: dict[str, tuple[Access, ...]]) -> Thing:
    (sha, pid, sid, size, md5, sha1, uploaded, modified, content, media, fname, source, fmt,
     serial, archived, obsoletes, obsoleted_by, submitter, owner, origin, authority,
     rep_allowed, replicas, preferred, blocked) = row  # fmt: skip
    return Thing(
        sha256=str(sha).strip().lower(),
        identifier=_text(pid),
        series_id=_text(sid),
        size=_int(size),
        md5=_text(md5),
        sha1=_text(sha1),
        date_uploaded=_stamp(uploaded),
        date_modified=_stamp(modified),
        content=_text(content),
        media_type=_text(media),
        file_name=_text(fname),
        source=_text(source),
        format_id=_text(fmt),
        serial_version=_int(serial),
        archived=bool(_flag(archived)),
        obsoletes=_text(obsoletes),
        obsoleted_by=_text(obsoleted_by),
        submitter=_text(submitter),
        rights_holder=_text(owner),
        origin_member_node=_text(origin),
        authoritative_member_node=_text(authority),
        replication_allowed=_flag(rep_allowed),
        number_replicas=_int(replicas),
        replication_preferred=_names(preferred),
        replication_blocked=_names(blocked),
        access=access.get(str(sha), ()),
    )


def read_blob(instance: Instance, thing: Thing, max_bytes: int) -> bytes | str:
    """The thing's bytes, or why they cannot be read (missing, over `max_bytes`, outside)."""
    if not thing.content:
        return "the thing names no blob (content is empty)"
    root = str(instance.blobs)
    path = os.path.normpath(os.path.join(root, thing.content))  # no symlink walk: cheap
    if not path.startswith(root + os.sep):
        return f"its blob path {thing.content!r} leaves the blob folder"
    try:
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
    except FileNotFoundError:
        return f"its blob {thing.content} is missing"
    except OSError as exc:
        return f"its blob {thing.content} cannot be read ({exc.strerror})"
    if len(data) > max_bytes:
        size = os.path.getsize(path)
        return f"its blob is {size} bytes, over the object cap of {max_bytes}"
    return data
