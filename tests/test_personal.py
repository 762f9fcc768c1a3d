"""Personal subscriptions: `/prdigest me …`, delivered by direct message (conversations.open, then post), exactly once."""
from __future__ import annotations

from datetime import date, datetime, timedelta

import pytest
from conftest import LA
from freezegun import freeze_time
from servers.slack_api import BOT_TOKEN, Fault, dm_channel
from slack_helpers import WORKSPACE, make_pr, one_team, replicas_at_once, seed_day

from bot.answers.commands import execute
from bot.config import Settings
from bot.runtime import Runtime
from bot.slack.daily import Pacer
from bot.slack.live import LiveAlerts
from bot.slack.scheduler import Scheduler
from store.tables.people import dm_channel as stored_dm_channel
from store.tables.prs import save_prs
from store.tables.subscriptions import channel_subscriptions

SUBSCRIBED = datetime(2026, 3, 10, 9, 0, tzinfo=LA)
ALICE = "U0ALICE"
DM = dm_channel(ALICE)


@pytest.fixture
def settings(runtime, slack, monkeypatch):
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("PRDIGEST_SLACK_API_URL", slack.api_url)
    return Settings.from_env()


def me(runtime, words: str, user: str | None = ALICE, now: datetime = SUBSCRIBED):
    return execute(runtime, f"me {words}".strip(), WORKSPACE, channel="C0TEAM", user=user, now=now)


def replica(settings) -> LiveAlerts:
    return LiveAlerts(Runtime(settings), one_team(settings), Pacer(0))


def test_a_person_links_a_login_and_keeps_subscriptions_of_their_own(runtime):
    assert me(runtime, "github @Ada-L").text == "Your GitHub login is now `Ada-L`: `my-prs` follows the PRs it writes."
    assert me(runtime, "github ada-l").text.endswith("(it was `Ada-L`): `my-prs` follows the PRs it writes.")
    assert me(runtime, "github not/a/login").error
    mine = me(runtime, "subscribe my-prs")
    assert not mine.public and mine.text == (
        "You now get a message for each PR of yours that merges in acme/engine, by direct message."
        " Each comes with the ingest that finds it merged.")
    assert "You now get live alerts of acme/engine (`rocm`) as PRs merge" in me(runtime, "subscribe rocm live").text
    assert "the weekly report of acme/engine (`-bots`) on Mondays at 09:00" in me(runtime, "subscribe weekly -bots").text
    assert me(runtime, "").text.split("\n") == [
        "Your GitHub login: `ada-l`.",
        "You get the weekly report of acme/engine (`-bots`) on Mondays at 09:00 America/Los_Angeles time, for the 7"
        " days before, by direct message.",
        "You get live alerts of acme/engine (`rocm`) as PRs merge, by direct message.",
        "You get a message for each PR of yours that merges in acme/engine, by direct message.",
    ]
    assert me(runtime, "unsubscribe live").text == "You no longer get live alerts of acme/engine (`rocm`) as PRs merge."
    assert me(runtime, "unsubscribe live").text == "You have no live alerts to stop."
    assert [sub.slot for sub in channel_subscriptions(runtime.db, WORKSPACE, ALICE)] == ["weekly", "my-prs"]
    assert channel_subscriptions(runtime.db, WORKSPACE, "C0TEAM") == []  # the channel it was typed in gets nothing


@pytest.mark.parametrize("words, says", [
    ("subscribe my-prs author:grace-h", "my-prs are the PRs you wrote: leave `author:` out"),
    ("subscribe my-prs at 9", "my-prs messages come as PRs merge; `at` is for reports"),
    ("subscribe live weekly", "give one of daily, weekdays, weekly, live, my-prs or releases"),
    ("dance", "`dance` is not something `me` does"),
])
def test_bad_personal_words_get_one_line(runtime, words, says):
    reply = me(runtime, words)
    assert reply.error and reply.text.split("\n")[0] == says
    assert channel_subscriptions(runtime.db, WORKSPACE, ALICE) == []


def test_personal_subscriptions_need_a_slack_user(runtime):
    reply = me(runtime, "subscribe my-prs", user=None)
    assert reply.error and reply.text.startswith("personal subscriptions belong to a Slack user")


def test_my_prs_is_one_direct_message_per_pr_exactly_once_across_replicas_and_a_lost_answer(runtime, slack, settings):
    me(runtime, "github ada-l")
    me(runtime, "subscribe my-prs", now=datetime.now(LA) - timedelta(minutes=1))
    merged = datetime.now(LA) - timedelta(minutes=30)
    save_prs(runtime.db, [
        make_pr(61, merged, title="[Core] Mine", author="ada-l"),
        make_pr(62, merged + timedelta(minutes=1), title="[ROCm] Also mine", author="Ada-L", areas=["rocm"]),
        make_pr(63, merged + timedelta(minutes=2), title="[Core] Someone else's", author="grace-h"),
        make_pr(64, merged + timedelta(minutes=3), title="[Doc] Mine too", author="ada-l", areas=["docs"]),
    ])
    slack.fail("chat.postMessage", None, Fault(status=500, accept=True))  # Slack keeps the second, its answer is lost
    replicas_at_once([replica(settings) for _ in range(2)], datetime.now(LA))
    shown = [message["text"] for message in slack.thread(DM)[0]]
    assert shown == ["*Merged* \u00b7 acme/engine: #61 [Core] Mine", "*Merged* \u00b7 acme/engine: #62 [ROCm] Also mine",
                     "*Merged* \u00b7 acme/engine: #64 [Doc] Mine too"]
    assert len(slack.posts(DM)) == 3 and slack.calls_to("conversations.history")  # read back, not sent twice
    assert slack.posts("C0TEAM") == [] and stored_dm_channel(runtime.db, WORKSPACE, ALICE) == DM
    opened = slack.calls_to("conversations.open")
    assert 1 <= len(opened) <= 2 and all(call.params["users"] == ALICE for call in opened)


def test_my_prs_waits_for_a_login_then_sends_what_merged_since_it_began(runtime, slack, settings):
    reply = me(runtime, "subscribe my-prs", now=datetime.now(LA) - timedelta(minutes=5))
    assert reply.text.endswith("Link your GitHub login first, or nothing comes: `/prdigest me github LOGIN`.")
    save_prs(runtime.db, [make_pr(71, datetime.now(LA) - timedelta(minutes=2), author="ada-l")])
    replica(settings).run(datetime.now(LA))
    assert slack.posts() == []
    me(runtime, "github ada-l")
    replica(settings).run(datetime.now(LA))
    assert [message["text"] for message in slack.thread(DM)[0]] == ["*Merged* \u00b7 acme/engine: #71 [Core] Change number 71"]


def test_a_personal_weekly_report_is_a_thread_in_the_direct_messages_resumed_after_a_lost_answer(runtime, slack, settings):
    for offset in range(7):
        seed_day(runtime.db, date(2026, 3, 2 + offset), 20, start=1000 + 100 * offset)
    me(runtime, "subscribe weekly at 8:00", now=datetime(2026, 3, 1, tzinfo=LA))
    slack.fail("chat.postMessage", None, None, Fault(status=502, accept=True))  # the second reply's answer is lost
    scheduler = Scheduler(Runtime(settings), one_team(settings), pacer=Pacer(0))
    with freeze_time("2026-03-09T08:00:00-07:00"):
        scheduler.tick()
    with freeze_time("2026-03-09T08:30:00-07:00"):
        scheduler.tick()
    parents, replies = slack.thread(DM)
    assert [message["text"].split("\n")[0] for message in parents] == [
        "*engine: merged PRs for the week 2026-03-02..2026-03-08 (PST/PDT)*"]
    assert len(replies) == len(slack.posts(DM)) - 1 >= 3 and all(r["thread_ts"] == parents[0]["ts"] for r in replies)
    assert slack.calls_to("conversations.replies")
