"""Hostile configuration files: YAML is loaded safely (no object construction, no alias
bombs), and `limits:` values that make no sense are refused where they are written."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import run_in_process

NODE = """\
nodes:
  - id: urn:node:HOSTILE
    name: {name}
    start: {{entry_urls: ["https://data.example.org/"]}}
    dataone: {{submitter: "http://orcid.org/0000-0002-1825-0097", rights_holder: "CN=x",
               contact_subject: "http://orcid.org/0000-0002-1825-0097"}}
"""


def check(path: Path) -> tuple[int, str]:
    """`adapter config check FILE` through the entry point (exit codes come from main())."""
    done = run_in_process(["config", "check", str(path)], path.parent)
    return done.returncode, done.stdout + done.stderr


def test_yaml_python_tags_construct_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    config = tmp_path / "evil.yaml"
    config.write_text(NODE.format(name=f'!!python/object/apply:os.system ["touch {marker}"]'))
    code, out = check(config)
    assert code == 2
    assert "python/object" in out and "Traceback" not in out
    assert not marker.exists()


def test_yaml_alias_bomb_is_refused(tmp_path: Path) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    config = tmp_path / "bomb.yaml"  # 10^9 values if expanded
    config.write_text("\n".join(lines) + "\n" + NODE.format(name="*a8"))
    code, out = check(config)
    assert code == 2 and "Traceback" not in out, out


def test_nonsense_limits_are_refused_with_their_key(tmp_path: Path) -> None:
    config = tmp_path / "limits.yaml"
    config.write_text(
        NODE.format(name="x") + "    limits: {total_timeout: -1, max_links: 0, no_such: 3}\n"
    )
    code, out = check(config)
    assert code == 2, out
    assert "total_timeout" in out and "max_links" in out and "no_such" in out


def test_good_limits_load(tmp_path: Path) -> None:
    config = tmp_path / "ok.yaml"
    config.write_text(NODE.format(name="x") + "    limits: {total_timeout: 5, max_links: 50}\n")
    code, out = check(config)
    assert code == 0, out
