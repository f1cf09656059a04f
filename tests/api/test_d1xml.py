"""The Member Node API's pure parts: XML documents against DataONE's XSDs and pyxb,
exceptions with their detail codes, parameter parsing, the Quartz schedule."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from urllib.parse import quote

import d1_common.types.exceptions as d1_exceptions
import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapter.api.exceptions import DETAIL_CODES, STATUS, D1Error, invalid_request, not_found
from adapter.api.params import (
    decode_pid,
    parse_algorithm,
    parse_bool,
    parse_count,
    parse_date,
    parse_query,
    valid_identifier,
)
from adapter.api.schedule import (
    Schedule,
    from_cron,
    from_interval,
    from_settings,
    harvest_schedule,
)
from adapter.api.xml import (
    LogEntry,
    NodeInfo,
    checksum_xml,
    d1_datetime,
    error_headers,
    error_xml,
    log_xml,
    node_xml,
    object_list_xml,
)
from adapter.config.crontab import cron_trigger
from adapter.models import SyncRecord
from tests.support.d1schemas import pyxb_exception, pyxb_parse, validate_error, validate_types

T0 = datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)


def node(schedule: Schedule | None = None) -> NodeInfo:
    return NodeInfo(
        id="urn:node:EXAMPLE",
        name="Example & <Co>",
        description="",
        contact_subject="http://orcid.org/0000-0002-1825-0097",
        schedule=schedule or from_interval(15),
    )


def record(pid: str, minutes: int = 0) -> SyncRecord:
    return SyncRecord(
        pid=pid,
        series_id="doi:10.1234/x",
        node_id="urn:node:EXAMPLE",
        format_id="science-on-schema.org/Dataset;ld+json",
        checksum_algorithm="MD5",
        checksum="0e25cf59d7bd4d57154cc83e0aa32b34",
        size=11048,
        source_url="https://repo.example/x",
        date_uploaded=T0,
        date_modified=T0 + timedelta(minutes=minutes),
    )


# -- documents -------------------------------------------------------------------------


@pytest.mark.parametrize("api", ["v1", "v2"])
def test_node_document_validates_and_parses(api: str) -> None:
    doc = node_xml(node(), "https://mn.example/mn", api)
    validate_types(doc)
    parsed = pyxb_parse(doc)
    assert parsed.identifier.value() == "urn:node:EXAMPLE"
    assert parsed.name == "Example & <Co>"
    assert parsed.description == "Example & <Co>"  # required: never empty
    assert parsed.baseURL == "https://mn.example/mn"
    assert parsed.subject[0].value() == "CN=urn:node:EXAMPLE,DC=dataone,DC=org"
    assert parsed.contactSubject[0].value() == "http://orcid.org/0000-0002-1825-0097"
    assert (parsed.state, parsed.type, bool(parsed.synchronize)) == ("up", "mn", True)
    available = {(s.name, s.version) for s in parsed.services.service if s.available}
    assert available == {(n, v) for n in ("MNCore", "MNRead") for v in ("v1", "v2")}
    unavailable = {s.name for s in parsed.services.service if not s.available}
    assert unavailable == {"MNAuthorization", "MNStorage", "MNReplication"}


def test_object_list_is_v1_with_slice_attributes() -> None:
    records = [record("sha256:aa", 0), record("doi:10.1/with/slash&amp", 1)]
    doc = object_list_xml(records, start=4, total=9)
    assert doc.startswith(b"<?xml") and b"http://ns.dataone.org/service/types/v1" in doc
    validate_types(doc)
    parsed = pyxb_parse(doc)
    assert (parsed.count, parsed.start, parsed.total) == (2, 4, 9)
    info = parsed.objectInfo[1]
    assert info.identifier.value() == "doi:10.1/with/slash&amp"
    assert info.checksum.algorithm == "MD5" and info.size == 11048
    assert info.dateSysMetadataModified == T0 + timedelta(minutes=1)
    validate_types(object_list_xml([], start=0, total=0))


def test_checksum_and_log_documents() -> None:
    validate_types(checksum_xml("SHA-256", "ab" * 32))
    assert pyxb_parse(checksum_xml("SHA-1", "cd" * 20)).algorithm == "SHA-1"
    empty = log_xml([], start=0, total=0)
    validate_types(empty)
    entry = LogEntry("1", "sha256:aa", "127.0.0.1", "d1", "public", "read", T0, "urn:node:X")
    full = log_xml([entry], start=0, total=1)
    validate_types(full)
    assert pyxb_parse(full).logEntry[0].dateLogged == T0


def test_dates_are_utc_with_milliseconds() -> None:
    assert d1_datetime(T0) == "2024-01-02T03:04:05.678+00:00"
    plus_two = T0.astimezone(timezone(timedelta(hours=2)))
    assert d1_datetime(plus_two) == "2024-01-02T03:04:05.678+00:00"
    assert d1_datetime(datetime(2024, 1, 2)) == "2024-01-02T00:00:00.000+00:00"


# -- exceptions ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "name"),
    [(m, n) for m, codes in DETAIL_CODES.items() for n in codes],
)
def test_every_exception_validates_and_round_trips_through_d1_common(
    method: str, name: str
) -> None:
    error = D1Error(name, "what went wrong", method, identifier="doi:10.1/x y")
    doc = error_xml(error, "urn:node:EXAMPLE")
    validate_error(doc)
    parsed = pyxb_exception(doc)
    assert type(parsed).__name__ == name
    assert parsed.errorCode == STATUS[name]
    assert parsed.detailCode == DETAIL_CODES[method][name]
    assert (parsed.identifier, parsed.nodeId) == ("doi:10.1/x y", "urn:node:EXAMPLE")
    from_headers = d1_exceptions.deserialize_from_headers(
        dict(error_headers(error, "urn:node:EXAMPLE"))
    )
    assert (from_headers.errorCode, from_headers.detailCode) == (STATUS[name], parsed.detailCode)


def test_detail_codes_from_the_api_tables() -> None:
    assert not_found("get", "x").detail_code == "1020"
    assert not_found("getSystemMetadata", "x").detail_code == "1060"
    assert not_found("describe", "x").detail_code == "1380"
    assert not_found("getChecksum", "x").detail_code == "1420"
    assert invalid_request("listObjects", "bad").detail_code == "1540"
    assert invalid_request("getChecksum", "bad").detail_code == "1402"
    assert invalid_request("getLogRecords", "bad").detail_code == "1480"
    assert D1Error("NotImplemented", "no", "").detail_code == "0"


def test_error_text_that_xml_or_headers_cannot_carry_is_cleaned() -> None:
    error = D1Error("NotFound", "line one\nline\ttwo \x00é", "get", identifier="a\x01b")
    doc = error_xml(error, None)
    validate_error(doc)
    assert pyxb_exception(doc).identifier == "ab"
    headers = dict(error_headers(error, None))
    assert headers["DataONE-Exception-Description"] == "line one line two \\x00\\xe9"
    assert all(value.isascii() and "\n" not in value for value in headers.values())


# -- parameters ------------------------------------------------------------------------

UTC_MIDNIGHT = datetime(2024, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-01-01", UTC_MIDNIGHT),
        ("2024-01-01T00:00:00", UTC_MIDNIGHT),
        ("2024-01-01T00:00:00Z", UTC_MIDNIGHT),
        ("2024-01-01T00:00:00.000Z", UTC_MIDNIGHT),
        ("2024-01-01T00:00:00.001+00:00", UTC_MIDNIGHT + timedelta(milliseconds=1)),
        ("2024-01-01T00:00:00.001 00:00", UTC_MIDNIGHT + timedelta(milliseconds=1)),  # raw +
        ("2024-01-01T00:00:00.123456+00:00", UTC_MIDNIGHT + timedelta(microseconds=123456)),
        ("2024-01-01T02:00:00+02:00", UTC_MIDNIGHT),
        ("2023-12-31T19:00:00-0500", UTC_MIDNIGHT),
        ("2024-01-01T00:00", UTC_MIDNIGHT),
        ("2024-01-01 00:00:00", UTC_MIDNIGHT),
    ],
)
def test_dates_in_every_form_clients_send(text: str, expected: datetime) -> None:
    assert parse_date(text, "fromDate", "listObjects") == expected


@pytest.mark.parametrize(
    "text",
    [
        "yesterday",
        "2024-13-01",
        "2024-02-30",
        "2024-01-01T25:00",
        "2024-01-01T00:00+24:00",
        "1" * 100,
        "2024-01-01T00:00:00.000+00:00x",
        "0001-01-01T00:00:00+01:00",  # before the first UTC datetime
        "9999-12-31T23:59:59-01:00",  # after the last
        "\u0662\u0660\u0662\u0664-01-01",  # Arabic-Indic digits are not a date here
    ],
)
def test_bad_dates_are_invalid_requests(text: str) -> None:
    with pytest.raises(D1Error) as caught:
        parse_date(text, "fromDate", "listObjects")
    assert (caught.value.name, caught.value.detail_code) == ("InvalidRequest", "1540")
    assert "fromDate" in caught.value.description


@given(st.datetimes(timezones=st.just(UTC)))
def test_a_date_written_by_dataone_reads_back(moment: datetime) -> None:
    moment = moment.replace(microsecond=moment.microsecond // 1000 * 1000)
    text = d1_datetime(moment)
    assert parse_date(text, "fromDate", "listObjects") == moment
    assert parse_date(text.replace("+", " "), "fromDate", "listObjects") == moment


def test_counts() -> None:
    assert parse_count(None, "count", "listObjects", 100, 1000) == 100
    assert parse_count("0", "count", "listObjects", 100, 1000) == 0
    assert parse_count("999999", "count", "listObjects", 100, 1000) == 1000
    for bad in ("-1", "1.5", "ten", "\uff11", "9" * 40):
        with pytest.raises(D1Error):
            parse_count(bad, "count", "listObjects", 100, 1000)


def test_booleans() -> None:
    assert parse_bool("true", "replicaStatus", "listObjects") is True
    assert parse_bool("False", "replicaStatus", "listObjects") is False
    assert parse_bool(None, "replicaStatus", "listObjects") is None
    with pytest.raises(D1Error):
        parse_bool("yes", "replicaStatus", "listObjects")


def test_query_keeps_plus_and_refuses_repeats() -> None:
    q = parse_query("identifier=doi%3A10.1%2Fa+b&fromDate=2024-01-01T00:00:00+00:00", "m")
    assert q.get("identifier") == "doi:10.1/a+b"
    assert q.get("fromDate") == "2024-01-01T00:00:00+00:00"
    with pytest.raises(D1Error):
        parse_query("count=1&count=2", "listObjects")
    with pytest.raises(D1Error):
        parse_query("identifier=%FF", "listObjects")


@pytest.mark.parametrize(
    ("raw", "pid"),
    [
        ("10.1000%2F182", "10.1000/182"),
        (
            "http:%2F%2Fexample.com%2Fdata%2Fmydata%3Frow=24",
            "http://example.com/data/mydata?row=24",
        ),
        ("a+b", "a+b"),
        ("a%2Bb", "a+b"),
        ("caf%C3%A9", "café"),
        ("doi:10.1/x/y", "doi:10.1/x/y"),
    ],
)
def test_pids_decode_as_dataone_clients_encode(raw: str, pid: str) -> None:
    assert decode_pid(raw, "get") == pid


@pytest.mark.parametrize("raw", ["a%20b", "%FF", "", "%0A", "x" * 801])
def test_impossible_pids_are_not_found(raw: str) -> None:
    with pytest.raises(D1Error) as caught:
        decode_pid(raw, "getSystemMetadata")
    assert (caught.value.status, caught.value.detail_code) == (404, "1060")


# str.isprintable, and so valid_identifier, refuses the categories C (controls, format,
# surrogates, private use, unassigned) and Z (separators, the space included): identifiers are
# drawn from the rest, not filtered out of any text, of which more than half the draws were
# thrown away (a long text almost always holds an unassigned code point).
IDENTIFIER_CHARS = st.characters(exclude_categories=("C", "Z"))


@given(st.text(IDENTIFIER_CHARS, min_size=1, max_size=200).filter(valid_identifier))
def test_any_identifier_survives_the_client_encoding(pid: str) -> None:
    assert decode_pid(quote(pid, safe=""), "get") == pid


@pytest.mark.parametrize(
    ("spelling", "label"),
    [
        ("MD5", "MD5"),
        ("md5", "MD5"),
        ("SHA-1", "SHA-1"),
        ("SHA1", "SHA-1"),
        ("sha1", "SHA-1"),
        ("SHA-256", "SHA-256"),
        ("SHA256", "SHA-256"),
        ("sha-256", "SHA-256"),
        ("sha512", "SHA-512"),
    ],
)
def test_checksum_algorithm_spellings(spelling: str, label: str) -> None:
    assert parse_algorithm(spelling, "getChecksum") == label


def test_unsupported_algorithm_lists_the_supported_ones() -> None:
    with pytest.raises(D1Error) as caught:
        parse_algorithm("CRC32", "getChecksum")
    assert caught.value.detail_code == "1402"
    assert "MD5" in caught.value.description and "SHA-256" in caught.value.description


# -- schedule --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cron", "expected"),
    [
        ("*/15 * * * *", Schedule(min="0/15")),
        ("0 3 * * *", Schedule(min="0", hour="3")),
        ("30 2 * * 1-5", Schedule(min="30", hour="2", mday="?", wday="2-6")),
        ("0 0 * * 0,7", Schedule(min="0", hour="0", mday="?", wday="1,1")),
        ("0 0 1 */2 *", Schedule(min="0", hour="0", mday="1", mon="1/2")),
        ("0 0 * * MON", Schedule(min="0", hour="0", mday="?", wday="MON")),
        ("@daily", Schedule(min="0", hour="0")),
    ],
)
def test_cron_becomes_quartz(cron: str, expected: Schedule) -> None:
    assert from_cron(cron) == expected


@pytest.mark.parametrize(
    ("minutes", "expected"),
    [
        (15, Schedule(min="0/15")),
        (60, Schedule(min="0", hour="0/1")),
        (360, Schedule(min="0", hour="0/6")),
        (1440, Schedule(min="0", hour="0")),
        (2880, Schedule(min="0", hour="0", mday="1/2")),
        (0.2, Schedule(min="0/1")),
    ],
)
def test_interval_becomes_quartz(minutes: float, expected: Schedule) -> None:
    assert from_interval(minutes) == expected


@pytest.mark.parametrize(
    "schedule",
    [
        from_settings("*/5 * * * *", None),
        from_settings(None, 90),
        from_settings(None, None),
        from_cron("0 0 * * 0"),
        from_cron("not a cron at all !"),
    ],
)
def test_every_schedule_validates_in_the_node_document(schedule: Schedule) -> None:
    validate_types(node_xml(node(schedule), "http://127.0.0.1/x"))


# -- the published harvest schedule: UTC, after the sync ----------------------------------


def quartz_matches(schedule: Schedule, moment: datetime) -> bool:
    """Whether a Quartz schedule (numeric fields) fires at this UTC minute; a test's own reader."""

    def field(text: str, value: int, low: int, high: int) -> bool:
        for term in text.split(","):
            if term in ("*", "?"):
                return True
            base, _, step = term.partition("/")
            first, _, last = base.partition("-")
            begin = int(first)
            end = int(last) if last else (high if step else begin)
            if begin <= value <= end and (value - begin) % int(step or 1) == 0:
                return True
        return False

    weekday = (moment.weekday() + 1) % 7 + 1  # Quartz: Sunday 1 ... Saturday 7
    return (
        field(schedule.min, moment.minute, 0, 59)
        and field(schedule.hour, moment.hour, 0, 23)
        and field(schedule.mday, moment.day, 1, 31)
        and field(schedule.mon, moment.month, 1, 12)
        and field(schedule.wday, weekday, 1, 7)
    )


@pytest.mark.parametrize(
    ("cron", "zone", "delay"),
    [
        ("30 2 * * 1", "Europe/Berlin", 0),
        ("30 0 * * 1", "Europe/Berlin", 0),
        ("0 */5 * * *", "Asia/Kolkata", 0),
        ("*/15 * * * *", "Asia/Kolkata", 10),
        ("0 3 1 * *", "America/New_York", 0),
        ("45 23 * * 0,3", "Pacific/Auckland", 30),
        ("0 22 * * 1-5", "America/Los_Angeles", 90),
        ("0 0 * * MON", "Asia/Tokyo", 0),
        ("20 4 * * *", "UTC", 0),
    ],
)
@pytest.mark.parametrize("month", [1, 7])  # winter and summer time
def test_published_schedule_covers_every_sync_in_utc(
    cron: str, zone: str, delay: int, month: int
) -> None:
    """Every time the sync starts, plus the delay, is a time the published UTC schedule names."""
    start = datetime(2026, month, 1, tzinfo=UTC)
    published = harvest_schedule(cron, None, zone, start, delay)
    validate_types(node_xml(node(published), "http://127.0.0.1/x"))
    trigger = cron_trigger(cron, zone)
    fire = trigger.get_next_fire_time(None, start)
    seen = 0
    while fire is not None and fire < start + timedelta(days=21):
        harvest = fire.astimezone(UTC) + timedelta(minutes=delay)
        assert quartz_matches(published, harvest), (harvest, published)
        seen += 1
        fire = trigger.get_next_fire_time(fire, fire + timedelta(minutes=1))
    assert seen > 0


def test_published_schedule_is_not_wider_than_needed_for_whole_hour_zones() -> None:
    """Monday 02:30 in Berlin's winter (+01:00) is Monday 01:30 UTC and nothing else."""
    published = harvest_schedule(
        "30 2 * * 1", None, "Europe/Berlin", datetime(2026, 1, 5, tzinfo=UTC)
    )
    assert (published.min, published.hour, published.mday, published.wday) == ("30", "1", "?", "2")
    summer = harvest_schedule("30 2 * * 1", None, "Europe/Berlin", datetime(2026, 7, 6, tzinfo=UTC))
    assert (summer.min, summer.hour) == ("30", "0")
    assert harvest_schedule(None, 15, "Europe/Berlin", datetime(2026, 7, 6, tzinfo=UTC)) == (
        from_interval(15)
    )
