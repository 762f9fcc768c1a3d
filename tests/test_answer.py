import json
import re
from dataclasses import replace
from datetime import timedelta

import pytest
from pr_factory import REPO, make_pr
from servers.github_api import FakeGitHub, FakePull
from servers.openai_api import FakeOpenAI, Recorded, Reply, summary_reply
from test_search import CORPUS, NOW, _at

from bot.answers.answer import answer_question, cite_only
from bot.answers.empty_store import EMPTY_STORE
from bot.config import Settings
from bot.model.client import LLMError, estimate_tokens, llm_from_settings
from store.model import Summary
from store.retrieval.reading.form import read_form
from store.retrieval.reading.query import Tally
from store.retrieval.thread import Turn, answered_text, turn_from_store
from store.tables.prs import get_pr, save_pr, save_prs


@pytest.fixture
def settings(monkeypatch) -> Settings:
    monkeypatch.setenv("PRDIGEST_REPOS", REPO)
    return Settings.from_env()


# A PR that shares only generic question words ("added", "changes") with the questions below.
DISTRACTOR = make_pr(
    510, "[Misc] Added more logging to the loader", merged_at=_at(13, 15), author="ken-t", areas=["core"],
    files=["engine/model_loader/loader.py"],
    summary=Summary("Added log lines when weights load; the changes touch only logging.", "", "", "", "imported"),
)


@pytest.fixture
def store(db):
    for pr in [*CORPUS, DISTRACTOR]:
        save_pr(db, pr)
    return db


def _ask(db, settings, text, history=(), **kwargs):
    """The answer to `text`, asked after the questions of `history` in one thread, each answered in its turn."""
    turns = []
    for earlier in history:
        answered = answer_question(db, settings, earlier, turns, now=NOW, **kwargs).answered
        turns.append(Turn(earlier, {settings.default_repo: answered}))
    return answer_question(db, settings, text, turns, now=NOW, **kwargs)


def _first(answer) -> str:
    return answer.text.splitlines()[0]


# ---------------------------------------------------------------- the shape of the answer, without a model


def test_time_only_lists_the_whole_day_newest_first_with_its_count(store, settings):
    answer = _ask(store, settings, "what merged yesterday?")
    lines = answer.text.splitlines()
    assert lines[0] == "4 PRs merged yesterday (Fri Mar 13):"
    assert lines[1] == "[#507] Revert #501 (linus-t, Fri Mar 13)"
    assert lines[2] == "    Reverts the earlier admission change because it starved long prompts."
    assert answer.citations == [507, 510, 502, 501]
    assert answer.sources() == []  # every cited PR has its own line: nothing to repeat below


def test_a_long_set_shows_ten_and_says_how_to_list_them_all(db, settings):
    save_prs(db, [make_pr(700 + i, f"[Core] Change {i}", merged_at=_at(14, 8) + timedelta(minutes=i)) for i in range(60)])
    answer = _ask(db, settings, "what merged today?")
    assert _first(answer) == "60 PRs merged today (Sat Mar 14); the 10 newest:"
    assert len(answer.citations) == 50 and answer.citations[0] == 759 and len(answer.listed) == 10
    assert answer.text.splitlines()[-1] == "\u2026and 50 more; `ask --limit 60` lists them all."
    assert answer.sources() == []  # the PRs it leaves out are counted, not listed below it
    assert len(_ask(db, settings, "what merged today?", limit=60).listed) == 60


def test_person_only_and_area_plus_time_are_whole_sets(store, settings):
    # "What did X land?" is what X wrote, then what X merged; "what did X merge?" and "merged by X" what X merged.
    person = _ask(store, settings, "what did ada-l land?")
    assert _first(person) == "4 PRs authored or merged by ada-l:" and person.citations == [508, 502, 504, 505]
    assert _ask(store, settings, "what did ada-l merge?").citations == [504, 505]
    merger = _ask(store, settings, "merged by ada-l")
    assert _first(merger) == "2 PRs merged by ada-l:" and merger.citations == [504, 505]
    area = _ask(store, settings, "ROCm PRs on Mar 13")
    assert _first(area) == "1 PR merged on Fri Mar 13 in rocm:" and area.citations == [502]


def test_count_question_gives_the_number_first(store, settings):
    assert _first(_ask(store, settings, "how many PRs merged yesterday?")) == "4 PRs merged yesterday (Fri Mar 13)."
    assert _first(_ask(store, settings, "how many rocm prs this week?")) == "2 PRs merged this week (since Mon Mar 9) in rocm."
    reverts = _ask(store, settings, "how many PRs were reverted this week?")
    assert _first(reverts) == "1 revert merged this week (since Mon Mar 9): [#507] reverts [#501] because it starved long prompts."


def test_yes_no_question_starts_with_yes_or_no(store, settings):
    reverted = _ask(store, settings, "was #501 reverted?")
    assert _first(reverted) == "Yes: [#507] reverts [#501] because it starved long prompts."
    assert reverted.citations == [507]  # what became of #501 answers; #501 itself is context
    kept = _ask(store, settings, "was #503 reverted?")
    assert _first(kept) == "No PR reverts [#503] in the store." and kept.citations == [503]
    fixed = _ask(store, settings, "did anyone fix the MI300 hang?")
    assert _first(fixed).startswith("Yes: ") and fixed.citations == [508]
    nothing = _ask(store, settings, "did anything change for TPU?")
    assert _first(nothing) == "No PR merged in tpu." and nothing.citations == []


def test_who_question_names_the_people(db, settings):
    save_prs(db, [*CORPUS, make_pr(520, "[Core] Fix the admission check from #501", merged_at=_at(14, 10), author="ken-t",
                                     summary=Summary("Fixes a regression from #501 in the admission check.", "", "", "", "imported"))])
    culprit = _ask(db, settings, "who broke the admission check?")
    assert _first(culprit) == "grace-h ([#501])." and set(culprit.citations) == {520, 501}


def test_who_question_names_the_doers(store, settings):
    answer = _ask(store, settings, "who fixed the MI300 hang?")
    assert _first(answer) == "ada-l ([#508])."
    reverter = _ask(store, settings, "who reverted the scheduler admission change?")
    assert _first(reverter) == "linus-t ([#507])." and reverter.citations == [507]


def test_relation_questions_name_both_sides(store, settings):
    reverts = _ask(store, settings, "what got reverted this week?")
    assert _first(reverts) == "1 revert merged this week (since Mon Mar 9): [#507] reverts [#501] because it starved long prompts."
    assert reverts.citations == [507, 501]
    broke = _ask(store, settings, "what broke the MI300 hang?")
    assert set(broke.citations) == {508, 502}


def test_free_text_cites_only_what_answers(store, settings):
    answer = _ask(store, settings, "anything about the OpenAI-compatible server?")
    assert _first(answer) == "[#504] streams usage stats in chat completions:"
    assert answer.citations == [504]
    # "added" and "changes" are question words, not a topic: the distractor that says them is not cited.
    added = _ask(store, settings, "what changes were added to the scheduler?")
    assert 510 not in added.citations and 501 in added.citations


def test_what_a_named_fix_fixed_is_the_other_pr_alone(store, settings):
    for question in ("#508 fixes a bug from which pr?", "which pr caused the hang that #508 fixed?",
                     "#508: which pr caused the hang it fixes?"):
        answer = _ask(store, settings, question)
        assert _first(answer).startswith("[#508] fixes a problem from [#502]") and answer.citations == [502], question


def test_named_pr_brings_its_relations(store, settings):
    answer = _ask(store, settings, "tell me about #502")
    assert _first(answer) == "[#508] fixes a problem from [#502]: Restores the barrier that #502 removed, which hung MI300 under load."
    assert answer.citations == [502, 508]


def test_relaxed_filters_show_the_nearest_as_context_not_as_answers(store, settings):
    relaxed = _ask(store, settings, "ROCm on Mar 2")
    assert _first(relaxed) == "No PR merged on Mon Mar 2 in rocm. The nearest, which may not answer it:"
    assert relaxed.citations == [] and {pr.number for pr in relaxed.prs} == {502, 508}


def test_each_question_of_a_thread_is_read_once_in_its_own_turn(store, settings, monkeypatch):
    from store.retrieval import search

    read = []
    parse = search.parse_question
    monkeypatch.setattr(search, "parse_question", lambda text, *args, **kwargs: read.append(text) or parse(text, *args, **kwargs))
    thread = []
    for text in ("what merged on mar 13?", "and on mar 12?", "which of those touched rocm?"):
        read.clear()
        answer = answer_question(store, settings, text, thread, now=NOW)
        thread.append(Turn(text, {REPO: answer.answered}))
        assert read == [text]  # not the earlier questions again: the thread keeps each as it was read


def test_a_kept_turn_reads_back_as_it_was_read_and_one_that_cannot_is_read_again(store, settings):
    asked = "not counting linus-t, who merged the most rocm or spec decode work since mar 12? (eagle/mtp too)"
    first = _ask(store, settings, asked)
    kept = answered_text({REPO: first.answered})
    assert turn_from_store("this text is not read again", kept).answered == {REPO: first.answered}
    # Kept by another version, or not at all: the turn is read again from its text.
    for unreadable in (None, "", "{", '{"acme/engine": {"reading": {"format": 0}}}', json.dumps({REPO: {"reading": {}}})):
        assert turn_from_store(asked, unreadable).answered == {}
    follow = answer_question(store, settings, "and on mar 13?", [turn_from_store("what did grace-h write?", "{")], now=NOW)
    assert follow.citations == [501] and follow.follows


def test_follow_up_reuses_the_thread(store, settings):
    answer = _ask(store, settings, "and on ROCm?", history=["what changed in the scheduler yesterday?"])
    assert answer.citations == [502]
    assert "yesterday (Fri Mar 13) in rocm" in _first(answer)


def test_unknown_numbers_and_words(store, settings):
    missing = _ask(store, settings, "why was #99999 reverted?")
    assert missing.citations == [] and "99999 is not in the store" in _first(missing)
    nonsense = _ask(store, settings, "zyxxy quorple")
    assert _first(nonsense) == "No PR in the store mentions zyxxy or quorple." and nonsense.citations == []


def test_empty_questions_get_help(store, settings):
    for text in ("", "   ", "what is the?"):
        answer = _ask(store, settings, text)
        assert answer.citations == [] and "Ask me about what merged in acme/engine" in answer.text


def test_answer_text_is_plain_not_escaped(db, settings):
    save_pr(db, make_pr(600, "[Core] Handle <b> & @channel in prompts", merged_at=NOW.replace(hour=9)))
    answer = _ask(db, settings, "what merged today?")
    assert "[#600] [Core] Handle <b> & @channel in prompts" in answer.text


def test_every_number_an_answer_shows_is_in_the_store(store, settings):
    for text in ("what merged this week?", "why was #501 reverted?", "who fixed the MI300 hang?", "MI300",
                 "was anything reverted?", "how many PRs by grace-h?", "#502 #99999"):
        answer = _ask(store, settings, text)
        shown = {int(n) for n in re.findall(r"\[#(\d+)\]", answer.text)}
        assert shown <= {pr.number for pr in answer.prs}
        assert all(get_pr(store, REPO, n) for n in [*shown, *answer.citations])


def test_cli_ask_json_and_plain(run_cli, store, monkeypatch):
    monkeypatch.setenv("PRDIGEST_REPOS", REPO)
    result = run_cli("ask", "--json", "why", "was", "#501", "reverted?")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert set(data) == {"answer", "citations"} and data["citations"] == [501, 507]
    plain = run_cli("ask", "what merged yesterday?")
    assert plain.code == 0 and "Sources" not in plain.out and "[#" not in plain.out
    assert plain.out.count("#507 <https://github.com/acme/engine/pull/507>") == 1
    assert "[#" not in data["answer"] and "#501" in data["answer"]  # plain text, without the markup of citations
    for nothing in (["ask"], ["ask", "  "]):  # a question is required, as search requires a query
        empty = run_cli(*nothing)
        assert empty.code == 2 and not empty.out and len(empty.err.strip().splitlines()) == 1, nothing


def test_cli_ask_answers_like_a_mention_across_the_configured_repositories(run_cli, store, monkeypatch):
    other = "other/repo"
    save_pr(store, make_pr(41, "[ROCm] Tune the MI300 GEMM configs", repo=other, url=f"https://github.com/{other}/pull/41",
                           merged_at=_at(13, 10), areas=["rocm"]))
    monkeypatch.setenv("PRDIGEST_REPOS", f"{REPO},{other}")
    both = run_cli("ask", "--json", "what merged on mar 13?")
    assert both.code == 0, both.err
    cited = json.loads(both.out)["citations"]
    assert f"{other}#41" in cited and f"{REPO}#501" in cited
    named = json.loads(run_cli("ask", "--json", f"what merged in {other} on mar 13?").out)
    assert named["citations"] == [41]
    limited = json.loads(run_cli("ask", "--json", "--repo", REPO, "what merged on mar 13?").out)
    assert 41 not in limited["citations"] and 501 in limited["citations"]


def test_an_empty_store_says_so_for_every_question(run_cli, db, monkeypatch):
    monkeypatch.setenv("PRDIGEST_REPOS", REPO)
    for args in (["ask", "anything", "on", "rocm?"], ["run", "@prdigest what merged in rocm?"]):
        result = run_cli(*args)
        assert result.code == 0 and result.out == EMPTY_STORE + "\n", args
    assert json.loads(run_cli("ask", "--json", "rocm").out) == {"answer": EMPTY_STORE, "citations": []}


# ---------------------------------------------------------------- with a model


@pytest.fixture
def model_env(monkeypatch):
    """A Chat Completions API and a GitHub (for diffs when summarizing), both on 127.0.0.1."""
    pulls = [FakePull(700, "[Core] Summarize me", merged_at=NOW, files=["engine/core/scheduler.py"])]
    with FakeOpenAI(_responder) as api, FakeGitHub({REPO: pulls}) as github:
        monkeypatch.setenv("PRDIGEST_REPOS", REPO)
        monkeypatch.setenv("PRDIGEST_MODEL", "answer-model")
        monkeypatch.setenv("OPENAI_BASE_URL", api.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("PRDIGEST_GITHUB_API_URL", github.url)
        yield api


ANSWER = "The scheduler change [#501] was reverted by [#507] because long prompts starved."


def _responder(request: Recorded) -> Reply:
    number = re.search(r"^Number: #(\d+)$", request.user, re.MULTILINE)
    if number:  # a summary request from ensure_summary
        return Reply(summary_reply(number.group(1)))
    return Reply(ANSWER)


def _answer_requests(api: FakeOpenAI) -> list[Recorded]:
    return [r for r in api.requests if not re.search(r"^Number: #", r.user, re.MULTILINE)]


def _ledger(db) -> list[tuple]:
    return db.execute("select purpose, model, outcome, tokens_in > 0, tokens_out > 0 from model_calls order by id").fetchall()


def _model_ask(db, text):
    settings = Settings.from_env()
    with llm_from_settings(settings) as llm:
        return answer_question(db, settings, text, now=NOW, llm=llm)


def test_model_answer_follows_the_first_line_and_cites_what_it_was_given(store, model_env):
    answer = _model_ask(store, "why was #501 reverted?")
    assert answer.text == f"[#507] reverts [#501] because it starved long prompts.\n{ANSWER}"
    assert answer.citations == [501, 507]
    prompt = _answer_requests(model_env)[-1]
    assert "Question: why was #501 reverted?" in prompt.user
    assert "First line (already written): [#507] reverts [#501] because it starved long prompts." in prompt.user
    assert "[#507] Revert #501" in prompt.user and "starved long prompts" in prompt.user
    assert "Cite every pull request" in prompt.system
    assert _ledger(store) == [("answer", "answer-model", "ok", 1, 1)]


def test_model_gets_the_answer_set_and_context_marked_apart(store, model_env):
    model_env.script(Reply("[#507] undid [#501]."))
    _model_ask(store, "what reverted #501?")
    prompt = _answer_requests(model_env)[-1].user
    answer_part, _, context_part = prompt.partition("\nContext:\n")
    assert "[#507]" in answer_part and "[#507]" not in context_part
    assert context_part and "[#501]" in context_part


@pytest.mark.parametrize("invented", ["[#99999]", "#99999", "PR 99999", "[#506]", "#506"])
def test_a_number_the_model_invents_is_asked_again_then_its_sentence_dropped(store, model_env, invented):
    bad = f"The revert [#507] undid [#501]. It was later redone in {invented}, which fixed long prompts."
    model_env.script(Reply(bad), Reply(bad))
    answer = _model_ask(store, "why was #501 reverted?")
    assert answer.text == "[#507] reverts [#501] because it starved long prompts.\nThe revert [#507] undid [#501]."
    assert "99999" not in answer.text and "506" not in answer.text
    assert answer.citations == [501, 507]
    retry = _answer_requests(model_env)[-1].user
    assert "Your last answer named" in retry and "citing only [#501], [#507]" in retry
    assert [row[2] for row in _ledger(store)] == ["ok", "ok"]


def test_a_corrected_second_reply_is_used_whole(store, model_env):
    model_env.script(Reply("It was undone in #42424."), Reply("It was undone in [#507] after [#501] starved long prompts."))
    answer = _model_ask(store, "why was #501 reverted?")
    assert answer.text.splitlines()[1] == "It was undone in [#507] after [#501] starved long prompts."


def test_a_reply_left_empty_by_dropping_falls_back_to_the_store(store, model_env):
    model_env.script(Reply("See #42424."), Reply("See #42424."))
    answer = _model_ask(store, "why was #501 reverted?")
    assert "42424" not in answer.text and answer.citations == [501, 507]
    assert answer.text.splitlines()[1].startswith("[#501] [Scheduler] Admit short prompts")


def test_model_answer_without_citations_lists_the_answer_set(store, model_env):
    model_env.script(Reply(_picked([508], "Nothing in these PRs says why.")))
    answer = _model_ask(store, "who fixed the MI300 hang?")
    assert answer.text == "ada-l ([#508]).\nNothing in these PRs says why.\nPRs: [#508]"
    assert answer.citations == [508]


def test_prs_without_summaries_are_summarized_first_and_stored(db, model_env):
    save_pr(db, make_pr(700, "[Core] Summarize me", merged_at=NOW, summary=None))
    answer = _model_ask(db, "#700")
    stored = get_pr(db, REPO, 700)
    assert stored.summary and stored.summary.source == "model:answer-model"
    assert "reworks how PR 700 batches requests" in _answer_requests(model_env)[-1].user
    assert answer.prs[0].summary.source == "model:answer-model"
    assert [row[0] for row in _ledger(db)] == ["summary", "answer", "answer"]  # the reply cited PRs it was not given


def test_no_model_call_when_nothing_answers(store, model_env):
    answer = _model_ask(store, "did anything change for TPU?")
    assert _first(answer) == "No PR merged in tpu." and _answer_requests(model_env) == []


def test_model_failure_is_recorded_and_the_cli_answers_without_it(run_cli, store, model_env):
    model_env.script(*[Reply(status=400, raw=b'{"error": {"message": "model is down"}}')] * 3)
    with pytest.raises(LLMError, match="model is down"):
        _model_ask(store, "scheduler")
    assert _ledger(store)[-1][:3] == ("answer", "answer-model", "error")
    model_env.script(*[Reply(status=400, raw=b'{"error": {"message": "model is down"}}')] * 3)
    result = run_cli("ask", "--json", "scheduler")
    assert result.code == 0 and "model is down" in result.err and len(result.err.strip().splitlines()) == 1
    assert json.loads(result.out)["citations"]


def test_cite_only_marks_allowed_references_and_reports_the_rest():
    text, unknown = cite_only("Fixed in [#502] and #508 (PR 502), not [#9999] or #77.", [501, 502, 508])
    assert text == "Fixed in [#502] and [#508] ([#502]), not [#9999] or #77."
    assert unknown == [9999, 77]


def test_trivial_or_substantial_is_a_filter_and_parts_of_a_day_narrow_it(db, settings):
    save_prs(db, [make_pr(801, "[Doc] Fix a typo", merged_at=_at(13, 9), type="trivial"),
                  make_pr(802, "[Core] Rework the queue", merged_at=_at(13, 10)),
                  make_pr(803, "[Doc] Reword the FAQ", merged_at=_at(13, 19), type="trivial")])
    assert _first(_ask(db, settings, "how many trivial PRs merged yesterday?")) == "2 trivial PRs merged yesterday (Fri Mar 13)."
    evening = _ask(db, settings, "what merged yesterday evening?")
    assert evening.citations == [803] and _first(evening) == "1 PR merged in the evening of Fri Mar 13:"
    morning = _ask(db, settings, "substantial PRs before noon yesterday")
    assert morning.citations == [802]


def test_stats_show_what_answers_cost_apart_from_summaries(run_cli, store, model_env):
    _model_ask(store, "why was #501 reverted?")
    figures = json.loads(run_cli("stats", "--json").out)
    assert figures["answers"][-1]["calls"] == 1 and figures["answers"][-1]["tokens_in"] > 0
    assert figures["days"][-1]["calls"] == 0
    assert "Answers with the model per day" in run_cli("stats").out


# ---------------------------------------------------------------- with a model, the model chooses for questions of words

# Without a model, "long prompts" cites the revert alone; the change it reverted is the next candidate.
LONG_PROMPTS = "did anything change for long prompts?"


def _picked(numbers, text: str = "") -> str:
    """A reply in the shape the answer schema asks for."""
    return json.dumps({"answer": numbers, "text": text})


def _store_alone(db, text):
    return answer_question(db, Settings.from_env(), text, now=NOW)


def test_the_model_may_cite_a_candidate_the_store_left_out(store, model_env):
    assert _store_alone(store, LONG_PROMPTS).citations == [507]
    model_env.script(Reply(_picked([501, 507], "[#501] admitted short prompts sooner; [#507] reverted it.")))
    answer = _model_ask(store, LONG_PROMPTS)
    assert answer.citations == [501, 507] and [pr.number for pr in answer.sources()] == [501, 507]
    # The first line is written from the model's pick, not from the store's cut.
    assert answer.text == ("Yes: [#501] [Scheduler] Admit short prompts one step earlier; [#507] Revert #501.\n"
                           "[#501] admitted short prompts sooner; [#507] reverted it.")
    request = _answer_requests(model_env)[-1]
    assert request.wants_json and request.body["response_format"]["json_schema"]["name"] == "answer_choice"
    assert "Choose the candidates that answer" in request.system
    assert f"Question: {LONG_PROMPTS}" in request.user and "Candidates, best match first:" in request.user
    assert request.user.index("[#507] Revert #501") < request.user.index("[#501] [Scheduler]")  # best first
    assert "What changed: Reverts the earlier admission change because it starved long prompts." in request.user
    assert "Files: engine/core/scheduler.py" in request.user and "areas: core" in request.user
    assert _ledger(store) == [("answer", "answer-model", "ok", 1, 1)]


def test_numbers_the_model_was_not_given_are_dropped_never_cited_or_linked(store, model_env):
    # 506 is in the store but was no candidate; 99999 is nowhere.
    model_env.script(Reply(_picked([99999, 508, 506], "[#508] restored the barrier. It was redone in [#99999] and #506.")))
    answer = _model_ask(store, "who fixed the MI300 hang?")
    assert answer.text == "ada-l ([#508]).\n[#508] restored the barrier."
    assert answer.citations == [508] and [pr.number for pr in answer.prs] == [508]
    assert len(_answer_requests(model_env)) == 1  # a pick is checked, not asked for again


@pytest.mark.parametrize("reply, outcome", [
    (_picked([], "None of these is about long prompts."), "ok"),
    (_picked([99999]), "ok"),
    ("I could not decide.", "unparsed"),
    ('{"answer": [501, "text": ', "unparsed"),
], ids=["empty list", "only numbers not given", "prose", "broken JSON"])
def test_without_a_usable_pick_the_stores_cut_decides(store, model_env, reply, outcome):
    model_env.script(Reply(reply))
    answer = _model_ask(store, LONG_PROMPTS)
    assert answer == _store_alone(store, LONG_PROMPTS)
    assert [row[2] for row in _ledger(store)] == [outcome]


def test_without_a_pick_the_models_text_stays_when_it_cites_the_stores_cut(store, model_env):
    model_env.script(Reply(_picked([], "[#507] undid a change that starved long prompts.")))
    answer = _model_ask(store, LONG_PROMPTS)
    assert answer.text == "Yes: [#507] Revert #501.\n[#507] undid a change that starved long prompts."
    assert answer.citations == [507]


def test_a_server_that_refuses_the_schema_gets_the_same_json_asked_for_in_words(store, model_env):
    model_env.json_schema = "openai"
    model_env.script(Reply(_picked([501], "[#501] admitted short prompts sooner.")), Reply(_picked([507])))
    assert _model_ask(store, LONG_PROMPTS).citations == [501]
    asked = _answer_requests(model_env)
    assert [request.wants_json for request in asked] == [True, False]
    assert asked[0].user == asked[1].user and '"answer"' in asked[1].system
    assert [row[2] for row in _ledger(store)] == ["error", "ok"]
    # Remembered: the next question asks in words at once.
    assert _model_ask(store, LONG_PROMPTS).citations == [507]
    assert [request.wants_json for request in _answer_requests(model_env)] == [True, False, False]
    assert store.execute("select accepted from structured_output").fetchall() == [(0,)]


def test_a_pick_in_a_fence_after_a_preamble_and_reasoning_is_read(store, model_env):
    fenced = f"<think>The revert names 501.</think>\nSure! Here is the JSON:\n```json\n{_picked(['#501'], 'It was [#501].')}\n```"
    model_env.script(Reply(fenced))
    answer = _model_ask(store, LONG_PROMPTS)
    assert answer.citations == [501] and answer.text.endswith("\nIt was [#501].")
    assert store.execute("select accepted from structured_output").fetchall() == [(1,)]


def test_the_candidates_fit_the_prompts_budget(db, model_env, monkeypatch):
    save_prs(db, [make_pr(900 + n, f"[Core] Tune the admission knob {n}", merged_at=NOW - timedelta(hours=n),
                          summary=Summary(f"Tunes admission knob {n} for long prompts.", "", "", "", "imported"))
                  for n in range(40)])
    monkeypatch.setenv("PRDIGEST_SUMMARY_TOKENS", "1000")
    model_env.script(Reply(_picked([939, 900], "[#900] tunes it.")))
    answer = _model_ask(db, "which admission knob changed for long prompts?")
    request = _answer_requests(model_env)[-1]
    assert estimate_tokens(request.system + request.user) <= 1000 and "more, left out for length" in request.user
    assert "[#939]" not in request.user and answer.citations == [900]  # a number left out for length is not given


def test_a_follow_up_picks_among_what_the_model_cited_not_what_the_store_would_have(store, model_env):
    # The store alone cites the revert; the model cites the change it reverted too, and that is what was shown.
    model_env.script(Reply(_picked([501, 507], "[#501] admitted short prompts sooner; [#507] reverted it.")),
                     Reply("[#501] is hers."))
    settings = Settings.from_env()
    with llm_from_settings(settings) as llm:
        first = answer_question(store, settings, LONG_PROMPTS, now=NOW, llm=llm)
        thread = [Turn(LONG_PROMPTS, {REPO: first.answered})]
        follow = answer_question(store, settings, "which of those did grace-h write?", thread, now=NOW, llm=llm)
    assert first.citations == [501, 507] and first.answered.cited == (501, 507)
    assert follow.citations == [501] and follow.follows

# ---------------------------------------------------------------- time order, paths and vLLM's vocabulary


def test_the_first_and_the_last_of_a_day_are_one_pr_each(store, settings):
    assert _ask(store, settings, "which PR merged first on Mar 13?").citations == [501]
    assert _ask(store, settings, "the very last thing to land on friday mar 13").citations == [507]
    assert _ask(store, settings, "the latest ROCm change?").citations == [508]


def test_a_path_keeps_to_the_prs_that_changed_files_under_it(store, settings):
    answer = _ask(store, settings, "what touched engine/core/?")
    assert sorted(answer.citations) == [501, 507]
    assert "touching `engine/core/`" in _first(answer)
    assert _ask(store, settings, "who changed attention.cu?").citations == [508, 502]


def test_a_gpu_named_by_another_of_its_names_finds_its_prs(store, settings):
    assert set(_ask(store, settings, "anything for gfx942?").citations) == {502, 508}


def test_a_day_read_in_another_zone_has_other_prs(store, settings):
    # 20:00 in Los Angeles on Mar 13 is 03:00 UTC on Mar 14.
    assert 507 not in _ask(store, settings, "what merged mar 13 utc?").citations
    assert 507 in _ask(store, settings, "what merged mar 14 utc?").citations


# ---------------------------------------------------------------- tallies, exclusions and areas named together


def test_who_did_the_most_is_a_name_a_count_and_the_leaders_prs(store, settings):
    answer = _ask(store, settings, "who merged the most PRs this week?")
    assert _first(answer) == "linus-t merged the most PRs this week (since Mon Mar 9) (5), then ada-l (2), ken-t (1) and grace-h (1)."
    assert sorted(answer.citations) == [501, 503, 506, 507, 510]
    leaving_out = _ask(store, settings, "not counting linus-t, who merged the most this week?")
    assert _first(leaving_out).startswith("ada-l merged the most PRs")


def test_the_busiest_area_is_named_with_its_count(store, settings):
    answer = _ask(store, settings, "which area was busiest this week?")
    assert _first(answer).startswith("core was the busiest area this week (since Mon Mar 9) (3 PRs), then")


def test_areas_named_together_mean_a_pr_in_both(store, settings):
    assert _ask(store, settings, "rocm attention work?").citations == [502]
    assert sorted(_ask(store, settings, "rocm or attention work?").citations) == [502, 508]


def test_an_area_a_topic_or_a_person_left_out_is_left_out_and_the_first_line_says_so(store, settings):
    answer = _ask(store, settings, "what merged on mar 13 that isn't core?")
    assert answer.citations == [502]
    assert _ask(store, settings, "anything on mar 12 that isn't a frontend change?").citations == [503]
    assert _ask(store, settings, "mar 13 merges besides core").citations == [502]
    # A topic that is no area: PRs whose title or first sentence says it are left out.
    topic = _ask(store, settings, "anything on mar 12 apart from the streaming one?")
    assert topic.citations == [503] and _first(topic) == '1 PR merged on Thu Mar 12 leaving out "streaming":'
    person = _ask(store, settings, "what landed on mar 13 that was not merged by linus-t?")
    assert person.citations == [502] and "leaving out linus-t" in _first(person)
    # What something is done without is not a topic left out: the answer leaves nothing out, and owes no note.
    without = _ask(store, settings, "anything on mar 12 without streaming?")
    assert _first(without) == "2 PRs merged on Thu Mar 12:" and sorted(without.citations) == [503, 504]


def test_only_a_question_that_leans_back_takes_the_threads_topic(store, settings):
    leak = ["what changed in the scheduler yesterday?"]
    counted = _ask(store, settings, "how many PRs merged on mar 12?", history=leak)
    assert _first(counted) == "2 PRs merged on Thu Mar 12." and sorted(counted.citations) == [503, 504]
    assert _ask(store, settings, "anything for speculative decoding?", history=["what merged on mar 12?"]).citations == [503]
    who = _ask(store, settings, "who wrote them?", history=["ROCm PRs on Mar 13"])
    assert _first(who).startswith("ada-l")


def test_a_time_after_the_newest_pr_says_where_the_store_ends(store, settings):
    answer = answer_question(store, settings, "what merged this week?", now=NOW + timedelta(days=60))
    assert _first(answer).startswith("No PR merged this week") and "newest PR in the store merged on Sat Mar 14, 2026" in _first(answer)


def test_how_do_i_answers_with_the_sentence_that_tells_how(store, settings):
    save_pr(store, make_pr(
        520, "[Frontend] Cap the images a prompt may carry", merged_at=_at(12, 18), areas=["frontend"],
        summary=Summary("Requests over the cap now get a 400 instead of running out of memory. "
                        "Pass `--limit-mm-per-prompt image=4` to set the cap.", "", "", "", "imported"),
    ))
    answer = _ask(store, settings, "how do i cap the images in one prompt?")
    assert _first(answer) == "Pass `--limit-mm-per-prompt image=4` to set the cap. [#520]" and answer.citations == [520]


def test_a_question_about_risks_is_answered_from_what_prs_risk_not_what_they_fix(store, settings):
    # 506 stops nightly builds drifting; 503 names drifting builds among its risks.
    assert _ask(store, settings, "which PRs risk nightly builds drifting?").citations == [503]
    assert _ask(store, settings, "did anything fix nightly builds drifting?").citations == [506]


def test_what_a_named_pr_did_to_another_is_answered_with_the_other(store, settings):
    assert _ask(store, settings, "what did #507 revert?").citations == [501]


def test_the_first_line_answers_and_a_word_no_pr_says_is_noted_only_when_it_decides(store, settings):
    answer = _ask(store, settings, "did anyone fix the zorbling in chat completions streaming?")
    assert _first(answer).startswith("Yes: [#504]") and "zorbling" not in _first(answer)
    # As in a real store, fixes are many: "fix" alone says little.
    save_prs(store, [make_pr(900 + n, f"[Bugfix] Fix engine thing {n}", merged_at=_at(3, n)) for n in range(12)])
    nothing = _ask(store, settings, "did anyone fix the zorbling quuxes?")
    assert _first(nothing).startswith("No: ") and "merged" not in _first(nothing).split(".")[0]


def test_chatter_no_pr_says_weighs_as_one_word_and_a_relation_is_said_once(store, settings):
    chatty = _ask(store, settings, "our pods kept grumbling, wobbling, sputtering and flailing: did the MI300 hang get fixed?")
    assert chatty.citations == [508]
    reverted = _ask(store, settings, "what reverted the scheduler admission change?")
    assert _first(reverted).count("reverts") == 1
    assert reverted.citations == [507]  # what was asked for is the revert; the change it names is context


def test_the_files_asked_about_are_a_topic_every_candidate_says(db, settings):
    save_prs(db, [make_pr(900 + n, f"[Bugfix] Fix engine thing {n}", merged_at=_at(10, n), files=[f"engine/m{n}.py"])
                  for n in range(20)])
    save_prs(db, [make_pr(950, "[ROCm] Fix the MI300 barrier", merged_at=_at(12), files=["csrc/rocm/attention.cu"]),
                  make_pr(951, "[ROCm] Tune the MI300 tile sizes", merged_at=_at(13), files=["csrc/rocm/tiles.cu"])])
    # "fix" is in nearly every PR: beside the files asked about it grades, and does not decide.
    assert sorted(_ask(db, settings, "fixes under csrc/rocm/").citations) == [950, 951]
    assert _ask(db, settings, "the barrier under csrc/rocm/").citations == [950]


def test_a_doubting_yes_no_is_answered_no_by_a_fix_or_a_revert(store, settings):
    fixed = _ask(store, settings, "does the MI300 still hang under load?")
    assert _first(fixed).startswith("No: fixed by [#508]")
    reverted = _ask(store, settings, "did the change to admit short prompts earlier stick?")
    assert _first(reverted) == "No: [#507] reverts [#501] because it starved long prompts."
    kept = _ask(store, settings, "did the FP8 KV cache for the Triton backend stick?")
    assert _first(kept).startswith("Yes") and kept.citations == [505]
    # "or is it still hardcoded" doubts nothing the PR fixed.
    assert _first(_ask(store, settings, "can the MI300 hang be avoided now, or is it still there?")).startswith("Yes")


def test_humans_and_maintainers_in_a_tally_leave_the_bots_out(db, settings):
    save_prs(db, [make_pr(960 + n, f"[Core] Change {n}", merged_at=_at(13, n + 1), merged_by="merge-bot") for n in range(3)]
             + [make_pr(970 + n, f"[Core] Tweak {n}", merged_at=_at(13, n + 8), merged_by="linus-t") for n in range(2)])
    answer = _ask(db, settings, "which human maintainer merged the most on mar 13?")
    assert _first(answer).startswith("linus-t merged the most") and sorted(answer.citations) == [970, 971]


def test_what_someone_merged_is_what_they_merged_and_else_what_they_landed(db, settings):
    save_prs(db, [make_pr(972, "[Core] Tweak the queue", merged_at=_at(13, 8), author="linus-t", merged_by="merge-bot"),
                  make_pr(973, "[Core] Tweak the cache", merged_at=_at(13, 9), author="ada-l", merged_by="linus-t"),
                  make_pr(974, "[Core] Tweak the loader", merged_at=_at(12, 9), author="ada-l", merged_by="merge-bot")])
    merged = _ask(db, settings, "what did linus-t merge on mar 13?")
    assert _first(merged) == "1 PR merged by linus-t on Fri Mar 13:" and merged.citations == [973]
    landed = _ask(db, settings, "what did ada-l merge on mar 12?")
    assert landed.citations == [974]


def test_prs_that_werent_from_bots_or_werent_fixes_leave_out_what_bots_wrote_or_the_fixes(db, settings):
    save_prs(db, [make_pr(975, "[Doc] Fix a typo", merged_at=_at(13, 8), author="ada-l", merged_by="vllm-bot"),
                  make_pr(976, "Bump actions/checkout from 5 to 6", merged_at=_at(13, 9), author="dependabot[bot]",
                          merged_by="ada-l"),
                  make_pr(977, "[Core] Add a queue limit", merged_at=_at(13, 10), author="ken-t", merged_by="ada-l")])
    humans = _ask(db, settings, "which prs on mar 13 weren't from bots?")
    assert sorted(humans.citations) == [975, 977]
    not_merged = _ask(db, settings, "which prs on mar 13 were not merged by vllm-bot?")
    assert sorted(not_merged.citations) == [976, 977]
    not_fixes = _ask(db, settings, "which prs on mar 13 weren't bugfixes?")
    assert sorted(not_fixes.citations) == [976, 977]


def test_of_the_reverts_shown_the_same_day_ones_are_the_reverts_or_both_sides_as_asked(store, settings):
    shown = ["what got reverted this week?"]
    assert _ask(store, settings, "which of those was undoing something from the same day?", shown).citations == [507]
    both = _ask(store, settings, "which of those was merged and reverted on the same day?", shown)
    assert sorted(both.citations) == [501, 507]


def test_risks_said_in_their_own_words_answer_a_risk_question(db, settings):
    save_prs(db, [make_pr(900 + n, f"[Core] Change engine part {n}", merged_at=_at(10, n)) for n in range(20)])
    save_prs(db, [
        make_pr(980, "[Kernel] JIT-compile the grouped GEMM", merged_at=_at(12, 9),
                summary=Summary("Compiles the grouped GEMM on first use.", "", "Adds about 30 seconds to startup on a cold cache.", "", "imported")),
        make_pr(981, "[Core] Speed up startup by caching configs", merged_at=_at(12, 10),
                summary=Summary("Startup reads cached configs instead of probing.", "", "Stale caches need a manual wipe.", "", "imported")),
        make_pr(982, "[Kernel] Atomic split reduction", merged_at=_at(12, 11),
                summary=Summary("Splits the reduction across blocks.", "", "Results are order-dependent, no longer bit-identical.", "", "imported")),
        make_pr(983, "[Sampler] Make seeded sampling deterministic", merged_at=_at(12, 12),
                summary=Summary("Seeded outputs are now reproducible run to run.", "", "None.", "", "imported")),
    ])
    slower = _ask(db, settings, "which changes could make startup slower?")
    assert slower.citations == [980]  # the PR that speeds startup up is not a risk to it
    assert _ask(db, settings, "anything that could make outputs nondeterministic?").citations == [982]
    # The PR that makes sampling deterministic fixes what the question fears; the one that risks it answers.
    assert _ask(db, settings, "which changes make outputs nondeterministic?").citations == [982]
    assert _ask(db, settings, "which prs warn about nondeterminism?").citations == [982]


def test_a_pr_only_in_the_broader_topic_is_not_the_answer(store, settings):
    # Nothing says bitsandbytes; the FP8 PR is quantization work, shown as nearest, not cited.
    answer = _ask(store, settings, "bitsandbytes updates?")
    assert answer.citations == [] and "505" in answer.text


def test_no_relation_on_a_day_says_which_relation_not_that_nothing_merged(store, settings):
    assert _first(_ask(store, settings, "were there any reverts on mar 12?")) == "No revert merged on Thu Mar 12."


def test_a_yes_no_after_what_it_is_about_is_answered_yes_or_no(store, settings):
    late = _ask(store, settings, "the MI300 kept hanging under load for us, did anybody fix that?")
    assert _first(late).startswith("Yes: [#508]")
    dash = _ask(store, settings, "usage stats while streaming chat completions \u2014 is that in now?")
    assert _first(dash).startswith("Yes: [#504]")
    # A question that asks what or which stays a list, whatever follows.
    assert not _first(_ask(store, settings, "what fixed the MI300 hang, and did it stick?")).startswith(("Yes", "No:"))


def test_a_doubt_that_names_no_problem_or_no_revert_is_not_a_no(store, settings):
    assert _first(_ask(store, settings, "did #505 stick?")) == "Yes: nothing in the store reverts [#505]."
    # "still" without a problem is no doubt to answer with a fix.
    assert not _first(_ask(store, settings, "is the MI300 fused attention kernel still enabled?")).startswith("No: fixed")
    # A question about what is wrong is not a question of what is left out.
    assert 508 in _ask(store, settings, "why isn't the MI300 hang fixed?").citations


def test_a_question_of_how_things_stand_now_is_answered_no_by_a_revert(store, settings):
    assert _first(_ask(store, settings, "is the short prompt admission change in the scheduler live now?")).startswith("No: [#507]")


def test_a_pr_is_left_out_for_an_area_only_when_it_is_about_it(db, settings):
    save_prs(db, [
        make_pr(990, "[ROCm] Enable the block-scale MoE kernel on MI300X", merged_at=_at(13, 9),
                areas=["rocm", "ci"], files=["csrc/rocm/moe.cu", ".buildkite/test-pipeline.yaml"]),
        make_pr(991, "[ROCm][CI] Fix the nightly MI300 job", merged_at=_at(13, 10),
                areas=["rocm", "ci"], files=[".buildkite/test-pipeline.yaml"]),
    ])
    # The kernel PR also touches a CI file; it is not about CI.
    assert _ask(db, settings, "ROCm PRs on mar 13 that aren't CI").citations == [990]
    assert _ask(db, settings, "what merged on mar 13 after 9:30am PT?").citations == [991]


def test_what_a_person_authored_said_with_a_verb(store, settings):
    authored = _ask(store, settings, "what did ada-l author?")
    assert _first(authored) == "2 PRs authored by ada-l:" and authored.citations == [508, 502]


def test_the_bot_addressed_by_name_in_plain_text_is_no_person(store, settings):
    answer = _ask(store, settings, "@prdigest how many PRs merged on mar 12?")
    assert _first(answer) == "2 PRs merged on Thu Mar 12."


def test_words_no_pr_says_drop_out_when_areas_together_a_relation_or_a_tally_still_pick_prs(store, settings):
    both = _ask(store, settings, "anything at the crossroads of rocm and attention?")
    assert both.citations == [502] and "crossroads" not in _first(both)
    undone = _ask(store, settings, "what got reverted, and what did the reverts unmake?")
    assert undone.citations == [507, 501]
    tally = _ask(store, settings, "who was the most zealous author this week?")
    assert _first(tally).startswith("ken-t authored the most PRs this week (since Mon Mar 9) (3)")
    # One area, or a time alone, is no such filter: the word no PR says is what was asked about.
    assert _ask(store, settings, "anything on the rust frontend?").citations == []
    assert _ask(store, settings, "anything for gaudi this week?").citations == []


def test_a_relation_asked_of_what_an_earlier_answer_gave_is_asked_of_its_prs(store, settings):
    # grace-h wrote 501 (reverted by 507) and 504: "any of that" is those PRs, and the answer is the revert.
    reverted = _ask(store, settings, "was any of that reverted?", history=["what did grace-h write on mar 12 and 13?"])
    assert reverted.citations == [507] and _first(reverted).startswith("Yes: [#507] reverts [#501]")
    # "it" may be the other side of the relation the earlier answer stated.
    fixed = _ask(store, settings, "did anything fix it?", history=["what did ada-l enable on MI300?"])
    assert fixed.citations == [508]


def test_an_area_named_with_its_noun_is_the_whole_area(store, settings):
    save_prs(store, [
        make_pr(530, "[CPU] Bind threads to cores", merged_at=_at(13, 18), areas=["cpu"],
                summary=Summary("The CPU backend binds each worker thread to one core.", "", "", "", "imported")),
        make_pr(531, "[CPU] Add an AVX2 fallback", merged_at=_at(13, 19), areas=["cpu"],
                summary=Summary("x86 machines without AVX-512 run the paged attention kernel.", "", "", "", "imported")),
    ])
    # "the CPU backend" (an alias of the area) is the CPU area, not only its PRs that say "backend".
    assert set(_ask(store, settings, "what happened on the CPU backend yesterday?").citations) == {530, 531}


def test_a_follow_up_keeps_the_shape_and_what_the_thread_left_out(store, settings):
    tally = _ask(store, settings, "and on mar 12?", history=["not counting linus-t, who merged the most on mar 13?"])
    assert _first(tally).startswith("ada-l merged the most PRs on Thu Mar 12 leaving out linus-t (1)")
    counted = _ask(store, settings, "and on mar 12?", history=["how many PRs merged on mar 13?"])
    assert _first(counted) == "2 PRs merged on Thu Mar 12."
    # A relation word inside what is left out asks for no relation.
    assert _ask(store, settings, "what did linus-t write other than the revert?").citations == [506]


def test_a_fix_that_names_a_pr_is_a_follow_up_of_it(store, settings):
    # 508 fixes a hang 502 caused: asked for follow-ups of 502, it answers.
    followed = _ask(store, settings, "did anything follow up on #502?")
    assert followed.citations == [508]
    assert read_form("the call never comes back, any fix?").relation is None


def test_a_mistyped_common_word_is_no_topic_and_owes_no_note(store, settings):
    answer = _ask(store, settings, "rocm wrok on mar 13?")
    assert answer.citations == [502] and "mentions" not in _first(answer)


def test_who_did_it_after_a_relation_cites_the_side_that_did_it(store, settings):
    who = _ask(store, settings, "who wrote it?", history=["what reverted #501?"])
    assert who.citations == [507] and _first(who) == "linus-t ([#507])."


def test_a_narrower_word_among_the_risks_stands_beside_the_word_asked(store, settings):
    save_prs(store, [
        make_pr(540, "[Core] Keep a second block table", merged_at=_at(13, 12), areas=["core"],
                summary=Summary("Keeps a shadow block table.", "", "It raises memory use by a few MB per request.", "",
                                "imported")),
        make_pr(541, "[Kernel] Capture more CUDA graphs", merged_at=_at(13, 13), areas=["kernels"],
                summary=Summary("Captures graphs for more sizes.", "", "About 250 MB of GPU memory goes to the graphs.", "",
                                "imported")),
    ])
    assert set(_ask(store, settings, "which changes yesterday could raise memory use?").citations) == {540, 541}


def test_they_in_a_follow_up_are_the_people_who_wrote_the_earlier_answer(store, settings):
    # 503, 505 and 510 are ken-t's; after a question that cited 503, "they" is ken-t, about anything, and "else"
    # leaves out 503.
    they = _ask(store, settings, "what else did they land this week?", history=["who wrote the EAGLE tied embeddings change?"])
    assert they.citations == [510, 505] and _first(they).startswith("2 PRs authored by ken-t this week")
    assert set(_ask(store, settings, "what did they land this week?", history=["who wrote the EAGLE tied embeddings change?"]).citations) == {503, 505, 510}
    # "them" is the PRs: "who merged them?" keeps to what the earlier question asked.
    assert _ask(store, settings, "who merged them?", history=["ROCm PRs on Mar 13"]).citations == [502]
    assert read_form("did it cause problems later?").relation == "fixes"


def test_a_yes_no_about_a_relation_nothing_states_is_answered_no_about_the_prs_it_named(store, settings):
    # Nothing relands the admission change (501): the answer is no, about it.
    relanded = _ask(store, settings, "was the short prompt admission change ever relanded?")
    assert _first(relanded).startswith("No PR follows up on [#501]")
    assert read_form("has async scheduling been turned back on?").relation == "follows"


def test_prs_that_did_not_touch_a_folder(store, settings):
    # Mar 13: 501 and 507 change engine/core/, 502 changes csrc/rocm/.
    assert _ask(store, settings, "which mar 13 prs didn't touch anything under engine/?").citations == [502]


def test_a_tally_stays_a_tally_through_several_follow_ups_and_a_relative_that_is_no_pointer(store, settings):
    thread = ["who merged the most on mar 13?", "and on mar 12?"]
    assert _first(_ask(store, settings, "and mar 11?", history=thread)).startswith("ada-l merged the most PRs on Wed Mar 11")
    # "anything that touched rocm" asks about ROCm, not about what the earlier answer cited.
    rocm = _ask(store, settings, "was anything that touched rocm reverted?", history=["what merged on mar 13?"])
    assert 507 not in rocm.citations


def test_which_of_those_picks_among_what_the_earlier_answer_cited(store, settings):
    # Mar 13 brought 501, 502, 507 and 510. Of those, 507 reverts 501 and 502 is ROCm (508, also ROCm, is Mar 14's).
    thread = ["what merged on mar 13?"]
    assert _ask(store, settings, "which of those was a revert?", history=thread).citations == [507]
    assert _ask(store, settings, "which one of those touched rocm?", history=thread).citations == [502]
    none = _ask(store, settings, "which of those were trivial?", history=thread)
    assert none.citations == [] and "among those 4" in _first(none)
    assert _ask(store, settings, "which of those got reverted?", history=thread).citations == [501]


def test_newer_in_a_follow_up_is_after_the_earlier_time(store, settings):
    # grace-h wrote 509 (Mar 2), 504 (Mar 12) and 501 (Mar 13).
    newer = _ask(store, settings, "anything newer from her?", history=["what did grace-h write on mar 12?"])
    assert newer.citations == [501] and "since then" in _first(newer)


def test_a_tally_or_count_of_nothing_in_particular_is_of_every_pr(store, settings):
    assert _first(_ask(store, settings, "who merged the most prs across all the reports?")).startswith(
        "linus-t merged the most PRs in the store (6)")
    assert _first(_ask(store, settings, "how many prs are there?")) == "10 PRs merged in the store."
    assert _ask(store, settings, "which pr undid the admission change?").citations == [507]


def test_the_biggest_or_the_largest_gain_is_one_pr(store, settings):
    save_prs(store, [
        make_pr(550, "[Perf] Batch the sampler", merged_at=_at(13, 14), areas=["core"], files=["a.py", "b.py", "c.py"],
                summary=Summary("Sampling runs once per batch, so decode is 1.3x faster.", "", "", "", "imported")),
        make_pr(551, "[Perf] Fuse the rotary kernel", merged_at=_at(13, 15), areas=["kernels"], files=["k.cu"],
                summary=Summary("A fused rotary kernel makes decode 45% faster on long prompts.", "", "", "", "imported")),
    ])
    biggest = _ask(store, settings, "biggest pr yesteday by files changed")
    assert biggest.citations == [550] and _first(biggest) == "The largest PR (most files changed) merged yesterday (Fri Mar 13): [#550] batches the sampler."
    assert _ask(store, settings, "which pr yesterday claimed the largest decode speedup?").citations == [551]
    first = _ask(store, settings, "what was the first pr merged yesterday?")
    assert first.citations == [501] and _first(first).startswith("The first PR merged yesterday (Fri Mar 13): [#501] ")


def test_who_wrote_a_named_pr_or_the_original_in_a_thread_is_its_author(store, settings):
    # 507 reverts 501 (grace-h's): "who wrote #501?" is grace-h, not the author of the revert.
    named = _ask(store, settings, "who wrote #501?")
    assert named.citations == [501] and _first(named) == "grace-h ([#501])."
    original = _ask(store, settings, "who wrote the original one?", history=["any reverts yday?"])
    assert original.citations == [501]


def test_a_known_phrase_no_pr_says_is_asked_as_its_words(db, settings):
    save_prs(db, [*CORPUS, make_pr(560, "[Spec Decode] Add a suffix-tree proposer", merged_at=_at(13, 16), author="mei-l",
                                     areas=["speculative-decoding"],
                                     summary=Summary("A suffix tree of earlier outputs proposes draft tokens.", "", "", "", "imported"))])
    # "suffix decoding" is a kind of speculative decoding; no PR says the phrase, 560 says "suffix".
    assert _first(_ask(db, settings, "who wrote the suffix decoding pr?")) == "mei-l ([#560])."


def test_a_relation_asked_of_a_named_pr_cites_the_other_side_the_way_it_was_asked(db, settings):
    # 521 follows up on 520, which follows up on 501.
    save_prs(db, [
        *CORPUS,
        make_pr(520, "[Core] Tune the admission step", merged_at=_at(14, 8),
                summary=Summary("Follow-up to #501: the admission step waits for one more token.", "", "", "", "imported")),
        make_pr(521, "[Doc] Describe the admission step", merged_at=_at(14, 9),
                summary=Summary("Follow-up to #520 that documents the new wait.", "", "", "", "imported")),
    ])
    assert _ask(db, settings, "follow-ups to #520?").citations == [521]
    assert _ask(db, settings, "which pr was the followup to 520").citations == [521]
    assert _ask(db, settings, "what did #520 follow up on?").citations == [501]


def test_what_the_bot_merged_is_what_any_bot_merged(db, settings):
    save_prs(db, [
        *CORPUS,
        make_pr(570, "[CI] Bump the runner image", merged_at=_at(13, 7), merged_by="vllm-bot", type="trivial"),
        make_pr(571, "[Core] Drop a dead branch", merged_at=_at(13, 8), merged_by="mergify[bot]"),
    ])
    merged = _ask(db, settings, "what did the bot merge yesterday?")
    assert merged.citations == [571, 570] and _first(merged) == "2 PRs merged by bots yesterday (Fri Mar 13):"
    assert _ask(db, settings, "prs the bot merged yesterday, leaving out the trivial ones").citations == [571]


def test_a_short_plural_is_said_only_as_itself(db, settings):
    # The index stems "mps" to "mp", which 580's file name says.
    save_prs(db, [*CORPUS, make_pr(580, "[KV Connector] Clean up the connectors", merged_at=_at(13, 16),
                                     files=["engine/kv_connector/lmcache_mp_connector.py"])])
    assert _ask(db, settings, "anything for apple silicon / mps?").citations == []


def test_a_topic_word_typed_with_one_slip_is_the_word_meant(store, settings):
    # No PR says "attnetion"; one slip from the attention area's name, it is that area.
    assert _ask(store, settings, "rocm attnetion work?").citations == [502]
    # A word some PR says is taken as typed, even one slip from a topic word; six letters are enough to mend.
    assert _ask(store, settings, "anything about the docker base image?").citations == [506]
    assert _ask(store, settings, "anything about a bakend?").citations == [505]


def test_it_in_a_follow_up_is_the_one_pr_the_earlier_answer_put_first(store, settings):
    earlier = _ask(store, settings, "anything on MI300?")
    assert len(earlier.citations) > 1
    who = _ask(store, settings, "who wrote it?", history=["anything on MI300?"])
    assert who.citations == earlier.citations[:1]


def test_which_pr_asks_for_one(db, settings):
    save_prs(db, [
        *CORPUS,
        make_pr(590, "[Frontend] Add the --stream-budget flag", merged_at=_at(10, 9)),
        make_pr(591, "[Bugfix] Honour the --stream-budget flag when streaming", merged_at=_at(12, 9)),
    ])
    # Both say it in their titles; the one that added it came first.
    assert _ask(db, settings, "which pr added --stream-budget?").citations == [590]
    assert set(_ask(db, settings, "prs about --stream-budget?").citations) == {590, 591}


def test_what_a_named_pr_does_cites_it_and_tells_what_relates_as_context(store, settings):
    does = _ask(store, settings, "what does #501 do?")
    assert does.citations == [501] and _first(does) == "[#507] reverts [#501] because it starved long prompts." and 507 in {pr.number for pr in does.prs}


def test_earlier_in_a_follow_up_is_before_the_earlier_time_and_a_superlative_alone_is_of_every_pr(store, settings):
    # grace-h wrote 509 (Mar 2), 504 (Mar 12) and 501 (Mar 13).
    earlier = _ask(store, settings, "and her earlier work?", history=["what did grace-h write on mar 12?"])
    assert earlier.citations == [509] and "before then" in _first(earlier)
    assert _first(_ask(store, settings, "largest pr by files changed?")).startswith("The largest PRs (most files changed) merged in the store")


def test_how_to_cites_the_one_pr_that_tells_how(db, settings):
    save_prs(db, [
        *CORPUS,
        make_pr(600, "[Frontend] Shed load when the waiting queue is long", merged_at=_at(12, 9),
                summary=Summary("With `--max-waiting-requests N`, a request that would make the waiting queue longer than N "
                                "gets a 503 at once.", "", "", "", "imported")),
        make_pr(601, "[Metrics] Count the requests shed from the waiting queue", merged_at=_at(13, 9),
                summary=Summary("Counts the requests that `--max-waiting-requests` turned away with a 503 when the "
                                "waiting queue was too long.", "", "", "", "imported")),
    ])
    answer = _ask(db, settings, "how do i make the server return 503s when the waiting queue is too long?")
    assert answer.citations == [600] and "`--max-waiting-requests N`" in _first(answer)


def test_what_a_question_leaves_out_alone_is_of_every_pr(store, settings):
    # Nothing but whom to leave out: every PR kept, not "no PR merged".
    answer = _ask(store, settings, "prs not merged by linus-t")
    assert set(answer.citations) == {502, 504, 505, 508} and _first(answer).startswith("4 PRs merged in the store leaving out")


def test_a_compound_made_up_for_the_question_is_asked_as_its_words(store, settings):
    # No PR says "admit-short-prompts-sooner" in one piece; 501 says its words.
    assert _ask(store, settings, "anything about the admit-short-prompts-sooner thing?").citations == [501]


def test_relations_read_right_way_round_in_threads_and_by_number(db, settings):
    save_prs(db, [*CORPUS, make_pr(511, "[Bugfix] Fix the barrier broken by #508", merged_at=_at(14, 12),
                                     summary=Summary("Restores a fence that #508 broke.", "", "", "", "imported"))])
    # 508 fixed a problem from 502; 511 fixed one from 508.
    assert _ask(db, settings, "what did #508 fix?").citations == [502]
    assert _ask(db, settings, "what did #508 break?").citations == [511]
    assert _ask(db, settings, "which of those broke something?", history=["what merged on mar 13?"]).citations == [502]
    assert _ask(db, settings, "what reverted any of those?", history=["what merged on mar 13 in the scheduler?"]).citations == [507]
    assert _first(_ask(db, settings, "who wrote it?", history=["what does #501 do?"])) == "grace-h ([#501])."
    # Leaving out what the earlier answer cited says so, rather than that nothing was written.
    assert _first(_ask(db, settings, "what else did she land?", history=["what did ada-l write?"])) == (
        "No PR authored by ada-l besides those 2.")


def test_a_superlative_is_one_only_when_it_ranks_prs(db, settings):
    save_prs(db, [
        *CORPUS,
        make_pr(612, "[CI] Run the multi-node job on 8x H100 nodes", merged_at=_at(13, 6), files=["a", "b", "c", "d"]),
        make_pr(613, "[Perf] Batch the detokenizer", merged_at=_at(13, 7),
                summary=Summary("Detokenizing in batches makes streaming 20% faster.", "", "", "", "imported")),
    ])
    # "8x H100" is no gain; 613's 20% is.
    assert _ask(db, settings, "biggest speedup yesterday?").citations == [613]
    assert read_form("who merged the largest number of prs?").tally is Tally.MERGER
    assert _ask(db, settings, "best-of-n sampling changes?").citations == []


def test_picking_among_the_earlier_prs_keeps_to_them_whatever_time_the_thread_asked(store, settings):
    # 507 reverted 501 on Mar 13: "later" is about what relates to those PRs, not a time they must fall in.
    later = _ask(store, settings, "which of those got reverted later?", history=["what merged on mar 13?"])
    assert later.citations == [501] and _first(later) == "[#507] reverts [#501] because it starved long prompts."
    assert _ask(store, settings, "which of those landed on mar 12?", history=["what did grace-h write?"]).citations == [504]


def test_an_area_and_a_topic_said_only_apart_answer_nothing(store, settings):
    # Streaming is 504's subject, and ROCm 502's and 508's, but no PR is both.
    apart = _ask(store, settings, "any streaming work on rocm?")
    assert apart.citations == [] and _first(apart).startswith("No PR in the store is about streaming in rocm.")
    assert _ask(store, settings, "any streaming work?").citations == [504]


def test_him_and_since_in_a_thread_and_a_fix_of_a_bare_number(store, settings):
    assert _ask(store, settings, "anything from him on mar 11?", history=["what did ken-t write?"]).citations == [505]
    assert _ask(store, settings, "any new ones since?", history=["rocm work on mar 13"]).citations == [508]
    # 508 fixed what 502 broke: 502, named, is no answer.
    assert _ask(store, settings, "anything fixing 502?").citations == [508]


def _stating(number: int, title: str, hour: int, what: str, impact: str = ""):
    """A PR merged on Mar 13 that says what it changed and, in its impact, what that gained."""
    return make_pr(number, title, merged_at=_at(13, hour), summary=Summary(what, impact, "", "", "imported"))


def _relanded_default():
    """630 turned async scheduling on by default, 631 reverted it and 632 relanded it."""
    return [
        _stating(630, "[Core] Turn on async scheduling by default", 1, "Async scheduling is on by default."),
        _stating(631, 'Revert "[Core] Turn on async scheduling by default" (#630)', 2, "Reverts #630: it hung pipelines."),
        _stating(632, "[Core] Reland async scheduling by default", 3, "Relands #630 with the pipeline hang fixed."),
    ]


def test_is_it_on_by_default_after_a_list_is_asked_of_what_the_list_cited(db, settings):
    save_prs(db, [_stating(630, "[Core] Turn on async scheduling by default", 1, "Async scheduling is on by default."),
                  _stating(634, 'Revert "[Kernel] Use the new attention kernel by default" (#600)', 2,
                           "Reverts #600: the new kernel is no longer the default.")])
    answer = _ask(db, settings, "is it on by default now?", ["what changed around async scheduling?"])
    assert _first(answer).startswith("Yes: [#630]") and answer.citations == [630]


def test_what_a_reland_relands_is_what_the_revert_took_out(db, settings):
    save_prs(db, [*_relanded_default(), _stating(633, "[Core] Reland the pipeline fix", 4,
                                                 "Relands what #631 took out: see #630, and follows up on #632.")])
    answer = _ask(db, settings, "what does #633 reland?")
    assert answer.citations == [630]


def test_the_largest_gain_is_the_one_stated_in_what_was_asked(db, settings):
    save_prs(db, [
        _stating(620, "[Benchmark] Report TTFT percentiles", 6, "Prints p99 TTFT; a run stays above 95% of its throughput."),
        _stating(621, "[Structured Output] Cache compiled grammars", 7, "Grammars compile once.",
                 "Time to first token drops from 300 ms to 30 ms for a repeated schema, and throughput rises by 20%."),
        _stating(622, "[Kernel] Faster decode GEMMs", 8, "A new GEMM for decode.",
                 "On a 4x GB300 node decode throughput is 13% higher, and TTFT is unchanged."),
        _stating(623, "[XPU] Keep int4 weights packed", 9, "Weights stay packed.", "Single-request decode is 2x faster."),
    ])
    # 621's TTFT falls tenfold; 620 says TTFT in its title and states no TTFT gain; "4x GB300" is no gain.
    assert _ask(db, settings, "biggest ttft cut yesterday?").citations == [621]
    assert _ask(db, settings, "largest decode speedup yesterday").citations == [623]


def test_a_path_answers_whatever_word_no_pr_says_beside_it(store, settings):
    assert set(_ask(store, settings, "list every pr taht modified engine/core/scheduler.py").citations) == {501, 507}


def test_the_largest_gain_in_an_area_is_among_its_prs_and_a_name_is_no_number(db, settings):
    save_prs(db, [
        replace(_stating(624, "[ROCm] AITER MoE kernels for gpt-oss", 6, "Uses AITER MoE kernels.",
                         "Decode throughput on a single MI300X improves by about 12%."), areas=["rocm"]),
        replace(_stating(625, "[ROCm] Fused RMSNorm", 7, "Fuses RMSNorm.", "Decode is 20% faster."), areas=["rocm"]),
        replace(_stating(626, "[XPU] EAGLE on Intel GPUs", 8, "Speculative decoding on Arc.",
                         "Single requests decode 1.8x faster on an Arc B580."), areas=["xpu"]),
        *[make_pr(627 + n, f"[Docs] Fix a typo in guide {n}", merged_at=_at(12, n + 1), areas=["docs"]) for n in range(6)],
    ])
    # "MI300X" is no 300x; 626's 1.8x is the largest decode gain, but not on AMD GPUs.
    assert _ask(db, settings, "biggest decode speedup on amd gpus yesterday").citations == [625]


def test_a_reland_after_a_revert_answers_whether_it_stands_now(db, settings):
    save_prs(db, _relanded_default())
    on = _ask(db, settings, "is async scheduling on by default now?")
    assert on.citations == [632] and _first(on) == "Yes: [#632] follows up on [#630]: Relands #630 with the pipeline hang fixed."
    assert _first(_ask(db, settings, "is async scheduling by default still reverted?")) == "No: [#632] follows up on [#630]: Relands #630 with the pipeline hang fixed."


def test_a_reland_that_names_the_revert_answers_when_the_store_lacks_what_was_reverted(db, settings):
    # 633 reverted 600, which the store does not hold; 634 relands it by naming the revert.
    save_prs(db, [
        _stating(633, 'Revert "[Kernel] Promote fused MoE strides to int64" (#600)', 1, "Reverts #600: it was slow."),
        _stating(634, "[Kernel] Fused MoE strides, take two", 2,
                 "Relands the int64 stride promotion that was reverted in #633, now only for the expert offset."),
    ])
    back = _ask(db, settings, "is the int64 fused moe strides change back in?")
    assert back.citations == [634] and _first(back).startswith("Yes: [#634] follows up on [#633]")


def test_the_reverts_asked_for_as_a_noun_are_the_reverts(store, settings):
    # 507 reverts 501: "what got reverted?" is both, "the reverts" only 507.
    assert set(_ask(store, settings, "what got reverted this week?").citations) == {507, 501}
    assert _ask(store, settings, "all the reverts this week").citations == [507]
    assert _ask(store, settings, "which prs reverted something this week?").citations == [507]


def test_the_one_named_by_its_topic_is_one_of_the_threads(store, settings):
    # grace-h wrote 501 (scheduler), 504 (frontend) and 509 (docs); ada-l merged 504. 640 is frontend work too.
    save_pr(store, make_pr(640, "[Frontend] Log request ids", merged_at=_at(13, 5), author="ken-t", merged_by="linus-t",
                           areas=["frontend"]))
    one = _ask(store, settings, "who merged the frontend one?", history=["what did grace-h write?"])
    assert one.citations == [504] and _first(one) == "ada-l ([#504])."


def test_a_yes_names_the_prs_that_say_it_about_as_well_as_the_best(db, settings):
    save_prs(db, [
        make_pr(650, "[CPU] Support FP8 KV cache on the CPU backend", merged_at=_at(12, 9), areas=["cpu", "quantization"],
                summary=Summary("Stores the KV cache in FP8 on CPU workers.", "", "", "", "imported")),
        make_pr(651, "[CPU][Bugfix] Allocate the KV cache on the NUMA node of each worker", merged_at=_at(12, 10),
                areas=["cpu"], summary=Summary("Pins each worker's KV cache to its NUMA node.", "", "", "", "imported")),
        make_pr(652, "[Quantization] FP8 weights for MoE", merged_at=_at(12, 11), areas=["quantization"],
                summary=Summary("FP8 MoE weights.", "", "", "", "imported")),
    ])
    # 651 is about the CPU backend's KV cache, not FP8: a neighbour of the answer, not the answer.
    assert _ask(db, settings, "does the cpu backend do fp8 kv cache?").citations == [650]


def test_how_to_is_told_by_the_reland_that_says_it_about_as_well(store, settings):
    save_prs(store, [
        _stating(660, "[Multimodal] Cache processed images in the API server", 1,
                 "Processed images are cached in the API server, sized by `VLLM_IMAGE_CACHE_GB`."),
        _stating(661, 'Revert "[Multimodal] Cache processed images in the API server" (#660)', 2,
                 "Reverts #660: the image cache in the API server grew without bound."),
        _stating(662, "[Multimodal] Reland the processed image cache with size accounting", 3,
                 "Relands #660: the API server caches processed images again, with sizes counted; pass "
                 "`--no-image-cache` to switch it off."),
    ])
    # The revert tells how things were; 660 says it a little better than 662, whose reland says how it works now.
    how = _ask(store, settings, "how do i turn the api server image cache off?")
    assert how.citations == [662] and "`--no-image-cache`" in _first(how)


def test_server_startup_is_startup(store, settings):
    save_prs(store, [
        make_pr(670, "[Kernel] JIT-compile the prefill attention kernel", merged_at=_at(13, 1),
                summary=Summary("Compiles the kernel on first use.", "", "Adds about 45 seconds to the first startup.", "",
                                "imported")),
        make_pr(671, "[Frontend] Warm up every tokenizer when the server starts", merged_at=_at(13, 2),
                summary=Summary("The API server loads all tokenizers at once.", "",
                                "Server startup is slower with many models configured.", "", "imported")),
    ])
    assert set(_ask(store, settings, "which of yesterday's prs could make server startup slower?").citations) == {670, 671}


def test_what_improved_a_metric_is_what_states_a_gain_in_it(store, settings):
    save_prs(store, [
        _stating(680, "[Benchmark] Report TTFT percentiles", 1, "Prints p50 and p99 TTFT for each run."),
        _stating(681, "[Scheduler] Admit prefills in chunks", 2, "Long prompts no longer block the queue.",
                 "TTFT for short prompts drops by 30% under mixed load."),
        _stating(682, "[Kernel] Fuse the sampler", 3, "One kernel samples the batch.", "TTFT is unchanged; throughput rises 10%."),
    ])
    assert _ask(store, settings, "which of yesterday's prs made ttft better?").citations == [681]


def test_a_reland_of_what_a_revert_undid_comes_back(db, settings):
    save_prs(db, _relanded_default())
    back = _ask(db, settings, "async scheduling by default got reverted - did it come back? which pr")
    assert 632 in back.citations and 631 not in back.citations


def test_a_kind_of_hardware_no_pr_names_is_not_answered_by_its_family(store, settings):
    save_pr(store, make_pr(690, "[TPU] Faster ragged attention on TPU v6e", merged_at=_at(13, 1), areas=["tpu"]))
    # Ironwood is a TPU generation no PR names: the TPU PR is the nearest, not the answer.
    ironwood = _ask(store, settings, "anything for ironwood tpus?")
    assert ironwood.citations == [] and "ironwood" in _first(ironwood).lower()


def test_what_was_built_on_it_in_a_thread(db, settings):
    save_prs(db, [*_relanded_default(), _stating(633, "[CI] Publish the wheels built each night", 4, "Nightly wheels are built.")])
    built = _ask(db, settings, "anything newer built on top of it?", history=["which pr turned on async scheduling by default?"])
    assert 632 in built.citations and 631 not in built.citations


def test_what_dropped_a_flag_is_the_revert_that_says_it(store, settings):
    save_prs(store, [
        _stating(700, "[Core] Choose preemption victims by work done", 1, "Adds `--preempt-order` to pick victims by work."),
        _stating(701, 'Revert "[Core] Choose preemption victims by work done" (#700)', 2, "Reverts #700.",
                 "`--preempt-order` is gone again."),
    ])
    assert _ask(store, settings, "which pr dropped --preempt-order?").citations == [701]
    assert _ask(store, settings, "which pr added --preempt-order?").citations == [700]


def test_work_for_a_family_of_gpus_is_work_for_each_member(store, settings):
    save_prs(store, [
        _stating(710, "[XPU][LoRA] Serve several LoRA adapters on Intel GPUs", 1, "Multi-LoRA now runs on Intel GPUs."),
        _stating(711, "[XPU] Support FP8 KV cache on Battlemage", 2, "Battlemage cards keep the KV cache in FP8."),
        _stating(712, "[XPU] Build the XPU wheel with oneAPI 2025.2", 3, "The XPU wheel moves to a newer toolchain."),
    ])
    # 710 enables all Intel GPUs, Battlemage among them; 712 is XPU build work, not about the cards.
    assert set(_ask(store, settings, "anything for battlemage?").citations) == {710, 711}
