"""The hostile corpus, part 2 of 3 (tests/hostile/corpus.py says what each case must show).

The parts are modules of their own so that `--dist loadfile` spreads the
corpus's ~190 `adapter` processes over the suite's workers.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.hostile import corpus
from tests.support.hostile_fixtures import Results, corpus_part

PART = 1
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]
hostile_results = corpus_part(PART)


@pytest.mark.parametrize(("case", "command"), corpus.params(PART))
def test_case(hostile_results: Results, case: dict[str, Any], command: str) -> None:
    corpus.check_case(hostile_results, case, command)


def test_the_seed_store_held_records(hostile_results: Results) -> None:
    corpus.check_seeded(hostile_results)


def test_no_request_ever_reached_another_origin(hostile_results: Results) -> None:
    corpus.check_no_other_origin(hostile_results)


def test_no_secret_file_content_in_any_output(hostile_results: Results) -> None:
    corpus.check_no_secret(hostile_results)
