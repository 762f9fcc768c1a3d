"""The lexicon questions are read by, and an operator's vocabulary laid over it (PRDIGEST_VOCABULARY)."""
from __future__ import annotations

import pytest
from pr_factory import REPO
from test_search import NOW, store  # noqa: F401  (the fixture)

from bot.answers.answer import answer_question
from bot.config import Settings
from store.understanding import vocabulary
from store.understanding.vocabulary import use_vocabulary_file

# A team's own words: "gatekeeping" is what they call prompt admission, "frobnicate" says nothing, and their bot has
# a name of its own.
OWN = """\
stopwords = ["frobnicate"]

[words]
bot_names = ["digestbot"]

[[group]]
terms = ["gatekeeping", "admits short prompts"]
"""


@pytest.fixture
def laid_over():
    yield
    use_vocabulary_file(None)


def _cited(db, text: str) -> list[int]:
    return answer_question(db, Settings.from_env({"PRDIGEST_REPOS": REPO}), text, now=NOW).citations


def test_the_shipped_lexicon_holds_no_mistake():
    data = vocabulary._data()
    vocabulary._check(data)  # every cue compiles, holds no capturing group, and refers only to cues that exist
    assert len(data["stopwords"]) > 300 and len(data["group"]) > 100 and "superlative" in data["cues"]


def test_an_operators_vocabulary_adds_to_the_shipped_one(store, tmp_path, laid_over):  # noqa: F811
    asked = "any gatekeeping work on mar 13?"
    assert _cited(store, asked) == []
    own = tmp_path / "words.toml"
    own.write_text(OWN)
    use_vocabulary_file(own)
    assert _cited(store, asked) == [501]
    # The shipped words and groups stay: "scheduler" still finds the scheduler's PRs, "frobnicate" says nothing.
    assert _cited(store, "scheduler frobnicate changes on mar 13") == _cited(store, "scheduler changes on mar 13") != []
    assert {"frobnicate", "what"} <= vocabulary.stopwords() and vocabulary.words("bot_names") == {"prdigest", "bot", "digestbot"}
    use_vocabulary_file(None)
    assert _cited(store, asked) == []


def test_a_cue_laid_over_replaces_the_shipped_one(tmp_path, laid_over):
    from store.retrieval.reading.form import read_form

    assert read_form("tally of prs on mar 13?").intent.value == "lookup"
    own = tmp_path / "words.toml"
    own.write_text("[cues]\ncount = '\\b(?:how\\s+many|tally\\s+of)\\b'\n")
    use_vocabulary_file(own)
    assert read_form("tally of prs on mar 13?").intent.value == "count"
    assert read_form("how many prs on mar 13?").intent.value == "count"


@pytest.mark.parametrize("written, says", [
    (None, "No such file"),
    ("stopwords = [", "Invalid value"),
    ("stopword = ['x']\n", "unknown keys ['stopword']"),
    ("stopwords = 'x'\n", "holds str, not list"),
    ("[[group]]\nnarrower = ['x']\n", "needs terms"),
    ("[cues]\ncount = 3\n", "count must be a list of strings"),
    ("[cues]\ncount = '(how many'\n", "count is no regular expression"),
    ("[cues]\ncount = '(how) many'\n", "count has a capturing group"),
    ("[cues]\ncount = '{nothing}'\n", "refers to {nothing}, which is no cue"),
], ids=["missing", "not toml", "unknown key", "wrong type", "group without terms", "cue no text", "bad regex", "capturing group", "no such cue"])
def test_a_vocabulary_that_cannot_be_read_stops_every_command_with_one_line(run_cli, tmp_path, monkeypatch, laid_over, written, says):
    own = tmp_path / "words.toml"
    if written is not None:
        own.write_text(written)
    monkeypatch.setenv("PRDIGEST_VOCABULARY", str(own))
    for command in (["ask", "what merged yesterday?"], ["report"], ["stats"]):
        result = run_cli(*command)
        assert result.code == 1 and result.out == "", command
        assert result.err.count("\n") == 1 and result.err.startswith(f"prdigest: error: PRDIGEST_VOCABULARY: {own}: ")
        assert says in result.err
    # The shipped lexicon stays as it was.
    assert "what" in vocabulary.stopwords() and vocabulary._data()["cues"]["count"].startswith("\\b(?:how")


@pytest.mark.parametrize(("asked", "same_as"), [
    ("dsr1", "deepseek r1"), ("dsv3", "deepseek v3"),
    ("dependency updates", "dependency bump"), ("model additions", "new model"),
])
def test_short_names_people_give_are_the_lexicons_names(asked, same_as):
    from store.retrieval.reading.synonyms import subwords, synonyms_of

    assert same_as in synonyms_of(subwords(asked)).all


def test_a_family_asked_is_said_by_its_members():
    from store.retrieval.reading.synonyms import subwords, synonyms_of

    assert {"mi300x", "mi355x"} <= set(synonyms_of(subwords("instinct")).all)
