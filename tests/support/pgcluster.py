"""A private PostgreSQL cluster that a test may stop and start.

Outage tests stop the database under a running sync or server. Doing that to
the shared cluster on 5432 would fail every other PostgreSQL test running on
the other xdist workers, so each outage test module gets a throwaway cluster
of the same installed server (`pg_createcluster`, trust auth, its own port),
stopped and started with `pg_ctlcluster` as an operator would, and dropped
afterwards.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import pytest

from tests.support import free_port
from tests.support.stores import postgres_schema


def _run(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True, timeout=60)


@dataclass
class Cluster:
    """A running PostgreSQL cluster of our own: `url` names its `test` database."""

    version: str
    name: str
    port: int
    server: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/test"

    @property
    def admin_url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def stop(self) -> None:
        """Stop the server now (fast shutdown: open sessions are cut, as in an outage)."""
        _run(
            "pg_ctlcluster",
            "--skip-systemctl-redirect",
            self.version,
            self.name,
            "stop",
            "--mode",
            "fast",
        )
        self.reap()

    def start(self) -> None:
        """Start the server and wait until it accepts connections.

        `pg_ctlcluster ... start` sleeps 2 s at least whatever the server does (0.5 s, then
        three answers 0.5 s apart); its --foreground mode (the same server, as a service
        manager runs it), left running here, and a poll of 0.05 s bring it up in ~0.1 s.
        """
        self.reap()
        argv = ["pg_ctlcluster", "--skip-systemctl-redirect", "--foreground"]
        self.server = subprocess.Popen(
            [*argv, self.version, self.name, "start"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # not in the test's process group
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                with psycopg.connect(self.admin_url, connect_timeout=2):
                    return
            except psycopg.OperationalError:
                if self.server.poll() is not None:
                    raise AssertionError(f"cluster {self.name} did not start") from None
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def reap(self) -> None:
        """Wait for the foreground server a stop ended (no zombie left behind)."""
        if self.server is not None:
            self.server.wait(timeout=60)
            self.server = None


@pytest.fixture(scope="module")
def outage_cluster() -> Iterator[Cluster]:
    """A private cluster for tests that stop the database; skipped where the shared
    PostgreSQL is not configured (CI configures it, see .ci/run)."""
    if not os.environ.get("ADAPTER_TEST_POSTGRES_URL"):
        pytest.skip("ADAPTER_TEST_POSTGRES_URL is not set (CI sets it; see .ci/run)")
    if shutil.which("pg_createcluster") is None or not Path("/etc/postgresql").is_dir():
        pytest.skip("PostgreSQL's cluster tools (pg_createcluster) are not installed")
    version = sorted(os.listdir("/etc/postgresql"))[0]
    cluster = Cluster(version, "t" + uuid.uuid4().hex[:10], free_port())
    _run("pg_createcluster", version, cluster.name, "-p", str(cluster.port), "--", "--auth=trust")
    try:
        cluster.start()
        with psycopg.connect(cluster.admin_url, autocommit=True) as conn:
            conn.execute("CREATE DATABASE test")
        yield cluster
    finally:
        subprocess.run(
            ["pg_dropcluster", "--stop", version, cluster.name], capture_output=True, timeout=60
        )
        cluster.reap()


@pytest.fixture
def outage_store_url(outage_cluster: Cluster) -> Iterator[str]:
    """A fresh store URL (its own schema) on the private cluster."""
    with postgres_schema(outage_cluster.url) as url:
        yield url
