"""`adapter web`: the check page for repository managers, under waitress.

Anyone who reaches the page can make the server fetch a URL, so a typed URL
may reach public addresses only; the origins of the nodes in `--config`, and
each `--trust URL`, are trusted as on the command line (a repository on the
operator's own network). Each client address may start at most `--rate-limit`
checks a minute, counted in a SQLite file that every server process shares.
"""

from __future__ import annotations

import signal
from collections.abc import Iterable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import click

from adapter.service.logsetup import configure

if TYPE_CHECKING:
    from adapter.web.app import WebApp

DEFAULT_RATE = 30  # checks a minute per client address
DEFAULT_DEADLINE = 30.0  # seconds for one check
MAX_FORM_BODY = 11 * 1024 * 1024  # a page's worth of pasted HTML (max_page_bytes) and the form


@click.command("web")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Node YAML file.")
@click.option(
    "--trust",
    "trusted",
    multiple=True,
    metavar="URL",
    help="Also trust this origin (it may be on a private address). Repeatable.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8090, show_default=True, type=click.IntRange(0, 65535))
@click.option("--threads", default=8, show_default=True, type=click.IntRange(1, 256))
@click.option(
    "--rate-limit",
    "rate",
    default=DEFAULT_RATE,
    show_default=True,
    type=click.IntRange(1, 100_000),
    help="Checks a minute per client address; more are answered 429.",
)
@click.option(
    "--rate-file",
    type=click.Path(dir_okay=False),
    help="SQLite file of the rate limit's counts, shared by every server process "
    "(default: one per user in the temporary directory).",
)
@click.option(
    "--deadline",
    default=DEFAULT_DEADLINE,
    show_default=True,
    type=click.FloatRange(1, 600),
    help="Seconds one check may take, every fetch included.",
)
def web(
    config_path: str | None,
    trusted: tuple[str, ...],
    host: str,
    port: int,
    threads: int,
    rate: int,
    rate_file: str | None,
    deadline: float,
) -> None:
    """Serve the check page: a landing page URL, DOI or pasted HTML/JSON-LD in, the report out."""
    import waitress  # lazy: every command module loads for `adapter --help`

    app = build_app(configured_origins(config_path, trusted), rate, rate_file, deadline)
    configure("human", "INFO")
    server = waitress.create_server(
        app,
        host=host,
        port=port,
        threads=threads,
        ident="adapter",
        max_request_body_size=MAX_FORM_BODY,
        clear_untrusted_proxy_headers=True,
    )
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"Check page: http://{shown}:{server.effective_port}/check")
    click.echo("Ctrl-C stops.", err=True)

    def _stop(signum: int, _frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _stop)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()


def configured_origins(config_path: str | None, trusted: tuple[str, ...] = ()) -> list[str]:
    """The origins the operator named: each node's start URLs, and each `--trust URL`."""
    from adapter.config.load import load_config

    for url in trusted:
        if not url.startswith(("http://", "https://")):
            raise click.BadParameter(f"{url!r} is not an http(s) URL", param_hint="--trust")
    origins = list(trusted)
    if config_path:
        for node in load_config(config_path).nodes:
            origins.extend(node.trusted_origins())
    return origins


def build_app(
    trusted_origins: Iterable[str] = (),
    rate: int = DEFAULT_RATE,
    rate_file: str | None = None,
    deadline: float = DEFAULT_DEADLINE,
) -> WebApp:
    """The check page's WSGI application, as `adapter web` and `adapter serve` run it."""
    from adapter.limits import DEFAULT_LIMITS
    from adapter.web.app import WebApp
    from adapter.web.checking import Checker
    from adapter.web.ratelimit import RateLimit, default_path

    checker = Checker(tuple(trusted_origins), DEFAULT_LIMITS, deadline)
    limit = RateLimit(Path(rate_file) if rate_file else default_path(), rate)
    return WebApp(checker, limit)
