"""The extras: a feature whose extra is missing says in one line what to install.

The test environment has every extra (the README's test command installs `[test]`), so a
missing one is simulated the way Python itself marks a module unimportable: `sys.modules[name]
= None`, which makes both `import name` and `importlib.util.find_spec(name)` fail.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from adapter.cli import cli
from adapter.commands.serving_choice import GRANIAN_THREADS, WAITRESS_THREADS, choose_server, cores
from adapter.extras import EXTRAS, MissingExtra, installed
from adapter.store.db import Store

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]


def _without(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    monkeypatch.setitem(sys.modules, module, None)


def test_every_feature_module_is_installed_here_and_hidden_by_the_simulation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert all(installed(module) for module in EXTRAS)
    _without(monkeypatch, "granian")
    assert not installed("granian")


def test_the_extras_install_what_the_features_import() -> None:
    extras = PROJECT["optional-dependencies"]
    for module, extra in EXTRAS.items():
        [requirement] = extras[extra]
        assert requirement.lower().startswith(module), (extra, requirement)
    base = " ".join(PROJECT["dependencies"]).lower()
    assert not any(module in base for module in EXTRAS)  # the base install has none of them
    # the README's test command installs every part the tests exercise
    assert extras["test"][0] == "dataone-slender-adapter[postgres,granian,shacl,render,notify]"


def test_a_postgresql_store_without_psycopg_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _without(monkeypatch, "psycopg")
    with pytest.raises(MissingExtra) as raised:
        Store.open("postgresql://postgres@127.0.0.1:1/none")
    message = str(raised.value)
    assert "\n" not in message
    assert "a postgresql:// store needs psycopg" in message
    assert "pip install 'dataone-slender-adapter[postgres]'" in message


def test_check_dataset_shacl_without_pyshacl_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _without(monkeypatch, "pyshacl")
    result = CliRunner().invoke(cli, ["check-dataset", "--shacl", "soso", "https://x.invalid/"])
    assert result.exit_code == 2
    assert "--shacl" in result.output and "need pyshacl" in result.output
    assert "pip install 'dataone-slender-adapter[shacl]'" in result.output


def test_serve_runs_granian_when_installed_on_a_fixed_port() -> None:
    chosen = choose_server(None, None, None, 8080)
    assert (chosen.kind, chosen.workers, chosen.threads) == ("granian", cores(), GRANIAN_THREADS)
    assert str(chosen) == f"with granian, {cores()} worker(s) of {GRANIAN_THREADS} threads"
    assert choose_server(None, 3, 2, 8080).workers == 3  # --workers asks for granian


def test_serve_runs_waitress_on_a_port_the_system_chooses() -> None:
    chosen = choose_server(None, None, None, 0)
    assert (chosen.kind, chosen.threads) == ("waitress", WAITRESS_THREADS)
    assert "granian's workers need a fixed --port" in str(chosen)


def test_serve_without_granian_runs_waitress_and_says_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _without(monkeypatch, "granian")
    chosen = choose_server(None, None, 6, 8080)
    assert (chosen.kind, chosen.threads) == ("waitress", 6)
    assert str(chosen).startswith("with waitress, 6 threads (granian is not installed")
    assert "pip install 'dataone-slender-adapter[granian]'" in str(chosen)
    for kind, workers in (("granian", None), (None, 2)):
        with pytest.raises(MissingExtra, match=r"needs granian.*\[granian\]"):
            choose_server(kind, workers, None, 8080)


def test_serve_waitress_asked_for_is_one_process() -> None:
    assert choose_server("waitress", None, None, 8080).kind == "waitress"
    assert choose_server("waitress", 1, None, 8080).workers == 1
    with pytest.raises(click.UsageError, match="--workers needs granian"):
        choose_server("waitress", 2, None, 8080)


def test_a_node_with_notify_without_coarnotify_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from adapter.commands.serving_notify import notify_front
    from adapter.config.load import quick_node

    _without(monkeypatch, "coarnotify")
    origins = [{"id": "https://repo.example.org/", "inbox": "https://repo.example.org/inbox"}]
    node = quick_node("https://repo.example/sitemap.xml", "urn:node:X", notify={"origins": origins})
    with pytest.raises(MissingExtra) as raised:
        notify_front(None, [node])
    message = str(raised.value)
    assert "notify: in the configuration (COAR Notify) needs coarnotify" in message
    assert "pip install 'dataone-slender-adapter[notify]'" in message
    assert (
        notify_front(None, [quick_node("https://repo.example/sitemap.xml", "urn:node:Y")]) is None
    )
