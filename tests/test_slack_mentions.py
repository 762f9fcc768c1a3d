"""Mentions answered with a model, and what people get when the model or the store fails.

The app runs in-process (the real bolt App behind the real HTTP server), so each
test can give it its own model endpoint; Slack and the model are fakes on 127.0.0.1.
"""
import json
import sqlite3
import threading
from datetime import UTC, datetime

import httpx
import pytest
from conftest import LA
from servers.openai_api import FakeOpenAI, Reply
from servers.slack_api import BOT_TOKEN, SIGNING_SECRET, Fault, mention_event, signed_headers, slash_command
from slack_helpers import LOUD_TITLE, REPO, import_fixtures, make_pr, shown
from waiting import wait_until

from bot.answers.mentions import MODEL_DOWN
from bot.config import Settings
from bot.model.client import estimate_tokens
from bot.runtime import Runtime
from bot.slack.app import WORKERS, build_app
from bot.slack.http_server import EVENTS_PATH, http_server
from store.tables.prs import save_pr
from store.tables.releases import Release, get_release, record_range, save_listed


@pytest.fixture
def model():
    with FakeOpenAI() as api:
        yield api


@pytest.fixture
def app_env() -> dict[str, str]:
    """More settings for the app; a test gives its own with @pytest.mark.parametrize("app_env", ...)."""
    return {}


@pytest.fixture
def app_url(runtime, slack, model, monkeypatch, app_env):
    """The bot's HTTP endpoint, talking to the fake Slack and the fake model."""
    import_fixtures(runtime.db)
    for name, value in {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET,
                        "PRDIGEST_SLACK_API_URL": slack.api_url, "PRDIGEST_MODEL": "test-model",
                        "OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "sk-test", **app_env}.items():
        monkeypatch.setenv(name, value)
    settings = Settings.from_env()
    server = http_server(build_app(Runtime(settings)), settings.slack_signing_secret, settings.db_path, 0, "127.0.0.1")
    threading.Thread(target=server.run, daemon=True).start()
    yield f"http://127.0.0.1:{server.effective_port}{EVENTS_PATH}"
    server.shutdown()


def send(url: str, body: str, content_type: str) -> httpx.Response:
    # Generous: a test asserts what the answer is, and ordering by events, never how soon it came.
    return httpx.post(url, content=body.encode(), headers=signed_headers(body, content_type), timeout=30)


def test_a_model_answer_replaces_the_placeholder_with_links(app_url, slack, model):
    working = threading.Event()  # the model answers once the placeholder was checked
    model.script(Reply("ROCm paged attention got a stride fix [#4102]; see also [#9999].", gate=working),
                 Reply("ROCm paged attention got a stride fix [#4102] <!channel> <https://evil.example|click>."))
    try:
        send(app_url, *mention_event("<@UPRDIGEST> what changed for ROCm on 2026-03-08?", ts="1730000000.000100"))
        slack.wait_for(lambda s: s.posts())
        assert "Looking" in slack.posts()[0].params["text"] and not slack.calls_to("chat.update")  # shown while the model works
    finally:
        working.set()
    slack.wait_for(lambda s: s.calls_to("chat.update"))
    update = slack.calls_to("chat.update")[0].params
    assert update["ts"] == slack.thread("C0REPORTS")[1][0]["ts"] and update["channel"] == "C0REPORTS"  # the placeholder, edited
    body = shown(update)
    assert "stride fix <https://github.com/acme/engine/pull/4102|#4102>" in body
    assert "#9999" not in body and "Your last answer named #9999" in model.requests[1].user  # asked again
    assert "<!channel>" not in body and "<https://evil" not in body and "&lt;!channel&gt;" in body
    assert "*Sources*" in body and LOUD_TITLE not in body  # the title is escaped in the sources too
    assert "what changed for ROCm" in model.requests[0].user


def test_a_follow_up_sends_the_earlier_question_to_the_model(app_url, slack, model):
    model.script("Spec decode got EAGLE metrics [#4090].", "Nothing for ROCm that day [#4102].")
    send(app_url, *mention_event("<@UPRDIGEST> spec decode changes on 2026-03-08?", ts="1730000000.000200"))
    slack.wait_for(lambda s: s.calls_to("chat.update"))
    send(app_url, *mention_event("<@UPRDIGEST> and on ROCm?", ts="1730000000.000300", thread_ts="1730000000.000200"))
    slack.wait_for(lambda s: len(s.calls_to("chat.update")) == 2)
    assert "Earlier questions in this thread: spec decode changes on 2026-03-08?" in model.requests[-1].user
    assert slack.posts()[1].params["thread_ts"] == "1730000000.000200"


def test_a_thread_keeps_each_question_as_read_and_what_it_cited_and_follows_that(app_url, slack, model, runtime):
    model.script("Spec decode got EAGLE metrics [#4090].", "ROCm got a stride fix [#4102].")
    send(app_url, *mention_event("<@UPRDIGEST> spec decode changes on 2026-03-08?", ts="1730000000.000200"))
    slack.wait_for(lambda s: s.calls_to("chat.update"))
    (kept,) = runtime.db.execute("select answered from thread_turns").fetchone()
    assert json.loads(kept)[REPO]["cited"] == [4090]
    # The follow-up reads the earlier question as it was kept, never its text again: changing the text changes nothing.
    runtime.db.execute("update thread_turns set question = 'what merged on 2026-03-01?'")
    runtime.db.conn.commit()
    send(app_url, *mention_event("<@UPRDIGEST> and on ROCm?", ts="1730000000.000300", thread_ts="1730000000.000200"))
    slack.wait_for(lambda s: len(s.calls_to("chat.update")) == 2)
    assert shown(slack.calls_to("chat.update")[1].params).startswith("1 PR merged on Sun Mar 8 in rocm:")


def test_a_release_question_is_answered_from_the_store_and_followed_up_in_its_thread(app_url, slack, model, runtime):
    tag = "v0.4.0"
    published = datetime(2026, 3, 9, 2, 0, tzinfo=UTC)
    save_listed(runtime.db, REPO, [Release(REPO, tag, tag, f"https://github.com/{REPO}/releases/tag/{tag}", published)], True)
    assert record_range(runtime.db, get_release(runtime.db, REPO, tag), None, [4102], commits=1)
    send(app_url, *mention_event("<@UPRDIGEST> is #4102 released yet?", ts="1730000000.000600"))
    slack.wait_for(lambda s: s.calls_to("chat.update"))
    assert shown(slack.calls_to("chat.update")[0].params).startswith("Yes: in v0.4.0, published Mar 8.")
    send(app_url, *mention_event("<@UPRDIGEST> and #4090?", ts="1730000000.000700", thread_ts="1730000000.000600"))
    slack.wait_for(lambda s: len(s.calls_to("chat.update")) == 2)
    assert shown(slack.calls_to("chat.update")[1].params).startswith(
        "Not yet: merged Mar 8, but v0.4.0 (published Mar 8) does not have it; it will be in the next release.")
    assert model.requests == []  # the mapping answers: no model is asked


def test_model_down_gets_an_apology_and_the_answer_from_the_store(app_url, slack, model):
    model.responder = lambda request: Reply(status=500, raw=b'{"error": {"message": "down"}}')
    send(app_url, *mention_event("<@UPRDIGEST> what merged on 2026-03-07?", ts="1730000000.000400"))
    slack.wait_for(lambda s: s.calls_to("chat.update"), timeout=60)
    body = shown(slack.calls_to("chat.update")[0].params)
    assert body.startswith(MODEL_DOWN)
    assert "<https://github.com/acme/engine/pull/4085|#4085>" in body


def test_pr_summary_on_demand_with_the_model(app_url, slack, runtime, model):
    save_pr(runtime.db, make_pr(4200, datetime(2026, 3, 8, 9, tzinfo=LA), title="[Core] Batch earlier", source="extractive"))
    response = send(app_url, *slash_command("pr 4200", slack.response_url("pr")))
    assert "Working on it" in response.text
    slack.wait_for(lambda s: s.responses("pr"), timeout=30)
    body = shown(slack.responses("pr")[0].params)
    assert "reworks how PR 4200 batches requests" in body  # summarized now, by the model
    assert any("#4200" in request.user for request in model.requests)


# The app gives up on the lock after 0.5 s rather than the default 10 s; the lock is held until the apology came.
@pytest.mark.parametrize("app_env", [{"PRDIGEST_BUSY_TIMEOUT": "0.5"}], ids=["busy_timeout=0.5"])
def test_store_locked_gets_an_apology_in_the_thread(app_url, slack, isolated_env):
    holder = sqlite3.connect(isolated_env)
    holder.execute("begin immediate")  # an ingest holds the write lock, for as long as the test needs
    try:
        send(app_url, *mention_event("<@UPRDIGEST> anything new?", ts="1730000000.000500"))
        slack.wait_for(lambda s: s.posts())
    finally:
        holder.rollback()
        holder.close()
    message = slack.posts()[0].params
    assert message["thread_ts"] == "1730000000.000500" and message["text"].startswith("Sorry, I could not answer")
    send(app_url, *mention_event("<@UPRDIGEST> what merged on 2026-03-07?", ts="1730000000.000600"))
    slack.wait_for(lambda s: s.calls_to("chat.update"), timeout=30)  # and the bot kept running


def test_an_empty_mention_gets_examples(app_url, slack):
    send(app_url, *mention_event("<@UPRDIGEST>", ts="1730000000.000700"))
    slack.wait_for(lambda s: s.posts())
    assert "Ask me about what merged" in slack.posts()[0].params["text"]


# As many model calls at once as there are workers, so that every busy worker shows as a request the model holds.
@pytest.mark.parametrize("app_env", [{"PRDIGEST_LLM_CONCURRENCY": str(WORKERS)}], ids=["every_worker_at_the_model"])
def test_slow_answers_never_delay_an_ack(app_url, slack, model):
    """More questions than there are answer workers, each waiting on a slow model: a command is still acked at once."""
    answer = threading.Event()  # the model answers nothing until the quick command was acknowledged
    model.responder = lambda request: Reply("Slow answer [#4102].", gate=answer)
    questions = [slash_command("ask what changed for ROCm on 2026-03-08?", slack.response_url(f"slow-{n}")) for n in range(WORKERS + 1)]
    senders = [threading.Thread(target=send, args=(app_url, *question)) for question in questions]
    try:
        for sender in senders:
            sender.start()
        # Every worker is now waiting on the model, and one more question waits for a worker.
        wait_until(lambda: len(model.requests) == WORKERS, f"{WORKERS} questions waiting on the model")
        response = send(app_url, *slash_command("2026-03-08", slack.response_url("quick")))
        # Acknowledged while no answer could be made: an ack queued behind the answers would never come.
        assert response.status_code == 200
        assert not any(slack.responses(f"slow-{n}") for n in range(WORKERS + 1))
        assert len(model.requests) == WORKERS  # the ninth question still waits for a worker
    finally:
        answer.set()
    for sender in senders:
        sender.join()
    slack.wait_for(lambda s: all(s.responses(f"slow-{n}") for n in range(WORKERS + 1)))  # and every question got its answer
    assert len(model.requests) == WORKERS + 1  # each of them waited on the model
    slack.wait_for(lambda s: s.responses("quick"))  # and the quick command, queued behind them, was answered too


def test_a_thread_of_mentions_at_slacks_limit_keeps_the_prompt_within_its_budget(app_url, slack, model, runtime):
    model.script(*["ROCm paged attention got a stride fix [#4102]."] * 7)
    question = "what changed for ROCm on 2026-03-08? " + "rocm kernels " * 3100  # Slack's 40,000 characters
    for turn in range(7):
        ts = f"1730000100.{turn:06d}"
        send(app_url, *mention_event(f"<@UPRDIGEST> {question}", ts=ts, thread_ts="1730000100.000000"))
        slack.wait_for(lambda s, done=turn + 1: len(s.calls_to("chat.update")) == done)
    last = model.requests[-1]
    assert "Earlier questions in this thread" in last.user and "#4102" in last.user
    assert estimate_tokens(last.system + last.user) <= Settings.from_env().summary_tokens
    assert runtime.db.execute("select max(length(question)) from thread_turns").fetchone()[0] <= 600


def test_an_answer_comes_when_slack_refuses_the_placeholder(app_url, slack, model):
    model.script("ROCm paged attention got a stride fix [#4102].")
    slack.fail("chat.postMessage", Fault(status=200, error="internal_error"))
    send(app_url, *mention_event("<@UPRDIGEST> what changed for ROCm on 2026-03-08?", ts="1730000000.000800"))
    slack.wait_for(lambda s: s.delivered())
    answer = slack.delivered()[0].params
    assert answer["thread_ts"] == "1730000000.000800" and "stride fix" in shown(answer)
    assert "Looking" in slack.posts()[0].params["text"] and not slack.calls_to("chat.update")


def test_an_answer_comes_when_slack_refuses_to_edit_the_placeholder(app_url, slack, model):
    model.script("ROCm paged attention got a stride fix [#4102].")
    slack.fail("chat.update", Fault(status=200, error="cant_update_message"))
    send(app_url, *mention_event("<@UPRDIGEST> what changed for ROCm on 2026-03-08?", ts="1730000000.000900"))
    slack.wait_for(lambda s: s.calls_to("chat.delete"))
    placeholder, answer = (call.params for call in slack.delivered())
    assert "Looking" in placeholder["text"] and "stride fix" in shown(answer)
    assert answer["thread_ts"] == "1730000000.000900"
    # What the thread shows: the answer alone, the placeholder deleted once the answer was there.
    assert [message["text"] for message in slack.thread("C0REPORTS")[1]] == [answer["text"]]
