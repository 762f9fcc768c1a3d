"""End to end in the default mode: `prdigest serve` connects over Socket Mode and answers envelopes."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
from servers.github_api import FakeGitHub
from servers.slack_api import (
    APP_TOKEN,
    BOT_TOKEN,
    TEAM,
    FakeSlack,
    click_payload,
    home_opened_payload,
    link_shared_payload,
    mention_payload,
    shortcut_payload,
    slash_payload,
    submission_payload,
)
from servers.slack_socket import FakeSocketMode
from slack_helpers import LOUD_TITLE, REPO, import_fixtures, shown

from bot.slack.home_view import ADD_ACTION
from store.db import open_db

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def socket_bot(tmp_path_factory):
    db_path = tmp_path_factory.mktemp("socket") / "prdigest.db"
    db = open_db(db_path)
    import_fixtures(db)
    db.close()
    with FakeSlack() as slack, FakeSocketMode() as socket_mode, FakeGitHub({REPO: []}) as github:
        slack.socket_url = socket_mode.url
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("PRDIGEST_", "SLACK_", "OPENAI_", "GITHUB_"))},
            "PRDIGEST_DB": str(db_path), "PRDIGEST_REPOS": REPO, "PRDIGEST_GITHUB_API_URL": github.url,
            "SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": APP_TOKEN, "PRDIGEST_SLACK_API_URL": slack.api_url,
        }
        process = subprocess.Popen([sys.executable, "-m", "bot", "serve"], cwd=ROOT, env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            socket_mode.wait_connected()
            yield slack, socket_mode, db_path
        finally:
            process.terminate()
            process.wait(timeout=10)


def test_slash_command_over_socket_mode(socket_bot):
    slack, socket_mode, _ = socket_bot
    answer = slack.hold("socket-day")  # the answer cannot be delivered until the ack came
    try:
        envelope = socket_mode.send("slash_commands", slash_payload("2026-03-08", slack.response_url("socket-day")))
        socket_mode.wait_ack(envelope)  # acknowledged without waiting for the answer
        assert not slack.responses("socket-day")
    finally:
        answer.set()
    slack.wait_for(lambda s: s.responses("socket-day"))
    reply = slack.responses("socket-day")[0].params
    assert "3 merged" in reply["text"] and LOUD_TITLE not in str(reply)


def test_slow_command_is_acked_with_a_note(socket_bot):
    slack, socket_mode, _ = socket_bot
    envelope = socket_mode.send("slash_commands", slash_payload("pr 4102", slack.response_url("socket-pr")))
    assert "Working on it" in socket_mode.wait_ack(envelope).get("text", "")
    slack.wait_for(lambda s: s.responses("socket-pr"))
    assert "*Potential risks*" in shown(slack.responses("socket-pr")[0].params)


def test_mention_and_button_over_socket_mode(socket_bot):
    slack, socket_mode, _ = socket_bot
    event = mention_payload("<@UPRDIGEST> what merged on 2026-03-07?", ts="1720000000.000100")
    socket_mode.wait_ack(socket_mode.send("events_api", event, accepts_response_payload=False))
    slack.wait_for(lambda s: s.calls_to("chat.update"))
    update = slack.calls_to("chat.update")[0].params
    assert "#4085" in update["text"]

    click = click_payload("prdigest_pr_summary", f"{REPO}#4090", slack.response_url("socket-button"))
    socket_mode.wait_ack(socket_mode.send("interactive", click))
    slack.wait_for(lambda s: s.responses("socket-button"))
    assert "EAGLE drafter metrics" in slack.responses("socket-button")[0].params["text"]


def test_previews_votes_modals_and_shortcuts_over_socket_mode(socket_bot):
    slack, socket_mode, db_path = socket_bot
    socket_mode.wait_ack(socket_mode.send("slash_commands", slash_payload("unfurl on", slack.response_url("on"), channel="C0SOCK")))
    slack.wait_for(lambda s: s.responses("on"))

    url = f"https://github.com/{REPO}/pull/4090"
    event = link_shared_payload([url], "1720000000.000200", channel="C0SOCK")
    socket_mode.wait_ack(socket_mode.send("events_api", event, accepts_response_payload=False))
    slack.wait_for(lambda s: s.calls_to("chat.unfurl"))
    [unfurl] = slack.calls_to("chat.unfurl")
    assert unfurl.params["channel"] == "C0SOCK" and "#4090 [Spec Decode] Add EAGLE drafter metrics" in str(unfurl.params["unfurls"][url])

    mention = mention_payload("<@UPRDIGEST> what merged on 2026-03-07?", ts="1720000000.000300", channel="C0SOCK")
    socket_mode.wait_ack(socket_mode.send("events_api", mention, accepts_response_payload=False))
    slack.wait_for(lambda s: any(c.params.get("channel") == "C0SOCK" for c in s.calls_to("chat.update")))
    update = next(c.params for c in slack.calls_to("chat.update") if c.params["channel"] == "C0SOCK")
    answer_id = next(e["value"] for b in update["blocks"] if b["type"] == "actions" for e in b["elements"])
    down = click_payload("prdigest_vote_down", answer_id, slack.response_url("down"), channel="C0SOCK")
    socket_mode.wait_ack(socket_mode.send("interactive", down))
    slack.wait_for(lambda s: s.calls_to("views.open"))
    view = slack.calls_to("views.open")[0].params["view"]
    submitted = socket_mode.send("interactive", submission_payload(view, {"wrong": "too broad", "should_cite": "#4085"}))
    ack = socket_mode.wait_ack(submitted)
    assert ack["response_action"] == "update" and "Thanks" in str(ack["view"])
    db = open_db(db_path)
    assert db.execute("select vote, comment, expected from answer_votes").fetchall() == [("down", "too broad", f'["{REPO}#4085"]')]
    db.close()

    shortcut = shortcut_payload("prdigest_explain", "is #4090 in?", "1720000000.000400", slack.response_url("explain"), channel="C0SOCK")
    socket_mode.wait_ack(socket_mode.send("interactive", shortcut))
    slack.wait_for(lambda s: any(c.params.get("thread_ts") == "1720000000.000400" for c in s.delivered("C0SOCK")))
    reply = next(c.params for c in slack.delivered("C0SOCK") if c.params.get("thread_ts") == "1720000000.000400")
    assert "*What changed and why*" in shown(reply)

    socket_mode.wait_ack(socket_mode.send("slash_commands", slash_payload("area rocm 2026-03-08", slack.response_url("private"))))
    slack.wait_for(lambda s: len(s.responses("private")) >= 2)
    share = next(e["value"] for b in slack.responses("private")[-1].params["blocks"] if b["type"] == "actions"
                 for e in b["elements"] if e["action_id"] == "prdigest_share")
    for _ in range(2):  # clicked twice
        socket_mode.wait_ack(socket_mode.send("interactive", click_payload("prdigest_share", share, slack.response_url("shared"))))
    slack.wait_for(lambda s: len(s.responses("shared")) >= 2)
    assert [c.params["response_type"] for c in slack.responses("shared")] == ["in_channel", "in_channel"]  # its two messages, once


def test_the_home_tab_and_its_controls_over_socket_mode(socket_bot):
    slack, socket_mode, _ = socket_bot
    opened = home_opened_payload("EvSOCKETHOME", user="U0SOCK")
    socket_mode.wait_ack(socket_mode.send("events_api", opened, accepts_response_payload=False))
    slack.wait_for(lambda s: (TEAM, "U0SOCK") in s.views)
    socket_mode.wait_ack(socket_mode.send("interactive", slack.home_action("U0SOCK", ADD_ACTION, f"{REPO}|weekdays")))
    slack.wait_for(lambda s: len([call for call in s.calls_to("views.publish") if call.params["user_id"] == "U0SOCK"]) == 2)
    shown = "\n".join(block["text"]["text"] for block in slack.view("U0SOCK")["blocks"] if "text" in block)
    assert "the weekday report of acme/engine at 09:00 America/Los_Angeles time, Monday to Friday" in shown
