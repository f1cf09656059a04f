"""The YAML configuration: examples load, every broken rule is caught with its key path."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from adapter.cli import cli
from adapter.config.crontab import cron_trigger
from adapter.config.errors import ConfigProblems
from adapter.config.load import (
    PLACEHOLDER_SUBJECTS,
    load_config,
    parse_config,
    placeholder_subjects,
    quick_node,
)
from adapter.config.settings import (
    AdapterConfig,
    NodeSettings,
    ScheduleSettings,
    field_model,
    known_keys,
)
from adapter.errors import ConfigError
from adapter.limits import DEFAULT_LIMITS, Limits
from adapter.service.scheduler import next_fire

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "config").glob("*.yaml"))
INVALID = sorted((ROOT / "fixtures" / "config").glob("invalid-*.yaml"))

NODE = """
  - id: urn:node:{id}
    name: {id}
    start: {{entry_urls: ["https://{id}.example.org/"]}}
    dataone: {{submitter: "CN=a", rights_holder: "CN=b", contact_subject: "CN=c"}}
"""


def config_text(*ids: str, head: str = "") -> str:
    return head + "nodes:" + "".join(NODE.format(id=i) for i in ids)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ADAPTER_STORE_URL", "ADAPTER_DEMO_URL", "ADAPTER_CONFIG"):
        monkeypatch.delenv(name, raising=False)


# -- the examples -----------------------------------------------------------------------


def test_there_are_the_three_examples() -> None:
    assert {p.name for p in EXAMPLES} >= {"minimal.yaml", "full.yaml", "demo.yaml"}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_loads(path: Path) -> None:
    config = load_config(path)
    assert config.source == path
    assert config.nodes
    for node in config.nodes:
        assert node.id.startswith("urn:node:")
        assert isinstance(node.limits(), Limits)


def _all_keys(model: type[BaseModel], prefix: str = "") -> set[str]:
    keys = set()
    for key in known_keys(model):
        keys.add(prefix + key)
        inner = field_model(model, key)
        if inner is not None:
            keys |= _all_keys(inner, f"{prefix}{key}.")
    return keys


def _present_keys(value: Any, prefix: str = "") -> set[str]:
    keys: set[str] = set()
    if isinstance(value, dict):
        for key, inner in value.items():
            keys.add(prefix + key)
            keys |= _present_keys(inner, f"{prefix}{key}.")
    elif isinstance(value, list):
        for item in value:
            keys |= _present_keys(item, prefix)
    return keys


def test_full_example_sets_every_key() -> None:
    raw = yaml.safe_load((ROOT / "config" / "full.yaml").read_text())
    present = _present_keys({k: v for k, v in raw.items() if k not in ("nodes", "defaults")})
    for node in raw["nodes"]:
        present |= {f"nodes.{k}" for k in _present_keys(node)}
    expected = {k for k in _all_keys(AdapterConfig) if not k.startswith("nodes")}
    expected |= {f"nodes.{k}" for k in _all_keys(NodeSettings)}
    assert expected - present == set()
    assert set(raw["defaults"]) <= {"schedule", "politeness", "scope", "limits", "checks"} | {
        "dataone",
        "sync",
    }


def test_full_example_values_reach_the_settings() -> None:
    config = load_config(ROOT / "config" / "full.yaml")
    first, second = config.nodes
    assert first.schedule.timezone == "Europe/Berlin"
    assert first.politeness.requests_per_second == 1.5  # the node beats the defaults
    assert second.politeness.requests_per_second == 2.0  # the defaults
    assert second.schedule.interval_minutes == 360 and second.schedule.cron is None
    assert second.schedule.jitter_seconds == 900  # from the defaults' schedule
    assert second.limits().total_timeout == 90 and first.limits().total_timeout == 60
    assert second.dataone.contact_subject == "CN=DataONE Operations,DC=dataone,DC=org"
    assert first.dataone.access_policy[0].subject == "public"
    assert second.dataone.access_policy[0].permissions == ("read",)


# -- one broken file per rule ---------------------------------------------------------------


def _expected(path: Path) -> str:
    for line in path.read_text().splitlines():
        if line.startswith("# expect: "):
            return line.removeprefix("# expect: ")
    raise AssertionError(f"{path.name} has no '# expect:' line")


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_each_broken_file_names_key_path_and_reason(path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    lines = str(caught.value).splitlines()
    wanted = f"{path}: {_expected(path)}"
    assert any(line.startswith(wanted) for line in lines), "\n".join(lines)


def test_there_is_a_broken_file_for_each_rule() -> None:
    assert len(INVALID) >= 25


def test_every_problem_is_reported_at_once_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "many.yaml"
    path.write_text(
        "log_level: LOUD\n"
        "nodes:\n"
        "  - id: urn:node:A\n"
        "    name: A\n"
        "    start: {entry_urls: ['https://a.example.org/']}\n"
        "    schedule: {cron: '0 3 * * 9'}\n"
        "    politeness: {requests_per_second: -1}\n"
        "    scope: {include: ['[']}\n"
        "    dataone: {submitter: x, rights_holder: y, contact_subject: z}\n"
        "  - id: urn:node:B\n"
        "    name: B\n"
        "    start: {sitemap_urls: ['sitemap.xml']}\n"
        "    dataone: {submitter: x, rights_holder: y}\n"
    )
    with pytest.raises(ConfigProblems) as caught:
        load_config(path)
    found = {(p["path"], p["line"]) for p in caught.value.as_dicts()}
    assert found == {
        ("log_level", 1),
        ("nodes[0].schedule.cron", 6),
        ("nodes[0].politeness.requests_per_second", 7),
        ("nodes[0].scope.include[0]", 8),
        ("nodes[1].start.sitemap_urls[0]", 12),
        ("nodes[1].dataone.contact_subject", 13),
    }
    assert all(line.startswith(f"{path}: ") for line in str(caught.value).splitlines())


def test_a_mistake_in_defaults_is_reported_once_there(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(
        config_text("A", "B", "C", head="defaults:\n  sync: {recheck_after_hours: 0}\n")
    )
    with pytest.raises(ConfigProblems) as caught:
        load_config(path)
    assert [p["path"] for p in caught.value.as_dicts()] == ["defaults.sync.recheck_after_hours"]


def test_missing_file_and_non_utf8_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the configuration file"):
        load_config(tmp_path / "absent.yaml")
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes(b"nodes: []\n# caf\xe9\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(bad)


# -- defaults, secrets, freezing ------------------------------------------------------------


def test_defaults_merge_deep_per_section_and_lists_are_replaced() -> None:
    text = (
        "defaults:\n"
        "  politeness: {requests_per_second: 0.5, concurrency: 3}\n"
        "  scope: {exclude: ['/draft/']}\n"
        "  schedule: {cron: '0 1 * * *', jitter_seconds: 30}\n"
        "nodes:\n"
        "  - id: urn:node:A\n    name: A\n    start: {entry_urls: ['https://a.example/']}\n"
        "    politeness: {concurrency: 1}\n"
        "    scope: {exclude: ['/old/']}\n"
        "    schedule: {interval_minutes: 30}\n"
        "    dataone: {submitter: x, rights_holder: y, contact_subject: z}\n"
    )
    node = parse_config(text).nodes[0]
    assert node.politeness.requests_per_second == 0.5 and node.politeness.concurrency == 1
    assert node.scope.exclude == ("/old/",)
    assert node.schedule.interval_minutes == 30 and node.schedule.cron is None
    assert node.schedule.jitter_seconds == 30


def test_env_variables_fill_values_and_unset_ones_are_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ADAPTER_TEST_PW", "s3cr3t")
    monkeypatch.setenv("ADAPTER_TEST_SUBMITTER", "http://orcid.org/0000-0002-1825-0097")
    head = "store_url: postgresql://adapter:${ADAPTER_TEST_PW}@db.example/adapter\n"
    text = config_text("A", head=head).replace('"CN=a"', '"${ADAPTER_TEST_SUBMITTER}"')
    config = parse_config(text)
    assert config.store_url == "postgresql://adapter:s3cr3t@db.example/adapter"
    assert config.nodes[0].dataone.submitter == "http://orcid.org/0000-0002-1825-0097"
    assert parse_config(config_text("A", head="log_level: ${NOPE_UNSET:-DEBUG}\n")).log_level == (
        "DEBUG"
    )
    text = config_text("A").replace('"CN=b"', '"price: $$5 ${ADAPTER_TEST_UNSET_VAR}"')
    with pytest.raises(ConfigProblems) as caught:
        parse_config(text)
    [problem] = caught.value.as_dicts()
    assert problem["path"] == "nodes[0].dataone.rights_holder"
    assert problem["reason"] == "environment variable ADAPTER_TEST_UNSET_VAR is not set"


def test_settings_are_frozen() -> None:
    node = quick_node("https://repo.example/", "urn:node:X")
    with pytest.raises(ValidationError):
        node.name = "changed"


# -- quick_node, limits, scope, checks ------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "place"),
    [
        ("https://repo.example/", "entry_urls"),
        ("https://repo.example/datasets/abc", "entry_urls"),
        ("https://repo.example/robots.txt", "robots_urls"),
        ("https://repo.example/sitemap.xml", "sitemap_urls"),
        ("https://repo.example/sm/datasets-1.xml.gz", "sitemap_urls"),
        ("https://repo.example/sitemap_index", "sitemap_urls"),
    ],
)
def test_quick_node_places_the_url_by_its_shape(url: str, place: str) -> None:
    node = quick_node(url, "urn:node:QUICK")
    assert getattr(node.start, place) == (url,)
    assert node.start.urls() == (url,)
    assert node.short_name == "QUICK"
    assert node.dataone.submitter == PLACEHOLDER_SUBJECTS["submitter"] != node.id
    assert placeholder_subjects(node) == ["submitter", "rights_holder", "contact_subject"]
    assert node.limits() == DEFAULT_LIMITS


def test_node_limits_read_adapter_limits_when_asked_and_its_own_win(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    node = quick_node("https://repo.example/", "urn:node:QUICK", limits={"read_timeout": 3})
    monkeypatch.setenv("ADAPTER_LIMITS", "max_links=7,read_timeout=9")
    assert node.limits().max_links == 7 and node.limits().read_timeout == 3.0
    monkeypatch.delenv("ADAPTER_LIMITS")
    assert node.limits() == DEFAULT_LIMITS.with_overrides({"read_timeout": 3})


def test_quick_node_overrides_and_errors() -> None:
    node = quick_node(
        "https://repo.example/",
        "urn:node:QUICK",
        name="Quick",
        politeness={"requests_per_second": 0.5},
        limits={"read_timeout": 3, "max_retries": 0},
        dataone={"rights_holder": "CN=me"},
    )
    assert node.name == "Quick" and node.politeness.requests_per_second == 0.5
    assert node.limits().read_timeout == 3.0 and node.limits().max_retries == 0
    assert node.dataone.rights_holder == "CN=me"
    assert node.dataone.submitter == "CN=adapter-placeholder-submitter,DC=dataone,DC=org"
    assert placeholder_subjects(node) == ["submitter", "contact_subject"]
    with pytest.raises(ConfigProblems) as caught:
        quick_node("https://repo.example/", "QUICK", limits={"max_page_bytes": -1})
    assert {p["path"] for p in caught.value.as_dicts()} == {"id", "limits.max_page_bytes"}


def test_scope_include_and_exclude_patterns() -> None:
    node = quick_node(
        "https://repo.example/",
        "urn:node:S",
        scope={
            "include": [r"/dataset/"],
            "exclude": [r"\?version="],
            "allowed_hosts": ["f.example"],
        },
    )
    assert node.in_scope("https://repo.example/dataset/1")
    assert node.in_scope("https://f.example/dataset/2")
    assert not node.in_scope("https://repo.example/about")
    assert not node.in_scope("https://repo.example/dataset/1?version=2")
    assert node.scope.allowed_hosts == ("f.example",)


def test_required_checks_are_known_requirements_or_finding_codes() -> None:
    node = quick_node(
        "https://repo.example/",
        "urn:node:C",
        checks={"required": ["encoding", "signposting/cite-as", "dataone/id-missing"]},
    )
    assert node.checks.required == ("encoding", "signposting/cite-as", "dataone/id-missing")
    with pytest.raises(ConfigProblems) as caught:
        quick_node("https://r.example/", "urn:node:C", checks={"required": ["encodings", "x/y"]})
    reasons = [p["reason"] for p in caught.value.as_dicts()]
    assert reasons[0].startswith("'encodings' is not a check name (did you mean 'encoding'?")
    assert reasons[1] == "'x/y' starts no finding code (`adapter findings` lists them)"


# -- schedules ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "weekday"),
    [("0", 6), ("7", 6), ("1", 0), ("5", 4), ("6", 5), ("sun", 6), ("fri", 4)],
)
def test_cron_weekdays_mean_what_crontab_means(field: str, weekday: int) -> None:
    trigger = cron_trigger(f"0 3 * * {field}")
    monday = datetime(2026, 11, 23, tzinfo=UTC)
    for offset in range(3):  # the next three runs all fall on that weekday
        fire = trigger.get_next_fire_time(None, monday.replace(day=23 + offset))
        assert fire is not None and fire.weekday() == weekday


def test_cron_ranges_steps_and_macros() -> None:
    assert str(cron_trigger("0 3 * * 1-5").fields[4]) == "mon,tue,wed,thu,fri"
    assert str(cron_trigger("0 3 * * */2").fields[4]) == "sun,tue,thu,sat"
    assert str(cron_trigger("@weekly").fields[4]) == "sun"
    with pytest.raises(ValueError, match="day-of-week field '5-1'"):
        cron_trigger("0 3 * * 5-1")


def test_next_fire_of_cron_and_interval() -> None:
    now = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)  # a Sunday
    cron = ScheduleSettings(cron="30 2 * * 1", timezone="Europe/Berlin")
    assert next_fire(cron, now) == datetime(2026, 11, 23, 1, 30, tzinfo=UTC)
    interval = ScheduleSettings(interval_minutes=90)
    assert next_fire(interval, now) == datetime(2026, 11, 22, 13, 30, tzinfo=UTC)


# -- adapter config check -------------------------------------------------------------------


def _invoke(*args: str) -> tuple[Any, str]:
    result = CliRunner().invoke(cli, list(args), standalone_mode=False, catch_exceptions=False)
    return result.return_value, result.output


def test_config_check_summarises_nodes_and_next_runs() -> None:
    code, out = _invoke("config", "check", str(ROOT / "config" / "full.yaml"))
    assert code == 0
    assert "valid; 2 node(s)" in out
    assert "urn:node:EXAMPLE  Example Data Repository" in out
    assert "cron '0 3 * * 1-5' (Europe/Berlin), jitter 600 s" in out
    assert out.count("next run") == 2


def test_config_check_json(tmp_path: Path) -> None:
    code, out = _invoke("config", "check", "--json", str(ROOT / "config" / "minimal.yaml"))
    document = json.loads(out)
    assert code == 0 and document["valid"] is True
    assert [n["id"] for n in document["nodes"]] == ["urn:node:EXAMPLE"]
    assert datetime.fromisoformat(document["nodes"][0]["next_run"]) > datetime.now(UTC)
    broken = ROOT / "fixtures" / "config" / "invalid-cron.yaml"
    code, out = _invoke("config", "check", "--json", str(broken))
    document = json.loads(out)
    assert code == 2 and document["valid"] is False
    assert document["problems"][0]["path"] == "nodes[1].schedule.cron"
    assert document["problems"][0]["line"] == 11


def test_config_check_hides_the_password_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ADAPTER_TEST_PW", "s3cr3t")
    path = tmp_path / "pg.yaml"
    path.write_text(
        config_text("A", head="store_url: postgresql://u:${ADAPTER_TEST_PW}@db.example/a\n")
    )
    code, out = _invoke("config", "check", str(path))
    assert code == 0 and "postgresql://u:***@db.example/a" in out and "s3cr3t" not in out


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_config_check_exit_codes_of_the_installed_command() -> None:
    adapter = [sys.executable, "-m", "adapter"]
    good = subprocess.run(
        [*adapter, "config", "check", "config/minimal.yaml"], cwd=ROOT, capture_output=True
    )
    bad = subprocess.run(
        [*adapter, "config", "check", "fixtures/config/invalid-rate.yaml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert good.returncode == 0, good.stderr
    assert bad.returncode == 2
    assert bad.stdout.startswith("fixtures/config/invalid-rate.yaml: nodes[0].politeness")
    assert "1 problem(s)" in bad.stderr


# -- fuzzing: whatever the file holds, a ConfigError or a configuration -----------------------

KEYS = sorted(
    {k.rsplit(".", 1)[-1] for k in _all_keys(AdapterConfig) | _all_keys(NodeSettings)}
    | {"defaults", "limits", "subject", "permissions", "cronn", "<<"}
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**6),
    st.floats(allow_nan=True),
    st.text(max_size=20),
    st.sampled_from(
        ["urn:node:X", "https://a.example/", "0 3 * * 0", "@daily", "${HOME}", "${NOPE_X}", "["]
    ),
)
DOCUMENTS = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=8), inner, max_size=6)
    ),
    max_leaves=40,
)


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DOCUMENTS)
def test_any_document_gives_a_config_or_a_config_error(document: Any) -> None:
    text = yaml.safe_dump({"nodes": [document]} if isinstance(document, dict) else document)
    try:
        config = parse_config(text)
    except ConfigError as exc:
        assert str(exc).strip()
        for line in str(exc).splitlines():
            assert line.startswith("<config>: ")
    else:
        assert config.nodes


def test_config_check_says_whom_the_notify_inbox_trusts() -> None:
    result = CliRunner().invoke(cli, ["config", "check", str(ROOT / "config" / "full.yaml")])
    assert result.exit_code == 0, result.output
    assert (
        "notify      trusts https://repo.example.org/ (answers to "
        "https://repo.example.org/ldn/inbox), for pages on data.example.org, files.example.org"
    ) in result.output
    assert "page status announced to https://repo.example.org/ldn/inbox" in result.output
