"""End to end: the real `prdigest serve --http` process, signed requests over HTTP, the fake Slack recording replies."""
import hashlib
import hmac
import json
import time
from datetime import datetime

import httpx
import pytest
from conftest import LA
from servers.github_api import FakeGitHub
from servers.slack_api import (
    FORM,
    JSON,
    SIGNING_SECRET,
    FakeSlack,
    button_click,
    home_opened,
    mention_event,
    signed_headers,
    slash_command,
)
from slack_helpers import LOUD_TITLE, REPO, import_fixtures, make_pr, serve_http, shown

from store.db import open_db
from store.tables.prs import save_pr


@pytest.fixture(scope="module")
def bot(tmp_path_factory):
    """The bot as it runs in production, on a store holding the fixture reports and one older ROCm PR."""
    db_path = tmp_path_factory.mktemp("serve") / "prdigest.db"
    db = open_db(db_path)
    import_fixtures(db)
    save_pr(db, make_pr(4080, datetime(2026, 3, 6, 10, 0, tzinfo=LA), title="[ROCm] Older kernel fix", areas=["rocm"]))
    db.close()
    with FakeSlack() as slack, FakeGitHub({REPO: []}) as github:
        with serve_http(db_path, slack, PRDIGEST_REPOS=REPO, PRDIGEST_GITHUB_API_URL=github.url) as served:
            yield served


@pytest.fixture
def serve(bot):
    bot.slack.reset()
    return bot


def test_slash_command_acks_fast_then_responds(serve):
    response = serve.command("2026-03-08", "day")
    assert response.status_code == 200 and response.elapsed_seconds < 3
    serve.slack.wait_for(lambda s: s.responses("day"))
    [reply] = serve.slack.responses("day")[:1]
    assert reply.params["response_type"] == "ephemeral" and reply.params["replace_original"] is False
    body = shown(reply.params)
    assert "*Acme: merged PRs for 2026-03-08 (PST)*" in body and "3 merged" in body
    assert LOUD_TITLE not in json.dumps(reply.params) and "&lt;!channel&gt;" in body


def test_slow_commands_ack_with_a_note(serve):
    response = serve.command("ask what changed in rocm?", "ask")
    assert response.status_code == 200 and "Working on it" in response.text
    serve.slack.wait_for(lambda s: s.responses("ask"))
    body = shown(serve.slack.responses("ask")[0].params)
    assert "<https://github.com/acme/engine/pull/4102|#4102>" in body


def test_bad_input_gets_one_line_and_usage(serve):
    serve.command("area gardening", "bad")
    serve.slack.wait_for(lambda s: s.responses("bad"))
    text = serve.slack.responses("bad")[0].params["text"]
    assert text.startswith("unknown area 'gardening'") and "\nUsage: `/prdigest area NAME [when]`" in text


def test_bad_signature_and_stale_timestamp_are_refused(serve):
    forged = serve.command("today", "forged", secret="not-the-secret")
    stale = serve.command("today", "stale", timestamp=int(time.time()) - 6 * 60)
    unsigned = httpx.post(serve.url, content=slash_command("today", "x")[0], timeout=10,
                          headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert forged.status_code == stale.status_code == unsigned.status_code == 401
    time.sleep(0.5)
    assert serve.slack.calls_to("response_url") == []


def test_mention_is_answered_in_its_thread_and_follow_ups_keep_context(serve):
    serve.send(*mention_event("<@UPRDIGEST> what merged on 2026-03-06?", ts="1710000000.000100"))
    serve.slack.wait_for(lambda s: len(s.calls_to("chat.update")) == 1)
    [placeholder] = serve.slack.posts("C0REPORTS")
    assert placeholder.params["thread_ts"] == "1710000000.000100" and "Looking" in placeholder.params["text"]
    [update] = serve.slack.calls_to("chat.update")
    assert "<https://github.com/acme/engine/pull/4080|#4080>" in shown(update.params)

    # "and on ROCm?" alone would find every ROCm PR; in this thread it means ROCm on that day.
    serve.send(*mention_event("<@UPRDIGEST> and on ROCm?", ts="1710000000.000200", thread_ts="1710000000.000100"))
    serve.slack.wait_for(lambda s: len(s.calls_to("chat.update")) == 2)
    follow_up = shown(serve.slack.calls_to("chat.update")[1].params)
    assert "#4080" in follow_up and "#4102" not in follow_up
    assert serve.slack.posts()[1].params["thread_ts"] == "1710000000.000100"


def test_a_retried_mention_is_answered_once(serve):
    body, kind = mention_event("<@UPRDIGEST> what merged on 2026-03-07?", ts="1710000000.000300")
    serve.send(body, kind)
    serve.slack.wait_for(lambda s: len(s.calls_to("chat.update")) == 1)
    serve.send(body, kind)  # Slack delivers again when it missed the first ack
    time.sleep(1)
    assert len(serve.slack.posts()) == 1 and len(serve.slack.calls_to("chat.update")) == 1


def test_summary_button_responds_with_the_full_summary(serve):
    serve.send(*button_click("prdigest_pr_summary", f"{REPO}#4102", serve.slack.response_url("button")))
    serve.slack.wait_for(lambda s: s.responses("button"))
    reply = serve.slack.responses("button")[0].params
    body = shown(reply)
    for section in ("What changed and why", "Technical impact", "Potential risks", "Key insights"):
        assert f"*{section}*" in body
    assert LOUD_TITLE not in json.dumps(reply) and reply["response_type"] == "ephemeral"


def test_subscribe_is_announced_in_the_channel(serve):
    serve.command("subscribe rocm at 07:45", "sub")
    serve.slack.wait_for(lambda s: s.responses("sub"))
    reply = serve.slack.responses("sub")[0].params
    assert reply["response_type"] == "in_channel"
    assert "(areas: rocm) at 07:45 America/Los_Angeles time (set by <@U0ALICE>)" in reply["text"]
    serve.command("unsubscribe", "unsub")
    serve.slack.wait_for(lambda s: s.responses("unsub"))


def test_home_tab_is_published(serve):
    serve.send(*home_opened("EvHOME"))
    serve.slack.wait_for(lambda s: s.calls_to("views.publish"))
    view = serve.slack.calls_to("views.publish")[0].params
    assert view["user_id"] == "U0ALICE" and view["view"]["type"] == "home"
    text = "\n".join(block["text"]["text"] for block in view["view"]["blocks"])
    assert "merged PRs for 2026-03-08" in text and "/prdigest area NAME [when]" in text
    assert LOUD_TITLE not in text


def _signed_bytes(body: bytes, content_type: str, timestamp: str | None = None) -> dict[str, str]:
    """Slack's signature over raw bytes, which need not be text."""
    stamp = timestamp or str(int(time.time()))
    digest = hmac.new(SIGNING_SECRET.encode(), b"v0:" + stamp.encode() + b":" + body, hashlib.sha256).hexdigest()
    return {"Content-Type": content_type, "X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={digest}"}


_EVENT = {"type": "event_callback", "team_id": "T0TEST", "api_app_id": "A0PRDIGEST", "event_id": "EvFUZZ"}
HOSTILE = [
    (b"{not json", JSON), (b"[1, 2]", JSON), (b'"text"', JSON), (b"null", JSON), (b"", JSON),
    (b"\xff\xfe\x00garbage", JSON), (b"\xff\xfe\x00garbage", FORM), (b"payload=not-json", FORM),
    (b"payload=%5B1%5D", FORM), (b"payload=", FORM), (b"command=%2Fprdigest&text=today", FORM),
    (b"{\"type\": 7}", JSON), (json.dumps({**_EVENT}).encode(), JSON),
    (json.dumps({**_EVENT, "event": {"type": "app_mention", "text": "<@UPRDIGEST> hi"}}).encode(), JSON),
    (json.dumps({**_EVENT, "event": {"type": "app_mention", "channel": "C1", "ts": 5, "text": 9}}).encode(), JSON),
    (json.dumps({**_EVENT, "event": {"type": "app_home_opened", "tab": "home"}}).encode(), JSON),
    (b"payload=" + json.dumps({"type": "block_actions", "actions": [{"action_id": "prdigest_pr_summary",
                                                                    "value": 42}]}).encode(), FORM),
    (b"payload=" + json.dumps({"type": "block_actions", "actions": "none"}).encode(), FORM),
    (b"payload=" + json.dumps({"type": "block_actions", "actions": [{"action_id": "prdigest_pr_summary",
                                                                    "value": "acme/engine#4102"}]}).encode(), FORM),
]


def test_hostile_requests_get_no_500_and_no_traceback(serve):
    serve.log()
    statuses = []
    for body, kind in HOSTILE:
        for headers in ({"Content-Type": kind}, _signed_bytes(body, kind), _signed_bytes(body, kind, "abc")):
            response = httpx.post(serve.url, content=body, headers=headers, timeout=10)
            statuses.append(response.status_code)
    time.sleep(1)  # listeners run after the ack; let them finish
    logged = serve.log()
    assert statuses and max(statuses) < 500, statuses
    assert not [line for line in logged if "Traceback" in line or " ERROR " in line], logged
    assert statuses.count(400) >= 2 * 8  # the malformed bodies, signed or with the bad timestamp
    assert serve.slack.calls_to("response_url") == [] and serve.slack.posts() == []


def test_a_malformed_body_is_refused_with_one_line(serve):
    serve.log()
    body = b"{not json"
    response = httpx.post(serve.url, content=body, headers=_signed_bytes(body, JSON), timeout=10)
    assert response.status_code == 400 and response.text == "a signed body that is not valid JSON"
    time.sleep(0.3)
    [line] = serve.log()
    assert "refused a request from 127.0.0.1: a signed body that is not valid JSON" in line


def test_a_replayed_request_is_answered_once(serve):
    body, kind = slash_command("2026-03-08", serve.slack.response_url("replay"))
    headers = signed_headers(body, kind)
    answers = [httpx.post(serve.url, content=body.encode(), headers=headers, timeout=10) for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 200]
    serve.slack.wait_for(lambda s: s.responses("replay"))
    time.sleep(1)
    texts = [call.params["text"] for call in serve.slack.responses("replay")]
    assert len(texts) == len(set(texts))  # the reply's messages, each once
