"""The database goes away during a scheduled sync: the run is failed, never left running.

`adapter schedule` runs against the private cluster of tests/support/pgcluster.py,
syncing a fixture site at 2 pages a second; the cluster is stopped once the run
has fetched a few pages and started again once the run has failed. The process
lives on: the run the outage cut is recorded as failed once the store is back
(by this process, at its next run), its claims are released then, the next run
completes every page, and the log holds one line per fault, no traceback.
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import select

from adapter.cli import cli
from adapter.store import schema as t
from adapter.store.db import Store
from tests.service.test_scheduler import (
    STATIONS,
    Process,
    coastal_yaml,
    station_requests,
    wait_until,
)
from tests.support.pgcluster import Cluster
from tests.support.pgcluster import outage_cluster as outage_cluster
from tests.support.pgcluster import outage_store_url as outage_store_url

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

NODE = "urn:node:COASTAL"


def run_end(process: Process) -> dict[str, Any]:
    """The next run-end line of the process."""
    return dict(json.loads(process.wait_for('"run-end"')))


def test_a_database_outage_mid_run_fails_that_run_and_the_next_completes_every_page(
    tmp_path: Path,
    outage_cluster: Cluster,
    outage_store_url: str,
    serve_site: Callable[[str], Any],
) -> None:
    server = serve_site("sched-coastal")
    config = tmp_path / "adapter.yaml"
    # 8 pages at 2 per second: the first run lasts about 4 s; the next starts 3 s after it
    # (while the store may still be down: such a run fails too, and the one after completes)
    config.write_text(coastal_yaml(server.origin, outage_store_url, 2, "{interval_minutes: 0.05}"))
    process = Process(["--config", str(config), "--now", "--log-format", "json"], {}, tmp_path)
    try:
        process.wait_for('"run-start"')
        wait_until(lambda: len(station_requests(server)) >= 2)
        outage_cluster.stop()
        process.wait_for('"run-failed"')  # at its next claim or write, not at a lease's end
        time.sleep(0.5)  # the process lives on through the outage
        outage_cluster.start()
        end = run_end(process)
        while end["counts"].get("status") != "ok":
            end = run_end(process)
        process.proc.send_signal(signal.SIGTERM)
        assert process.finish() == 0
    finally:
        process.kill()

    store = Store.open(outage_store_url, create=False)
    try:
        runs = store.runs(NODE, limit=50)
        with store.read() as conn:
            f = t.frontier
            rows = conn.execute(select(f.c.last_status, f.c.claimed_by).where(f.c.node_id == NODE))
            pages = rows.all()
        records = store.count_records(NODE)
    finally:
        store.close()
    assert [r.status for r in runs if r.status == "running"] == []
    failed = [r for r in runs if r.status == "failed"]
    assert failed and all("StoreError" in (r.error or "") for r in failed), failed
    assert runs[0].status == "ok"  # the newest
    assert len(pages) == STATIONS and {p.last_status for p in pages} == {"harvested"}
    assert {p.claimed_by for p in pages} == {None}
    assert records == 2 * STATIONS  # each Dataset with its resource map
    listed = CliRunner().invoke(cli, ["runs", "--store", outage_store_url, "--json"])
    assert listed.exit_code == 0, listed.output
    assert '"running"' not in listed.output

    lines = process.seen
    assert not [line for line in lines if "Traceback" in line]
    logged = [json.loads(line) for line in lines if line.startswith("{")]
    assert not [r for r in logged if "exception" in r]
    # a run skipped or missed while another went on is the schedule's notice, not a fault
    notices = {"run-skipped", "run-missed"}
    faults = [
        r for r in logged if r["level"] in ("WARNING", "ERROR") and r.get("event") not in notices
    ]
    # one line per fault: the run the outage cut (and any run that began while it lasted)
    assert faults and {r.get("event") for r in faults} == {"run-failed"}, faults
    assert len(faults) <= 3, faults
