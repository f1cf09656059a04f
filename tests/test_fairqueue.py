"""adapter.fairqueue: keys served in turn, a retried item first in its key's turn."""

from __future__ import annotations

from adapter.fairqueue import FairQueue


def test_the_fair_queue_serves_keys_in_turn() -> None:
    waiting: FairQueue[str] = FairQueue()
    for i in range(4):
        waiting.put("busy", f"busy{i}")
    waiting.put("quiet", "quiet0")
    waiting.put("busy", "retry", front=True)  # a dead child's page goes first, in its turn
    taken = [waiting.take() for _ in range(6)]
    assert taken == ["retry", "quiet0", "busy0", "busy1", "busy2", "busy3"]
    assert not waiting
