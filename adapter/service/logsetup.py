"""Logging for the long-lived processes: human lines or JSON lines.

Human lines suit a terminal; JSON lines (one object per line: `ts`, `level`,
`logger`, `message`, plus the record's structured fields such as `event`,
`node`, `counts`) suit journald, Loki or `jq`. Structured fields are passed
with `logger.info(msg, extra={"event": ..., ...})`; the human form shows
them as `key=value` after the message.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any, Literal, TextIO

LogFormat = Literal["human", "json"]

# attributes every LogRecord has; anything else came in through `extra=`
_STANDARD = set(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "taskName"}


def structured_fields(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in record.__dict__.items() if k not in _STANDARD}


class JsonLinesFormatter(logging.Formatter):
    """One JSON object per record, never spanning lines."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update(structured_fields(record))
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


class HumanFormatter(logging.Formatter):
    """`2026-11-22 03:00:00Z INFO adapter.service.scheduler: message key=value ...`."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s", "%Y-%m-%d %H:%M:%SZ")

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return datetime.fromtimestamp(record.created, UTC).strftime(datefmt or "%H:%M:%S")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        extra = structured_fields(record)
        if extra:
            text += " " + " ".join(f"{k}={_flat(v)}" for k, v in extra.items())
        return text


def _flat(value: Any) -> str:
    if isinstance(value, dict):
        return ",".join(f"{k}:{v}" for k, v in value.items()) or "-"
    text = str(value)
    return json.dumps(text) if (" " in text or not text) else text


def configure(
    log_format: LogFormat = "human", level: str = "INFO", stream: TextIO | None = None
) -> None:
    """Send every log record to `stream` (stderr) in the chosen format, replacing other handlers."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonLinesFormatter() if log_format == "json" else HumanFormatter())
    logging.basicConfig(level=level.upper(), handlers=[handler], force=True)
    logging.getLogger("apscheduler").setLevel(max(logging.WARNING, logging.root.level))
