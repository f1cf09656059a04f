"""Unsafe addresses: every spelling of a non-public address is refused unless trusted."""

from __future__ import annotations

import pytest

from adapter.http.addresses import AddressPolicy, UnsafeAddress, non_public_reason, origin

MAX = 2048

REFUSED = [
    "http://127.0.0.1/",
    "http://localhost/",
    "http://LOCALHOST:8080/",
    "http://2130706433/",  # 127.0.0.1 as one decimal number
    "http://0x7f.1/",  # hexadecimal, two parts
    "http://0x7f000001/",
    "http://017700000001/",  # octal
    "http://0177.0.0.1/",
    "http://127.1/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",  # IPv4-mapped IPv6
    "http://[::ffff:7f00:1]/",
    "http://[64:ff9b::7f00:1]/",  # NAT64 of 127.0.0.1
    "http://[2002:7f00:1::]/",  # 6to4 of 127.0.0.1
    "http://0.0.0.0/",
    "http://0/",
    "http://[::]/",
    "http://10.1.2.3/",
    "http://172.16.0.1/",
    "http://192.168.1.1/",
    "http://100.64.0.1/",  # carrier-grade NAT
    "http://169.254.169.254/latest/meta-data/",
    "http://169.254.170.2/v2/credentials",
    "http://100.100.100.200/latest/meta-data/",
    "http://[fd00:ec2::254]/latest/meta-data/",
    "http://[fe80::1]/",
    "http://224.0.0.1/",
    "http://[ff02::1]/",
    "http://240.0.0.1/",
    "http://public.example@127.0.0.1/",  # user-info disguise
    "http://127.0.0.1:80@public.example/",  # credentials in URL
    "http://\uff11\uff12\uff17.\uff10.\uff10.\uff11/",  # fullwidth digits, NFKC to 127.0.0.1
]


@pytest.mark.parametrize("url", REFUSED)
def test_non_public_spellings_are_refused(url: str) -> None:
    reason = AddressPolicy().refusal(url, MAX)
    assert reason is not None, url


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "gopher://127.0.0.1:6379/_FLUSHALL", "ftp://example.org/", "x"]
)
def test_only_http_and_https(url: str) -> None:
    assert AddressPolicy(allow_private=True).refusal(url, MAX) is not None


@pytest.mark.parametrize(
    "address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"]
)
def test_public_addresses_pass(address: str) -> None:
    assert non_public_reason(address) is None
    host = f"[{address}]" if ":" in address else address
    assert AddressPolicy().refusal(f"http://{host}/", MAX) is None


def test_reasons_say_what_kind_of_address() -> None:
    assert non_public_reason("169.254.169.254") == "is a cloud metadata address"
    assert non_public_reason("127.0.0.2") == "is a loopback address"
    assert non_public_reason("10.0.0.1") == "is a private address"
    assert "embeds 127.0.0.1" in (non_public_reason("::ffff:127.0.0.1") or "")


def test_trust_is_per_origin() -> None:
    policy = AddressPolicy(["http://127.0.0.1:8000/dataset/1"])
    assert policy.refusal("http://127.0.0.1:8000/linkset.json", MAX) is None
    assert policy.refusal("http://127.0.0.1:9999/", MAX) is not None  # other port
    assert policy.refusal("https://127.0.0.1:8000/", MAX) is not None  # other scheme
    assert policy.refusal("http://localhost:8000/", MAX) is not None  # other host name
    policy.trust("http://localhost:8000/")
    assert policy.refusal("http://localhost:8000/x", MAX) is None


def test_trailing_dot_is_not_the_trusted_origin() -> None:
    policy = AddressPolicy(["http://127.0.0.1:8000/"])
    assert not policy.is_trusted("http://127.0.0.1.:8000/")
    with pytest.raises((UnsafeAddress, OSError)):
        policy.addresses_for("http", "127.0.0.1.", 8000)


def test_mixed_answers_are_refused_whole() -> None:
    # a name that resolves to a public and a private address could connect to either
    policy = AddressPolicy()
    with pytest.raises(UnsafeAddress) as info:
        policy.addresses_for("http", "localhost", 80)
    assert "loopback" in str(info.value)


def test_origin_normalises_default_ports_and_case() -> None:
    assert origin("HTTP://Example.ORG/x") == "http://example.org:80"
    assert origin("https://example.org:443/") == "https://example.org:443"
    assert origin("http://[::1]:8080/") == "http://[::1]:8080"
    assert origin("http://example.org:bad/") == "http://example.org:80"


def test_long_urls_name_the_limit() -> None:
    reason = AddressPolicy(allow_private=True).refusal("http://a.example/" + "x" * 3000, MAX)
    assert reason is not None and "max_url_length" in reason
