import json
import re

import pytest

from bot.answer import answer_question, cite_only
from bot.config import Settings
from bot.llm import LLMError, llm_from_settings
from pr_factory import REPO, make_pr
from servers.github_api import FakeGitHub, FakePull
from servers.openai_api import FakeOpenAI, Recorded, Reply, summary_reply
from store.prs import get_pr, save_pr
from test_search import CORPUS, NOW


@pytest.fixture
def settings(monkeypatch) -> Settings:
    monkeypatch.setenv("PRDIGEST_REPOS", REPO)
    return Settings.from_env()


@pytest.fixture
def store(db):
    for pr in CORPUS:
        save_pr(db, pr)
    return db


def _ask(db, settings, text, **kwargs):
    return answer_question(db, settings, text, now=NOW, **kwargs)


def test_extractive_answer_lists_prs_with_date_author_and_what_changed(store, settings):
    answer = _ask(store, settings, "what merged yesterday?")
    lines = answer.text.splitlines()
    assert lines[0] == "3 PRs merged yesterday (Fri Mar 13):"
    assert lines[1] == "[#507] Revert #501 (linus-t, Fri Mar 13)"
    assert lines[2] == "    Reverts the earlier admission change because it starved long prompts."
    assert answer.citations == [507, 502, 501] == [pr.number for pr in answer.prs]


def test_named_pr_answer_states_the_relation(store, settings):
    answer = _ask(store, settings, "why was #501 reverted?")
    assert answer.text.splitlines()[0] == "[#507] reverts [#501]."
    assert answer.citations == [501, 507]


def test_ranked_answer_and_relaxed_filters_say_what_they_did(store, settings):
    ranked = _ask(store, settings, "anything about the OpenAI-compatible server?")
    assert ranked.text.startswith('PRs merged about "openai-compatible server", best matches first:')
    assert ranked.citations[0] == 504
    relaxed = _ask(store, settings, "ROCm on Mar 2")
    assert relaxed.text.startswith("No PRs merged on Mon Mar 2 in rocm; showing the nearest matches")
    assert set(relaxed.citations) == {502, 508}


def test_follow_up_reuses_the_thread(store, settings):
    answer = _ask(store, settings, "and on ROCm?", history=["what changed in the scheduler yesterday?"])
    assert answer.citations == [502]
    assert "yesterday (Fri Mar 13) in rocm" in answer.text.splitlines()[0]


def test_empty_and_nonsense_questions_get_help(store, settings):
    for text in ("", "   ", "what is the?"):
        answer = _ask(store, settings, text)
        assert answer.citations == [] and "Ask me about what merged in acme/engine" in answer.text
    nonsense = _ask(store, settings, "zyxxy quorple")
    assert nonsense.text.startswith('No PRs merged about "zyxxy", "quorple".') and nonsense.citations == []


def test_answer_text_is_plain_not_escaped(db, settings):
    save_pr(db, make_pr(600, "[Core] Handle <b> & @channel in prompts", merged_at=NOW.replace(hour=9)))
    answer = _ask(db, settings, "what merged today?")
    assert "[#600] [Core] Handle <b> & @channel in prompts" in answer.text


def test_cite_only_keeps_retrieved_prs():
    text, cited = cite_only("Fixed in [#502] and #508, not [#9999] or #77. See [#501].", [501, 502, 508])
    assert text == "Fixed in [#502] and [#508], not or #77. See [#501]."
    assert cited == [501, 502, 508]


def test_cli_ask_json_and_plain(run_cli, store, monkeypatch):
    monkeypatch.setenv("PRDIGEST_REPOS", REPO)
    result = run_cli("ask", "--json", "why", "was", "#501", "reverted?")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert set(data) == {"answer", "citations"} and data["citations"] == [501, 507]
    assert all(get_pr(store, REPO, n) for n in data["citations"])
    plain = run_cli("ask", "#507")
    assert plain.code == 0 and "Sources:" in plain.out and "<https://github.com/acme/engine/pull/507>" in plain.out
    empty = run_cli("ask")
    assert empty.code == 0 and "for example" in empty.out


# ---------------------------------------------------------------- with a model


@pytest.fixture
def model_env(monkeypatch):
    """A fake Chat Completions API and a fake GitHub (for diffs when summarizing), both on 127.0.0.1."""
    pulls = [FakePull(700, "[Core] Summarize me", merged_at=NOW, files=["engine/core/scheduler.py"])]
    with FakeOpenAI(_responder) as api, FakeGitHub({REPO: pulls}) as github:
        monkeypatch.setenv("PRDIGEST_REPOS", REPO)
        monkeypatch.setenv("PRDIGEST_MODEL", "answer-model")
        monkeypatch.setenv("OPENAI_BASE_URL", api.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("PRDIGEST_GITHUB_API_URL", github.url)
        yield api


ANSWER = "The scheduler change [#501] was reverted by [#507] because long prompts starved [#9999]."


def _responder(request: Recorded) -> Reply:
    number = re.search(r"^Number: #(\d+)$", request.user, re.MULTILINE)
    if number:  # a summary request from ensure_summary
        return Reply(summary_reply(number.group(1)))
    return Reply(ANSWER)


def _answer_requests(api: FakeOpenAI) -> list[Recorded]:
    return [r for r in api.requests if not re.search(r"^Number: #", r.user, re.MULTILINE)]


def test_model_answer_cites_only_retrieved_prs(store, model_env):
    settings = Settings.from_env()
    with llm_from_settings(settings) as llm:
        answer = answer_question(store, settings, "why was #501 reverted?", now=NOW, llm=llm)
    assert answer.text == "The scheduler change [#501] was reverted by [#507] because long prompts starved."
    assert answer.citations == [501, 507]
    prompt = _answer_requests(model_env)[-1]
    assert "Question: why was #501 reverted?" in prompt.user
    assert "[#507] Revert #501" in prompt.user and "starved long prompts" in prompt.user
    assert "[#507] reverts [#501]" in prompt.user
    assert "Cite every pull request" in prompt.system


def test_prs_without_summaries_are_summarized_first_and_stored(db, model_env):
    save_pr(db, make_pr(700, "[Core] Summarize me", merged_at=NOW, summary=None))
    settings = Settings.from_env()
    with llm_from_settings(settings) as llm:
        answer = answer_question(db, settings, "#700", now=NOW, llm=llm)
    stored = get_pr(db, REPO, 700)
    assert stored.summary and stored.summary.source == "model:answer-model"
    assert "reworks how PR 700 batches requests" in _answer_requests(model_env)[-1].user
    assert answer.prs[0].summary.source == "model:answer-model"


def test_model_answer_without_citations_shows_what_it_read(store, model_env):
    model_env.script(Reply("Nothing in these PRs says so."))
    settings = Settings.from_env()
    with llm_from_settings(settings) as llm:
        answer = answer_question(store, settings, "scheduler", now=NOW, llm=llm)
    assert answer.text.startswith("Nothing in these PRs says so.\nRelated PRs: [#")
    assert len(answer.citations) == 3 and set(answer.citations) <= {pr.number for pr in answer.prs}


def test_model_failure_raises_and_the_cli_answers_without_it(run_cli, store, model_env):
    model_env.script(*[Reply(status=400, raw=b'{"error": {"message": "model is down"}}')] * 3)
    settings = Settings.from_env()
    with llm_from_settings(settings) as llm, pytest.raises(LLMError, match="model is down"):
        answer_question(store, settings, "scheduler", now=NOW, llm=llm)
    model_env.script(*[Reply(status=400, raw=b'{"error": {"message": "model is down"}}')] * 3)
    result = run_cli("ask", "--json", "scheduler")
    assert result.code == 0 and "model is down" in result.err and len(result.err.strip().splitlines()) == 1
    assert json.loads(result.out)["citations"]
