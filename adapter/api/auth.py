"""Who is calling, and what the node's access policy lets them do.

DataONE authenticates a caller with a token: a JWT the coordinating node signs
(RS256) with its server certificate's key, sent as `Authorization: Bearer`.
The operator configures that certificate (`auth.cn_certificate`); a token it
does not verify, an expired one (`exp`), one issued in the future (`iat`), or
one naming no subject (`sub`, `userId`) is InvalidToken. Without a configured
certificate no token can be verified, so tokens are ignored and every caller
is anonymous: DataONE's web client sends its user's token to every node, and a
public object must stay readable to them.

A caller is the set of subjects it acts as: anonymous callers are `public`;
a token holder is also its `sub` and `userId` and `authenticatedUser`. Only
these direct subjects count: groups and equivalent identities would need the
CN's `getSubjectInfo`, which a slender node does not ask.

The access policy is the node's (`dataone.access_policy`), the same for every
object it serves: read, write and changePermission each let a subject read,
as does the object's rightsHolder. The CN subjects (`auth.cn_subjects`) read
everything, since the CN must harvest what it indexes; `getReplica` is for the
CN and the member nodes in `auth.replication_subjects`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt

from adapter.api.exceptions import D1Error
from adapter.config.settings import AuthSettings, NodeSettings
from adapter.config.types import read_public_key

PUBLIC = "public"  # DataONE's subject of every caller, with a token or without
AUTHENTICATED = "authenticatedUser"  # every caller with a verified token
MAX_TOKEN_CHARS = 16 * 1024  # a DataONE token is about 1 KB
_NODE_SUBJECT = re.compile(r"^CN=(urn:node:[^,]+),DC=dataone,DC=org$")


@dataclass(frozen=True, slots=True)
class Caller:
    """The subjects a request acts as; `subject` is the one its log entry names."""

    subject: str = PUBLIC
    subjects: frozenset[str] = frozenset({PUBLIC})

    @property
    def anonymous(self) -> bool:
        return self.subject == PUBLIC

    @property
    def node_id(self) -> str | None:
        """The node a node subject (`CN=urn:node:X,DC=dataone,DC=org`) names."""
        match = _NODE_SUBJECT.match(self.subject)
        return match.group(1) if match else None


ANONYMOUS = Caller()


class TokenError(Exception):
    """A token was sent but cannot be trusted; the message says why, for the caller."""


@dataclass(frozen=True, slots=True)
class TokenVerifier:
    """Verifies DataONE tokens with the CN's public key."""

    key: Any  # cryptography's RSAPublicKey
    leeway_seconds: int = 60

    @classmethod
    def from_file(cls, path: str | Path, leeway_seconds: int = 60) -> TokenVerifier:
        return cls(read_public_key(path), leeway_seconds)

    def verify(self, token: str) -> Caller:
        if len(token) > MAX_TOKEN_CHARS:
            raise TokenError(f"the token is longer than {MAX_TOKEN_CHARS} characters")
        try:
            claims = jwt.decode(
                token,
                self.key,
                algorithms=["RS256"],
                leeway=self.leeway_seconds,
                options={"require": ["exp", "iat"], "verify_aud": False},
            )
        except jwt.ExpiredSignatureError:
            raise TokenError("the token has expired") from None
        except jwt.InvalidSignatureError:
            raise TokenError("the token is not signed by this node's coordinating node") from None
        except jwt.ImmatureSignatureError:
            raise TokenError("the token is issued in the future (iat or nbf)") from None
        except jwt.MissingRequiredClaimError as exc:
            raise TokenError(f"the token has no {exc.claim} claim") from None
        except jwt.InvalidAlgorithmError:
            raise TokenError("the token is not signed RS256, as DataONE's tokens are") from None
        except jwt.InvalidTokenError as exc:
            raise TokenError(f"the token cannot be read: {exc}") from None
        names = [
            value.strip()
            for value in (claims.get("sub"), claims.get("userId"))
            if isinstance(value, str) and value.strip()
        ]
        if not names:
            raise TokenError("the token names no subject (sub or userId)")
        return Caller(names[0], frozenset({*names, AUTHENTICATED, PUBLIC}))


@dataclass(frozen=True, slots=True)
class Authority:
    """The server's trust: who verifies tokens and which subjects are DataONE's nodes."""

    verifier: TokenVerifier | None = None
    cn_subjects: frozenset[str] = frozenset()
    replication_subjects: frozenset[str] = frozenset()

    @property
    def verifies(self) -> bool:
        return self.verifier is not None

    def caller(self, environ: dict[str, Any]) -> Caller:
        """The caller of a request; TokenError for a bearer token that fails verification."""
        token = bearer_token(environ)
        if token is None or self.verifier is None:
            return ANONYMOUS
        return self.verifier.verify(token)

    def is_cn(self, caller: Caller) -> bool:
        return not caller.anonymous and bool(caller.subjects & self.cn_subjects)

    def may_replicate_to(self, caller: Caller) -> bool:
        trusted = self.cn_subjects | self.replication_subjects
        return not caller.anonymous and bool(caller.subjects & trusted)


OPEN = Authority()  # no token verified: everyone is anonymous


def authority_from(settings: AuthSettings) -> Authority:
    """The configured trust (`auth:`); the certificate is read now, once."""
    verifier = None
    if settings.cn_certificate is not None:
        verifier = TokenVerifier.from_file(settings.cn_certificate, settings.leeway_seconds)
    return Authority(
        verifier, frozenset(settings.cn_subjects), frozenset(settings.replication_subjects)
    )


def node_access(settings: NodeSettings) -> NodeAccess:
    """A configured node's policy, as its system metadata writes it."""
    d1 = settings.dataone
    return NodeAccess.from_policy(
        ((rule.subject, rule.permissions) for rule in d1.access_policy),
        d1.rights_holder,
        d1.replication.allowed,
        d1.replication.blocked,
    )


def bearer_token(environ: dict[str, Any]) -> str | None:
    """The token of `Authorization: Bearer <token>` (scheme case-insensitive), if any."""
    header = str(environ.get("HTTP_AUTHORIZATION") or "")
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


@dataclass(frozen=True, slots=True)
class NodeAccess:
    """A node's access and replication policy, as its system metadata states it."""

    readers: frozenset[str] = frozenset({PUBLIC})  # subjects with read, write or changePermission
    rights_holder: str = ""
    replication_allowed: bool = False
    blocked_nodes: frozenset[str] = frozenset()  # blockedMemberNode: never given a replica

    @classmethod
    def from_policy(
        cls,
        rules: Iterable[tuple[str, Iterable[str]]],
        rights_holder: str,
        replication_allowed: bool,
        blocked_nodes: Iterable[str] = (),
    ) -> NodeAccess:
        """`rules` are (subject, permissions); every DataONE permission implies read."""
        readers = frozenset(subject for subject, permissions in rules if tuple(permissions))
        return cls(readers, rights_holder, replication_allowed, frozenset(blocked_nodes))

    @property
    def public_read(self) -> bool:
        return PUBLIC in self.readers

    def may_read(
        self, caller: Caller, authority: Authority, rights_holder: str | None = None
    ) -> bool:
        """Whether the caller reads an object held by `rights_holder` (default: the node's)."""
        owner = rights_holder or self.rights_holder
        if caller.subjects & self.readers or (owner and owner in caller.subjects):
            return True
        return authority.is_cn(caller)


PUBLIC_ACCESS = NodeAccess()  # public read, no replication


def caller_of(environ: dict[str, Any], authority: Authority, method: str) -> Caller:
    """The request's caller, or the method's InvalidToken."""
    try:
        return authority.caller(environ)
    except TokenError as exc:
        raise D1Error("InvalidToken", str(exc), method) from None


def not_authorized(method: str, description: str, identifier: str | None = None) -> D1Error:
    return D1Error("NotAuthorized", description, method, identifier)
