"""`adapter demo`: the whole job on a bundled repository, offline, in a few seconds.

Serves `adapter/demo/site` on 127.0.0.1, runs a full sync of it into a local
SQLite file, prints the run summary and the commands to look further. The
server prefers port 8737 so that a second `adapter demo` sees the same URLs
(and shows an incremental run: only new, moved or stale pages are fetched); any free port otherwise.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import click

from adapter import signals
from adapter.commands.args import BadValue, epilog
from adapter.commands.sync import summary_lines
from adapter.config.load import quick_node
from adapter.config.settings import AdapterConfig, NodeSettings
from adapter.demo.server import DemoServer
from adapter.errors import StoreError
from adapter.signals import inbox, on_signals

DEMO_STORE = "sqlite:///demo-harvest.db"
DEMO_NODE = "urn:node:DEMO"
DEMO_PORT = 8737


DEMO_SERVER_HEADER = "DemoRepository/"  # the Server header of adapter.demo.server


def demo_node(url: str) -> NodeSettings:
    """The demo node; config/demo.yaml describes the same one (a test compares them)."""
    return quick_node(
        url,
        DEMO_NODE,
        name="Demo Ocean & Land Data Repository",
        dataone={
            "submitter": "http://orcid.org/0000-0002-1825-0097",
            "rights_holder": "CN=demo-repository,DC=dataone,DC=org",
            "contact_subject": "http://orcid.org/0000-0002-1825-0097",
            "sync_metadata_copy": True,
        },
        politeness={"requests_per_second": 50, "concurrency": 4},
    )


PROBE_TIMEOUT = 3.0  # seconds for whoever holds the port to answer as the demo would


def running_demo(port: int = DEMO_PORT) -> str | None:
    """The origin of a demo repository another `adapter demo --serve` serves on `port`."""
    import urllib.request  # lazy: only when the port is taken

    url = f"http://127.0.0.1:{port}/robots.txt"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=PROBE_TIMEOUT) as resp:
            server = resp.headers.get("Server", "")
    except OSError:
        return None
    return f"http://127.0.0.1:{port}" if server.startswith(DEMO_SERVER_HEADER) else None


@contextmanager
def demo_repository(serve: bool, store_url: str) -> Iterator[str]:
    """The demo repository's origin: ours on port 8737, or the one already serving there.

    The pages' URLs are part of the store: a run on another port would see the
    same DOIs at new URLs and refuse every page as a duplicate. So a demo
    already serving on 8737 is used as it is, and another program on the port
    moves the demo to a free port only for a store that holds no demo pages yet.
    """
    try:
        server = DemoServer(port=DEMO_PORT)
    except OSError:
        origin = running_demo()
        if origin is not None:
            if serve:
                raise BadValue(
                    f"the demo repository is already served at {origin}/ by another "
                    "`adapter demo --serve`; run `adapter demo` without --serve to sync it"
                ) from None
            click.echo(f"Using the demo repository already served at {origin}/")
            yield origin
            return
        if _holds_demo_pages(store_url):
            raise BadValue(
                f"port {DEMO_PORT} is used by another program, and the demo pages in "
                f"{store_url} live at 127.0.0.1:{DEMO_PORT}; stop that program, or give "
                "a new --store"
            ) from None
        click.echo(f"Port {DEMO_PORT} is taken; serving the demo on a free port (a new store)")
        server = DemoServer(port=0)
    with server:
        yield server.origin


def _holds_demo_pages(store_url: str) -> bool:
    from adapter.store.db import Store  # lazy: every command module loads for `adapter --help`

    try:
        store = Store.open(store_url, create=False)
    except StoreError:  # no store yet (or not this version): nothing depends on the port
        return False
    try:
        return DEMO_NODE in store.node_ids()
    finally:
        store.close()


@click.command(
    "demo",
    epilog=epilog(
        "adapter demo",
        "adapter demo --serve        (keep the demo repository up for other commands)",
        exits="0 ok, 1 the run failed, 2 a bad store or the demo port is taken, 130 Ctrl-C.",
    ),
)
@click.option("--store", "store_url", default=DEMO_STORE, show_default=True, help="Store URL.")
@click.option(
    "--serve",
    is_flag=True,
    help="Keep serving the demo repository after the sync, until Ctrl-C or SIGTERM, "
    "so check-dataset, discover and schedule can be tried against it.",
)
def demo(store_url: str, serve: bool) -> None:
    """Sync the bundled demo repository into a local store and show where to look next."""
    from adapter.sync.run import run_node  # lazy: every command module loads for `adapter --help`

    with demo_repository(serve, store_url) as origin:
        node = demo_node(origin + "/")
        click.echo(f"Demo repository at {origin}/ (robots.txt, sitemap index, Signmaps)")
        click.echo(f"Syncing it as {DEMO_NODE} into {store_url} ...\n")
        config = AdapterConfig(store_url=store_url, nodes=(node,))
        summary = run_node(config, node, progress=sys.stderr.isatty())
        click.echo("\n".join(summary_lines(summary)))
        _look_next(store_url)
        if serve:
            _serve_until_stopped(origin)
    raise SystemExit(1 if summary.status == "failed" else 0)


def _serve_until_stopped(origin: str) -> None:
    """Block until SIGINT/SIGTERM; the `with` block around us stops the server."""
    got = inbox()  # not an Event: see adapter.signals.inbox
    with on_signals(got.put):
        click.echo(f"\nServing the demo repository at {origin + '/'} until Ctrl-C. Try:")
        click.echo(f"  adapter check-dataset {origin + '/dataset/ocean-temperature-2019'}")
        click.echo(f"  adapter discover {origin + '/'}")
        click.echo("  adapter schedule --config config/demo.yaml")
        first = signals.get(got)  # in slices: see adapter.signals.SLICE
    click.echo("Stopped.")
    if first == signal.SIGINT:
        raise SystemExit(130)  # Ctrl-C never exits 0 (README, exit codes); SIGTERM does


def _look_next(store_url: str) -> None:
    from adapter.store.db import Store  # lazy: every command module loads for `adapter --help`

    store = Store.open(store_url, create=False)
    try:
        total, records = store.list_objects(DEMO_NODE, count=1000)
        pending = len(store.outbox(DEMO_NODE))
    finally:
        store.close()
    click.echo(f"\nThe store holds {total} object(s); {pending} event(s) wait in the queue.")
    example = next((r.pid for r in records if r.format_id.startswith("science-on")), None)
    click.echo("Look next:")
    click.echo(f"  adapter queue list --store {store_url}")
    if example:
        click.echo(f"  adapter queue show {example} --store {store_url} --sysmeta")
    click.echo(f"  adapter runs --store {store_url}")
    click.echo(f"  adapter serve --store {store_url} --node-id {DEMO_NODE}")
    click.echo("  adapter demo          (again: an incremental run fetches only what is due)")
