"""Delivering the notify outbox: each pending notification POSTed to its inbox until the
receiver takes it (201 or 202), retried with backoff, recorded `failed` after `max_attempts`.

The outbox is in the store, so what a stopped server had not delivered is sent by the next
one. Sending goes through the address policy (adapter.http.post): an inbox the operator
configured (a node's `notify.origins` and `report_to`) may be on a private network, any other
must resolve to public addresses. Time comes from a `Clock` (adapter.http.clock), so the
backoff is tested on virtual time.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from adapter import USER_AGENT
from adapter.config.settings import NodeSettings
from adapter.http.addresses import AddressPolicy
from adapter.http.clock import SYSTEM_CLOCK, Clock
from adapter.http.post import PostFailed, post_json
from adapter.notify.trust import trusted_urls
from adapter.store import notify as kept
from adapter.store.db import Store
from adapter.store.notify import Sent

log = logging.getLogger(__name__)

TAKEN = (201, 202)  # LDN: the receiver created (201) or accepted (202) the notification


@dataclass(frozen=True, slots=True)
class Backoff:
    """When to try again: `first` seconds after the first failure, doubling up to `most`;
    `max_attempts` attempts in all (the default spans about 15 hours)."""

    first: float = 30.0
    most: float = 6 * 3600.0
    max_attempts: int = 12

    def delay(self, attempts: int) -> float:
        """Seconds to wait after the `attempts`-th failed attempt."""
        return float(min(self.most, self.first * 2 ** max(0, attempts - 1)))


class Sender:
    """Delivers due notifications (`deliver_due`), one POST each, on `clock`'s time."""

    def __init__(
        self,
        store: Store,
        nodes: Sequence[NodeSettings],
        *,
        clock: Clock = SYSTEM_CLOCK,
        backoff: Backoff = Backoff(),
        timeout: float = 20.0,
        user_agent: str = USER_AGENT,
    ) -> None:
        self.store = store
        self.clock = clock
        self.backoff = backoff
        self.timeout = timeout
        self.user_agent = user_agent
        named = [url for node in nodes for url in trusted_urls(node)]
        self.policy = AddressPolicy(named)

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.clock.time(), UTC)

    def deliver_due(self, batch: int = 50) -> int:
        """Try every notification whose time has come; how many were delivered."""
        delivered = 0
        while True:
            due = kept.due_outgoing(self.store, self.now(), batch)
            for item in due:
                delivered += self.deliver(item)
            if len(due) < batch:
                return delivered

    def deliver(self, item: Sent) -> bool:
        """One attempt at `item`; whether the receiver took it."""
        body = json.dumps(item.body, ensure_ascii=False).encode()
        status: int | None = None
        try:
            status = post_json(
                item.target_inbox,
                body,
                policy=self.policy,
                timeout=self.timeout,
                user_agent=self.user_agent,
            )
            error = None if status in TAKEN else f"HTTP {status}"
        except PostFailed as exc:
            error = str(exc)
        now, attempts = self.now(), item.attempts + 1
        if error is None:
            kept.record_attempt(self.store, item.id, state="delivered", now=now, http_status=status)
            log.info("notify: %s %d delivered to %s", item.kind, item.id, item.target_inbox)
            return True
        if attempts >= self.backoff.max_attempts:
            kept.record_attempt(
                self.store, item.id, state="failed", now=now, http_status=status, error=error
            )
            log.warning(
                "notify: %s %d to %s failed after %d attempts: %s",
                item.kind, item.id, item.target_inbox, attempts, error,
            )  # fmt: skip
            return False
        retry_at = now + timedelta(seconds=self.backoff.delay(attempts))
        kept.record_attempt(
            self.store, item.id, state=kept.PENDING, now=now, http_status=status, error=error,
            retry_at=retry_at,
        )  # fmt: skip
        log.info("notify: %s %d to %s: %s; again at %s",
                 item.kind, item.id, item.target_inbox, error, retry_at.isoformat())  # fmt: skip
        return False

    def seconds_to_next(self) -> float | None:
        """Until the soonest pending notification is due (None: none pending)."""
        soonest = kept.next_attempt(self.store)
        if soonest is None:
            return None
        return max(0.0, (soonest - self.now()).total_seconds())
