"""The caps themselves: documented, validated, settable, and the capped decompressor."""

from __future__ import annotations

import gzip
import zlib
from dataclasses import fields

import pytest

from adapter.errors import ConfigError
from adapter.http.decompress import (
    CappedDecoder,
    DecompressionFailed,
    DecompressionLimit,
    gunzip_capped,
)
from adapter.http.politeness import backoff_delay, retry_after_seconds
from adapter.limits import Limits, documented, parse_overrides


def test_every_limit_is_documented_with_a_unit() -> None:
    names = [f.name for f in fields(Limits)]
    table = documented()
    assert [row[0] for row in table] == names
    assert all(row[2] and len(row[3]) > 10 for row in table)


def test_overrides_from_the_environment() -> None:
    limits = Limits.from_env({"ADAPTER_LIMITS": "total_timeout=3, max_links=7"})
    assert limits.total_timeout == 3.0 and limits.max_links == 7
    assert isinstance(limits.max_links, int)
    assert Limits.from_env({}) == Limits()


@pytest.mark.parametrize(
    "text", ["total_timeout", "nope=3", "max_links=-1", "max_links=1.5", "total_timeout=0"]
)
def test_bad_overrides_are_configuration_errors(text: str) -> None:
    with pytest.raises(ConfigError) as info:
        Limits.from_env({"ADAPTER_LIMITS": text})
    assert "ADAPTER_LIMITS" in str(info.value)


def test_limits_reject_nonsense_values() -> None:
    with pytest.raises(ValueError):
        Limits(max_page_bytes=0)
    with pytest.raises(ValueError):
        Limits().with_overrides({"max_pages": 3})
    assert Limits(max_retries=0).max_retries == 0  # 0 turns retries off
    assert parse_overrides("max_redirects=5") == {"max_redirects": 5}


def test_capped_gunzip_of_a_bomb_stops_at_the_cap() -> None:
    bomb = gzip.compress(b"\0" * 50_000_000)
    assert len(bomb) < 100_000
    with pytest.raises(DecompressionLimit):
        gunzip_capped(bomb, 1_000_000)


def test_concatenated_members_and_zero_padding() -> None:
    data = gzip.compress(b"<urlset>") + gzip.compress(b"</urlset>") + b"\0" * 512
    assert gunzip_capped(data, 100) == b"<urlset></urlset>"


def test_truncated_and_broken_gzip() -> None:
    whole = gzip.compress(b"x" * 1000)
    with pytest.raises(DecompressionFailed):
        gunzip_capped(whole[:-20], 10_000)
    with pytest.raises(DecompressionFailed):
        gunzip_capped(b"\x1f\x8bnot really gzip", 10_000)


def test_deflate_both_wrapped_and_raw() -> None:
    wrapped = zlib.compress(b"hello")
    raw = zlib.compressobj(wbits=-15)
    raw_bytes = raw.compress(b"hello") + raw.flush()
    for data in (wrapped, raw_bytes):
        decoder = CappedDecoder("deflate", 100)
        assert decoder.feed(data) == b"hello"
        decoder.finish()


def test_incremental_feeding_byte_by_byte() -> None:
    data = gzip.compress(b"abc" * 100) + gzip.compress(b"def")
    decoder = CappedDecoder("gzip", 1000)
    out = b"".join(decoder.feed(data[i : i + 1]) for i in range(len(data)))
    decoder.finish()
    assert out == b"abc" * 100 + b"def"


def test_retry_after_forms() -> None:
    assert retry_after_seconds("120") == 120.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412490.0) == 0.0
    for bad in ("", None, "soon", "-5", "1.5", "Wed, 99 Foo"):
        assert retry_after_seconds(bad) is None


def test_backoff_grows_with_jitter_in_bounds() -> None:
    for attempt in range(5):
        for _ in range(50):
            delay = backoff_delay(1.0, attempt)
            assert 0.5 * 2**attempt <= delay < 1.5 * 2**attempt
