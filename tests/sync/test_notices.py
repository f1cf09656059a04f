"""The run summary names placeholder subjects (quick mode) and how to set real ones.

The printed summary and the stored run row of a real quick-mode sync are checked in
tests/commands/test_queue_cli.py; here, which settings give which line.
"""

from __future__ import annotations

from adapter.commands.sync import summary_lines
from adapter.config.load import PLACEHOLDER_SUBJECTS, placeholder_notices, quick_node
from adapter.sync.outcome import RunSummary

URL = "https://repo.example/sitemap.xml"


def test_quick_mode_names_both_placeholders_and_the_settings_to_change() -> None:
    [notice] = placeholder_notices(quick_node(URL, "urn:node:QUICK"))
    assert "placeholder submitter and rightsHolder subjects" in notice
    assert PLACEHOLDER_SUBJECTS["submitter"] in notice
    assert PLACEHOLDER_SUBJECTS["rights_holder"] in notice
    assert "dataone.submitter and dataone.rights_holder" in notice
    assert "--config" in notice and "keep their submitter" in notice


def test_only_the_placeholders_left_are_named() -> None:
    node = quick_node(URL, "urn:node:HALF", dataone={"submitter": "http://orcid.org/0000-0001"})
    [notice] = placeholder_notices(node)
    assert "placeholder rightsHolder subject (" in notice and "submitter" not in notice
    assert "dataone.rights_holder" in notice and "dataone.submitter" not in notice


def test_real_subjects_give_no_notice() -> None:
    dataone = {"submitter": "http://orcid.org/0000-0001", "rights_holder": "CN=rh"}
    # the contact subject is the Node document's, not the records': `serve` warns of it
    assert placeholder_notices(quick_node(URL, "urn:node:REAL", dataone=dataone)) == []


def test_the_printed_summary_ends_with_the_notices() -> None:
    summary = RunSummary("urn:node:QUICK", notices=["one thing", "another"])
    assert summary_lines(summary)[-2:] == ["  note: one thing", "  note: another"]
    assert summary.as_dict()["notices"] == ["one thing", "another"]
    assert not any("note:" in line for line in summary_lines(RunSummary("urn:node:X")))
