"""Sync record rules as pure functions: canonical bytes, PIDs, checksums, version decisions."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapter.dataone import records as r

DATASET = {
    "@context": {"@vocab": "http://schema.org/"},
    "@type": "Dataset",
    "name": "Ocean temperature, 2019",
    "identifier": "doi:10.5072/demo.ocean.2019",
    "description": "Profiles \u2013 0 to 500 m",
    "size": 1.0,
}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


def test_canonical_bytes_do_not_depend_on_key_order_or_spacing() -> None:
    shuffled = json.loads(json.dumps(dict(reversed(list(DATASET.items())))))
    assert r.canonical_bytes(DATASET) == r.canonical_bytes(shuffled)
    text = r.canonical_bytes(DATASET).decode("utf-8")
    assert " " not in text.replace("Ocean temperature, 2019", "").replace(
        "Profiles \u2013 0 to 500 m", ""
    )
    assert '"size":1' in text  # RFC 8785 number form
    assert "\u2013" in text  # UTF-8, not \\u escapes


@given(json_values)
def test_canonical_bytes_round_trip_to_the_same_content(value: object) -> None:
    body = r.canonical_bytes(value)
    assert r.canonical_bytes(json.loads(body)) == body


def test_pid_is_sha256_of_the_object_bytes() -> None:
    body = r.canonical_bytes(DATASET)
    assert r.pid_for(body) == "sha256:" + hashlib.sha256(body).hexdigest()
    assert r.dataset_candidate(DATASET, "10.5072/x", "https://r/1").pid == r.pid_for(body)


def test_checksum_is_lowercase_hex_for_dataone_labels() -> None:
    body = b"abc"
    assert r.checksum(body, "MD5") == hashlib.md5(body).hexdigest()
    assert r.checksum(body, "SHA-1") == hashlib.sha1(body).hexdigest()
    assert r.checksum(body, "MD5") == r.checksum(body, "MD5").lower()
    with pytest.raises(ValueError, match="unsupported"):
        r.checksum(body, "CRC32")


def test_volatile_properties_change_the_bytes_but_not_the_content_key() -> None:
    a = dict(
        DATASET, interactionStatistic={"userInteractionCount": 10}, sdDatePublished="2024-01-01"
    )
    b = dict(a, interactionStatistic={"userInteractionCount": 11}, sdDatePublished="2024-02-02")
    volatile = ("interactionStatistic", "schema:sdDatePublished")
    assert r.canonical_bytes(a) != r.canonical_bytes(b)
    assert r.content_key(a, volatile) == r.content_key(b, volatile)
    assert r.content_key(a) != r.content_key(b)  # without the setting, they differ
    nested_a = dict(
        DATASET, distribution=[{"contentUrl": "x", "http://schema.org/dateCreated": "1"}]
    )
    nested_b = dict(
        DATASET, distribution=[{"contentUrl": "x", "http://schema.org/dateCreated": "2"}]
    )
    assert r.content_key(nested_a, ("dateCreated",)) == r.content_key(nested_b, ("dateCreated",))
    changed = dict(a, name="Ocean temperature, 2019 (v2)")
    assert r.content_key(changed, volatile) != r.content_key(a, volatile)


def test_series_ids_never_look_like_pids() -> None:
    cand = r.dataset_candidate(DATASET, "10.5072/demo.ocean.2019", "https://r/1")
    assert cand.series_id == "doi:10.5072/demo.ocean.2019"
    meta = r.metadata_candidate(
        b"<x/>",
        "http://www.isotc211.org/2005/gmd",
        cand.series_id,
        "https://r/1",
        "https://r/1.xml",
    )
    assert meta.series_id == "doi:10.5072/demo.ocean.2019#iso19139"
    assert meta.describes_series == cand.series_id
    other = r.metadata_series_id(cand.series_id, "urn:unknown:format")
    assert other.startswith(cand.series_id + "#") and other != meta.series_id
    for sid in (cand.series_id, meta.series_id, other):
        assert not sid.startswith(r.PID_PREFIX)
        assert sid not in (cand.pid, meta.pid)


def test_decide_covers_the_version_chain() -> None:
    first = r.dataset_candidate(DATASET, "10.5072/x", "https://r/1")
    changed = r.dataset_candidate(dict(DATASET, name="new"), "10.5072/x", "https://r/1")
    elsewhere = r.dataset_candidate(DATASET, "10.5072/x", "https://r/2")
    state = r.SeriesState(first.series_id, "https://r/1", first.pid, first.content_key)
    assert r.decide(None, first) is r.Decision.CREATE
    assert r.decide(state, first) is r.Decision.UNCHANGED
    assert r.decide(state, changed) is r.Decision.NEW_VERSION
    assert r.decide(state, elsewhere) is r.Decision.FOREIGN
    archived = replace(state, head_archived=True)
    assert r.decide(archived, first) is r.Decision.RESTORE  # same bytes: a new, live head
    assert r.decide(archived, elsewhere) is r.Decision.MOVE
    assert r.decide(replace(state, owner_left=True), elsewhere) is r.Decision.MOVE
    counted = replace(state, head_pid=first.pid + ".3", content_key="other")
    assert r.decide(counted, first) is r.Decision.UNCHANGED  # the head holds these bytes


def test_pids_are_the_content_checksum_plus_a_counter() -> None:
    body = b'{"a":1}'
    hexdigest = hashlib.sha256(body).hexdigest()
    assert r.pid_for(body, 1) == "sha256:" + hexdigest
    assert r.pid_for(body, 2) == f"sha256:{hexdigest}.2"
    assert r.content_pid(r.pid_for(body, 7)) == r.pid_for(body) == r.content_pid(r.pid_for(body))
    with pytest.raises(ValueError, match="counter 0"):
        r.pid_for(body, 0)


def test_new_record_sets_dates_and_immutable_fields_from_the_candidate() -> None:
    cand = r.dataset_candidate(DATASET, "10.5072/x", "https://r/1")
    stamp = datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
    rec = r.new_record(
        cand,
        node_id="urn:node:T",
        stamp=stamp,
        algorithm="SHA-1",
        submitter="s",
        rights_holder="h",
        obsoletes="sha256:00",
    )
    assert (rec.date_uploaded, rec.date_modified) == (stamp, stamp)
    assert rec.size == len(cand.object_bytes)
    assert rec.checksum == hashlib.sha1(cand.object_bytes).hexdigest()
    assert rec.checksum_algorithm == "SHA-1"
    assert rec.format_id == "science-on-schema.org/Dataset;ld+json"
    assert rec.obsoletes == "sha256:00" and rec.obsoleted_by is None and not rec.archived


def test_numbers_beyond_i_json_do_not_break_canonical_bytes() -> None:
    doc = {
        "big": 2**60,
        "huge": 10**400,
        "nan": float("nan"),
        "inf": float("-inf"),
        "ok": 2**53 - 1,
    }
    body = r.canonical_bytes(doc)
    back = json.loads(body)
    assert float(back.pop("big")) == float(2**60)  # the double a JSON reader sees
    assert back == {"huge": None, "nan": None, "inf": None, "ok": 2**53 - 1}
    assert r.canonical_bytes(doc) == body
