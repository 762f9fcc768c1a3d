"""Answers that never mislead, asked through `prdigest ask` of a store filled from our own fixture reports."""
import json

import pytest
from conftest import FIXTURES, LA
from freezegun import freeze_time
from pr_factory import REPO

from store.sources.importer import import_file

# The morning after the busiest fixture day (report-2026-03-20.md: 27 PRs).
NOW = "2026-03-21 17:00:00"


@pytest.fixture
def reports(db, monkeypatch):
    monkeypatch.setenv("PRDIGEST_REPOS", REPO)
    for report in sorted(FIXTURES.glob("report-*.md")):
        import_file(db, report, LA, REPO)
    return db


@pytest.fixture
def ask(run_cli, reports):
    """The answer `prdigest ask` gives, as {"answer", "citations"}, and its first line."""

    def asked(question: str, *options: str) -> tuple[dict, str]:
        with freeze_time(NOW):
            result = run_cli("ask", "--json", *options, question)
        assert result.code == 0, result.err
        data = json.loads(result.out)
        return data, data["answer"].splitlines()[0]

    return asked


def test_spec_dec_is_speculative_decoding_and_dec_beside_a_day_is_a_date(ask):
    data, first = ask("spec dec changes on mar 20?")
    assert first == "2 PRs merged on Fri Mar 20 in speculative-decoding:" and data["citations"] == [4313, 4312]
    _, dated = ask("what merged dec 3?")
    assert dated.startswith("No PR merged on Wed Dec 3, 2025")
