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


def test_a_count_gives_the_number_then_ten_prs_then_how_to_list_them_all(ask):
    data, first = ask("how many PRs merged on Mar 20?")
    lines = data["answer"].splitlines()
    assert first == "27 PRs merged on Fri Mar 20."
    assert sum(line.startswith("[#") for line in lines) == 10
    assert lines[-1] == "\u2026and 17 more; `ask --limit 27` lists them all."
    assert len(data["citations"]) == 27  # every PR that answers is cited, listed or not
    everything, _ = ask("how many PRs merged on Mar 20?", "--limit", "27")
    assert sum(line.startswith("[#") for line in everything["answer"].splitlines()) == 27
    assert "more" not in everything["answer"].splitlines()[-1]


def test_a_whole_set_says_how_many_newest_it_shows_and_a_slash_ask_takes_a_limit(ask, run_cli):
    _, first = ask("what merged on Mar 20?")
    assert first == "27 PRs merged on Fri Mar 20; the 10 newest:"
    with freeze_time(NOW):
        slash = run_cli("run", "--format", "text", "ask --limit 12 what merged on Mar 20?")
    assert slash.code == 0 and "the 12 newest:" in slash.out and "and 15 more" in slash.out
