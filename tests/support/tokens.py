"""DataONE-style tokens for tests: a CN of our own, with its key pair and self-signed certificate.

A DataONE token is a JWT signed RS256 by the CN; the node verifies it with the
CN's certificate. `TestCN` writes such a certificate to a file (what the
operator configures as `auth.cn_certificate`) and signs tokens with its key;
`forger` is another key pair, for tokens the node must refuse.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

CN_SUBJECT = "CN=urn:node:CNTEST,DC=dataone,DC=org"
MN_SUBJECT = "CN=urn:node:REPLICATOR,DC=dataone,DC=org"
BLOCKED_MN_SUBJECT = "CN=urn:node:BLOCKED,DC=dataone,DC=org"
CURATOR = "CN=curators,DC=dataone,DC=org"
OWNER = "http://orcid.org/0000-0002-1825-0097"
STRANGER = "http://orcid.org/0000-0001-5109-3700"


def _key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@dataclass
class TestCN:
    """A coordinating node that signs tokens; `certificate` is its PEM file."""

    key: rsa.RSAPrivateKey
    certificate: Path
    public_key_file: Path

    __test__ = False  # not a pytest class

    @classmethod
    def create(cls, folder: Path) -> TestCN:
        key = _key()
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "cn.test.invalid")])
        now = datetime.now(UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(days=1))
            .not_valid_after(now + timedelta(days=30))
            .sign(key, hashes.SHA256())
        )
        folder.mkdir(parents=True, exist_ok=True)
        certificate = folder / "cn.pem"
        certificate.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        public = folder / "cn-public.pem"
        public.write_bytes(
            key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )
        return cls(key, certificate, public)

    def token(self, subject: str, **claims: Any) -> str:
        return sign(self.key, subject, **claims)


@cache
def forger() -> rsa.RSAPrivateKey:
    """A key the node does not know: its tokens look right and must be refused. One a process:
    no node ever learns it, and a 2048-bit key costs 30-140 ms of CPU to make (9 a module)."""
    return _key()


def sign(
    key: rsa.RSAPrivateKey,
    subject: str,
    *,
    lifetime: int = 3600,
    issued: float | None = None,
    **extra: Any,
) -> str:
    """A token as DataONE's CN issues it (sub and userId, iat, exp, ttl, ...)."""
    now = time.time() if issued is None else issued
    claims = {
        "sub": subject,
        "userId": subject,
        "fullName": "Test Person",
        "consumerKey": "theconsumerkey",
        "issuedAt": datetime.fromtimestamp(now, UTC).isoformat(),
        "iat": int(now),
        "exp": int(now + lifetime),
        "ttl": lifetime,
        **extra,
    }
    claims = {name: value for name, value in claims.items() if value is not None}
    return jwt.encode(claims, key, algorithm="RS256")


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
