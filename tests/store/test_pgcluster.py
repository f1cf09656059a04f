"""The private cluster that outage tests stop and start really goes down and comes back."""

from __future__ import annotations

import psycopg
import pytest

from tests.support.pgcluster import Cluster
from tests.support.pgcluster import outage_cluster as outage_cluster

pytestmark = [pytest.mark.postgres, pytest.mark.slow]  # stops and starts a cluster


def test_a_stopped_cluster_refuses_and_a_started_one_answers(outage_cluster: Cluster) -> None:
    with psycopg.connect(outage_cluster.url) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
    outage_cluster.stop()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(outage_cluster.url, connect_timeout=2)
    outage_cluster.start()
    with psycopg.connect(outage_cluster.url) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
