"""Model replies as real servers send them, through the real openai client and a Chat Completions server on 127.0.0.1:
every reply shape, with and without structured output, servers that refuse it, the failure cap, and reasoning."""
from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from pr_factory import REPO, make_pr
from servers.openai_api import (
    REPLY_SHAPES,
    SCHEMA_REFUSALS,
    FakeOpenAI,
    Reply,
    rotating_responder,
    summary_json,
    summary_reply,
    summary_sections,
)

from bot.config import Settings
from bot.model.client import LLM, LLMError
from bot.model.prompt import JSON_SYSTEM_PROMPT, PROMPT_VERSION, REPLY_SCHEMA, SYSTEM_PROMPT
from bot.model.summarize import summarize_prs
from store.tables.model_calls import record_calls
from store.tables.prs import get_pr, save_pr
from store.tables.structured_output import RECHECK_AFTER, json_schema_support
from store.understanding.summary import classify_type, extractive_summary

MODEL = "reply-model"
FIELDS = ("what_changed", "impact", "risks", "insights")
# What must never reach a stored section: the wrapping real models put around one.
WRAPPING = ("Here is", "Here's", "Sure", "Let me know", "I hope", "<think", "</think", "Okay, the user", "```", "**",
            "##", "TYPE", "Type:", "{", "The user message")


def day_prs(count: int) -> list:
    start = datetime(2026, 3, 7, 17, 0, tzinfo=UTC)
    prs = [make_pr(300 + i, f"[Core] Change {300 + i} of the scheduler", merged_at=start + timedelta(minutes=i),
                   files=["engine/core/sched.py"], additions=40, deletions=4) for i in range(count)]
    for pr in prs:
        pr.type, pr.summary = classify_type(pr), extractive_summary(pr)
    return prs


def settings(**env: str) -> Settings:
    return Settings.from_env({"PRDIGEST_DB": "/unused", "PRDIGEST_LLM_CONCURRENCY": "4", **env})


def summarize(db, api: FakeOpenAI, prs: list, force: bool = False, **env: str):
    for pr in prs:
        if get_pr(db, REPO, pr.number) is None:
            save_pr(db, pr)
    with LLM(MODEL, base_url=api.base_url, concurrency=4) as llm:
        return summarize_prs(db, settings(**env), prs, llm, force=force, diffs=lambda pr: None)


def assert_models_sections(db, number: int) -> None:
    stored = get_pr(db, REPO, number)
    assert stored.summary.source == f"model:{MODEL}"
    assert {key: getattr(stored.summary, key) for key in FIELDS} == {
        key: text if key != "insights" else f"{text} {_NO_DIFF}" for key, text in summary_sections(number).items()
    }
    assert not [w for w in WRAPPING for key in FIELDS if w in getattr(stored.summary, key)]


PR_NUMBER = re.compile(r"^Number: #(\d+)$", re.MULTILINE)
_NO_DIFF = "This summary is based on the title, description and file list; the diff was not available."


# ---------------------------------------------------------------- each shape, each path


@pytest.mark.parametrize("shape", REPLY_SHAPES)
@pytest.mark.parametrize("server", ["refuses a schema", "ignores a schema"])
def test_every_reply_shape_is_stored_as_the_models_four_sections(db, shape, server):
    """Without structured output, whichever way the server lacks it, every shape real models use is read."""
    responder = lambda request: REPLY_SHAPES[shape](summary_sections("300"), "trivial")
    with FakeOpenAI(responder, json_schema="openai" if server == "refuses a schema" else "ignore") as api:
        run = summarize(db, api, day_prs(1))
    assert run.summarized == [300] and not run.failed
    assert_models_sections(db, 300)
    assert get_pr(db, REPO, 300).type == "trivial"


def test_with_structured_output_the_schema_is_asked_for_and_remembered(db):
    with FakeOpenAI() as api:
        first = summarize(db, api, day_prs(3))
        assert json_schema_support(db, api.base_url, MODEL) is True
    assert first.structured is True and len(first.summarized) == 3 and first.calls == 3
    for request in api.requests:
        assert request.body["response_format"] == {"type": "json_schema", "json_schema": REPLY_SCHEMA}
        assert request.system == JSON_SYSTEM_PROMPT
    assert REPLY_SCHEMA["strict"] is True
    for number in (300, 301, 302):
        assert_models_sections(db, number)


@pytest.mark.parametrize("style", SCHEMA_REFUSALS)
def test_a_server_that_refuses_a_schema_costs_one_refused_call_ever(db, style):
    prs = day_prs(6)
    with FakeOpenAI(rotating_responder(), json_schema=style) as api:
        first = summarize(db, api, prs[:5])
        # One refusal, then Markdown for every PR, the refused one included.
        assert [r.wants_json for r in api.requests] == [True] + [False] * 5
        assert {r.system for r in api.requests[1:]} == {SYSTEM_PROMPT}
        assert first.structured is False and len(first.summarized) == 5 and first.calls == 6
        assert "replies asked for in Markdown, as the server takes no JSON schema" in first.describe()
        assert json_schema_support(db, api.base_url, MODEL) is False
        second = summarize(db, api, prs)  # a later run: straight to Markdown
        assert [r.wants_json for r in api.requests[6:]] == [False]
    assert len(second.summarized) == 1 and second.current == 5
    ledger = db.execute("select outcome, error from model_calls order by id").fetchall()
    assert ledger[0][0] == "error" and "response_format" in ledger[0][1]
    assert [outcome for outcome, _ in ledger[1:]] == ["ok"] * 6


def test_a_refusal_is_checked_again_after_a_while(db):
    with FakeOpenAI(json_schema="vllm") as api:
        summarize(db, api, day_prs(1))
    later = datetime.now(UTC) + RECHECK_AFTER + timedelta(hours=1)
    assert json_schema_support(db, api.base_url, MODEL) is False
    assert json_schema_support(db, api.base_url, MODEL, now=later) is None


# ---------------------------------------------------------------- a day through a difficult server


@pytest.mark.parametrize("server", ["openai", "ignore"], ids=["refuses a schema", "ignores a schema"])
def test_a_day_through_a_server_rotating_shapes_and_failing_every_ninth_call(db, server):
    prs = day_prs(45)
    with FakeOpenAI(rotating_responder(), json_schema=server, error_every=9) as api:
        first = summarize(db, api, prs)
        assert api.calls >= 45 and len(api.requests) == api.calls + api.calls // 9  # each 500 retried by the client
        assert len(first.summarized) == 45 and not first.failed
        for pr in prs:
            assert_models_sections(db, pr.number)
        requests = len(api.requests)
        second = summarize(db, api, prs)
        assert len(api.requests) == requests and second.calls == 0 and second.current == 45


# ---------------------------------------------------------------- the failure cap


def test_a_pr_that_keeps_failing_is_given_up_until_forced(db, run_cli, monkeypatch):
    pr = day_prs(1)[0]
    with FakeOpenAI(lambda request: Reply("I cannot summarize this.")) as api:
        monkeypatch.setenv("PRDIGEST_REPOS", REPO)
        monkeypatch.setenv("PRDIGEST_MODEL", MODEL)
        monkeypatch.setenv("OPENAI_BASE_URL", api.base_url)
        monkeypatch.setenv("PRDIGEST_GITHUB_API_URL", "http://127.0.0.1:9")
        monkeypatch.setenv("PRDIGEST_SUMMARY_MAX_FAILURES", "2")
        save_pr(db, pr)
        for _ in range(2):
            assert run_cli("summarize", "--missing").code == 1
        calls = len(api.requests)
        assert calls == 4  # two calls a run: the reply, and the one to the repair prompt
        skipped = run_cli("summarize", "--missing")
        assert skipped.code == 0 and len(api.requests) == calls
        assert "1 skipped after failing too often (--force tries them again)" in skipped.out
        stats = run_cli("stats")
        assert "0 waiting for a retry, 1 given up" in stats.out
        assert f"  #{pr.number}  the reply could not be read" in stats.out.split("Given up after 2 failures")[1]
        given_up = json.loads(run_cli("stats", "--json").out)["given_up"]
        assert given_up[0]["number"] == pr.number and given_up[0]["failures"] == 2
        assert given_up[0]["last_error"].startswith("the reply could not be read")
        api.responder = lambda request: Reply(summary_json(pr.number))
        assert run_cli("summarize", "--missing", "--force").code == 0
    assert get_pr(db, REPO, pr.number).summary.source == f"model:{MODEL}"
    assert json.loads(run_cli("stats", "--json").out)["given_up"] == []


def test_failures_of_the_server_do_not_count_toward_the_cap(db):
    pr = day_prs(1)[0]
    down = json.dumps({"error": {"message": "overloaded"}}).encode()
    with FakeOpenAI(lambda request: Reply(status=503, raw=down)) as api:
        for _ in range(4):
            run = summarize(db, api, [pr], PRDIGEST_SUMMARY_MAX_FAILURES="2")
            assert run.failed and not run.given_up
    failures = db.execute("select summary_failures, summary_retry from prs where number = ?", [pr.number]).fetchone()
    assert failures[0] == 0 and "answered HTTP 503: overloaded" in failures[1]


# ---------------------------------------------------------------- reasoning


def test_reasoning_never_reaches_a_summary_and_its_tokens_are_counted(db):
    thinking = "Let me think about the scheduler change in detail. " * 8
    replies = {"300": Reply(f"<think>{thinking}</think>\n{summary_reply(300)}"),
               "301": Reply(summary_reply(301), reasoning=thinking),
               "302": Reply(summary_reply(302), reasoning=thinking, reasoning_tokens=False)}
    # By PR, not in turn: after the first, the PRs are summarized concurrently.
    with FakeOpenAI(lambda request: replies[PR_NUMBER.search(request.user).group(1)], json_schema="ignore") as api:
        run = summarize(db, api, day_prs(3))
    for number in (300, 301, 302):
        assert_models_sections(db, number)
        assert "Let me think" not in " ".join(getattr(get_pr(db, REPO, number).summary, key) for key in FIELDS)
    ledger = [row[0] for row in db.execute("select reasoning_tokens from model_calls order by number")]
    # Reported by the server when it does, else estimated from the reasoning seen (4 characters a token).
    assert all(abs(tokens - len(thinking) / 4) <= 5 for tokens in ledger)
    assert run.reasoning_tokens == sum(ledger) and f"({run.reasoning_tokens:,} reasoning)" in run.describe()
    assert db.execute("select count(*) from model_calls where prompt_version = ?", [PROMPT_VERSION]).fetchone()[0] == 3


def test_any_caller_records_its_calls_in_the_same_ledger(db):
    """As answers do: a completion, or a failure, recorded with its own purpose."""
    with FakeOpenAI() as api, LLM(MODEL, base_url=api.base_url, max_retries=0) as llm:
        api.script(Reply("The answer [#300].", reasoning="Which PR fits?"), Reply(status=503, raw=b'{"error": {}}'))
        done = llm.complete("s", "u")
        with pytest.raises(LLMError) as failed:
            llm.complete("s", "u")
    record_calls(db, [done.call(), failed.value.call()], model=MODEL, purpose="answer", repo=REPO)
    rows = db.execute(
        "select purpose, outcome, tokens_in, tokens_out, reasoning_tokens, number, error from model_calls order by id"
    ).fetchall()
    assert rows[0] == ("answer", "ok", done.tokens_in, done.tokens_out, done.reasoning_tokens, None, None)
    assert rows[1][:2] == ("answer", "error") and "HTTP 503" in rows[1][6]
    assert done.reasoning_tokens > 0
