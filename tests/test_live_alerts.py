"""Live alerts: each new PR in a channel's areas, once, soon after the ingest that stored it."""
from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from conftest import LA
from freezegun import freeze_time
from servers.github_api import FakePull
from servers.slack_api import BOT_TOKEN, Fault
from slack_helpers import REPO, WORKSPACE, make_pr, one_team, replicas_at_once

from bot.answers.commands import execute
from bot.config import Settings
from bot.runtime import Runtime
from bot.slack.daily import Pacer, repo_ingester
from bot.slack.live import LiveAlerts
from bot.slack.scheduler import Scheduler
from store.model import Summary
from store.tables.prs import get_pr, save_pr, save_prs

SUBSCRIBED = datetime(2026, 3, 10, 9, 0, tzinfo=LA)


@pytest.fixture
def settings(runtime, slack, monkeypatch):
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("PRDIGEST_SLACK_API_URL", slack.api_url)
    return Settings.from_env()


def start(settings) -> Scheduler:
    """A scheduler as `serve` starts one: its own runtime, Slack client and ingestion from GitHub."""
    runtime = Runtime(settings)
    return Scheduler(runtime, one_team(settings), ingest=repo_ingester(runtime), pacer=Pacer(0))


def tick_at(scheduler: Scheduler, moment: datetime) -> None:
    with freeze_time(moment):
        scheduler.tick()


def rocm(number: int, merged_at: datetime, **fields) -> FakePull:
    return FakePull(number, f"[ROCm] Fix the kernel path number {number}", merged_at,
                    files=["vllm/platforms/rocm.py"], body=f"Fixes the ROCm kernel path {number}.", **fields)


def alerts(slack, channel: str = "C1") -> list[str]:
    """The text of every alert the channel shows, in order."""
    return [message["text"] for message in slack.thread(channel)[0]]


def subscribe(runtime, words: str, channel: str = "C1", now: datetime = SUBSCRIBED) -> str:
    reply = execute(runtime, f"subscribe {words}", WORKSPACE, channel=channel, user="U0ALICE", now=now)
    assert not reply.error, reply.text
    return reply.text


def test_each_new_pr_in_the_areas_is_announced_once_across_ingests_a_burst_and_a_restart(runtime, github, slack, settings):
    assert "live alerts of acme/engine (`rocm`) as PRs merge" in subscribe(runtime, "rocm live")
    github.add(REPO, rocm(10, SUBSCRIBED - timedelta(hours=20)),  # merged before, stored after: announced
               FakePull(11, "[Docs] Reword the FAQ", SUBSCRIBED - timedelta(hours=2), files=["docs/faq.md"]))
    scheduler = start(settings)
    tick_at(scheduler, SUBSCRIBED + timedelta(minutes=1))
    assert alerts(slack) == ["*Merged in rocm* \u00b7 acme/engine: #10 [ROCm] Fix the kernel path number 10"]
    first = "\n".join(b["text"]["text"] for b in slack.delivered("C1")[0].params["blocks"] if "text" in b)
    assert "by ada-l" in first and "rocm" in first and "fixes the ROCm kernel path 10." in first

    for minutes in (5, 9, 11):  # ingests and ticks with nothing new
        tick_at(scheduler, SUBSCRIBED + timedelta(minutes=minutes))
    assert len(alerts(slack)) == 1

    github.add(REPO, rocm(12, SUBSCRIBED + timedelta(minutes=15)))
    tick_at(scheduler, SUBSCRIBED + timedelta(minutes=21))
    assert alerts(slack)[1].startswith("*Merged in rocm* \u00b7 acme/engine: #12 ")

    burst = [rocm(100 + i, SUBSCRIBED + timedelta(minutes=22 + i)) for i in range(40)]
    github.add(REPO, *burst)
    tick_at(scheduler, SUBSCRIBED + timedelta(minutes=65))
    assert len(alerts(slack)) == 3
    assert alerts(slack)[2].startswith("*40 PRs merged in rocm* \u00b7 acme/engine: #100 ")
    grouped = slack.delivered("C1")[-1].params
    shown = "\n".join(b["text"]["text"] for b in grouped["blocks"] if "text" in b)
    assert "#139" in shown and "and 10 earlier ones" in shown and "#109 " not in shown

    restarted = start(settings)  # a new process over the same store ingests the same window again
    for minutes in (70, 81, 95):
        tick_at(restarted, SUBSCRIBED + timedelta(minutes=minutes))
    assert len(alerts(slack)) == 3
    numbers = [int(part.split()[0]) for text in alerts(slack) for part in text.split("#")[1:]]
    assert len(slack.delivered("C1")) == 3 and sorted(set(numbers)) == sorted(numbers)


def test_an_old_pr_stored_late_is_not_news_and_unsubscribe_stops_the_alerts(runtime, github, slack, settings):
    subscribe(runtime, "rocm live")
    alerts_of = LiveAlerts(Runtime(settings), one_team(settings), Pacer(0))
    with freeze_time(SUBSCRIBED + timedelta(minutes=1)):
        save_prs(runtime.db, [
            make_pr(20, SUBSCRIBED - timedelta(days=9), title="[ROCm] Last week's import", areas=["rocm"]),
            make_pr(21, SUBSCRIBED + timedelta(seconds=30), title="[ROCm] Just merged", areas=["rocm"]),
        ])
        alerts_of.run(SUBSCRIBED + timedelta(minutes=1))
    assert [text.split(": ", 1)[1] for text in alerts(slack)] == ["#21 [ROCm] Just merged"]

    gone = execute(runtime, "unsubscribe live", WORKSPACE, channel="C1", now=SUBSCRIBED + timedelta(minutes=2))
    assert "no longer gets live alerts of acme/engine (`rocm`)" in gone.text
    with freeze_time(SUBSCRIBED + timedelta(minutes=3)):
        save_pr(runtime.db, make_pr(22, SUBSCRIBED + timedelta(minutes=2), title="[ROCm] After", areas=["rocm"]))
        alerts_of.run(SUBSCRIBED + timedelta(minutes=3))
    assert len(alerts(slack)) == 1


def test_an_alert_follows_the_summary_a_model_writes_later(runtime, slack, settings):
    subscribe(runtime, "live")  # every area
    alerts_of = LiveAlerts(Runtime(settings), one_team(settings), Pacer(0))
    with freeze_time(SUBSCRIBED + timedelta(minutes=1)):
        save_pr(runtime.db, make_pr(30, SUBSCRIBED, what="Extracted from the description.", source="extractive"))
        alerts_of.run(SUBSCRIBED + timedelta(minutes=1))
        alerts_of.run(SUBSCRIBED + timedelta(minutes=2))
    assert slack.calls_to("chat.update") == []

    pr = get_pr(runtime.db, REPO, 30)
    pr.summary = Summary("The model's account of the change.", "Impact.", "Risks.", "Insights.", "model:test")
    with freeze_time(SUBSCRIBED + timedelta(minutes=5)):
        save_pr(runtime.db, pr)
        alerts_of.run(SUBSCRIBED + timedelta(minutes=5))
        alerts_of.run(SUBSCRIBED + timedelta(minutes=6))
    [update] = slack.calls_to("chat.update")
    assert update.params["ts"] == slack.thread("C1")[0][0]["ts"]
    assert "The model's account of the change." in "\n".join(b["text"]["text"] for b in update.params["blocks"] if "text" in b)
    assert len(alerts(slack)) == 1


def test_two_replicas_and_a_lost_answer_still_announce_each_pr_once(runtime, slack, settings):
    subscribe(runtime, "rocm live", now=datetime.now(LA) - timedelta(minutes=1))
    save_prs(runtime.db, [make_pr(40 + i, datetime.now(LA) - timedelta(minutes=30 - i), title=f"[ROCm] Burst {i}",
                                  areas=["rocm"]) for i in range(12)])
    slack.fail("chat.postMessage", Fault(status=500, accept=True))  # Slack keeps the alert, the answer is lost
    replicas_at_once([LiveAlerts(Runtime(settings), one_team(settings), Pacer(0)) for _ in range(2)], datetime.now(LA))
    [alert] = alerts(slack)
    assert alert.startswith("*12 PRs merged in rocm*")
    assert len(slack.posts("C1")) == 1  # read back from the channel, never sent twice


def test_live_subscriptions_take_no_time_and_list_beside_the_daily_report(runtime):
    refused = execute(runtime, "subscribe rocm live at 9", WORKSPACE, channel="C1", now=SUBSCRIBED)
    assert refused.error and "live alerts come as PRs merge; `at` is for reports" in refused.text
    subscribe(runtime, "rocm watch")
    subscribe(runtime, "at 8am")
    listed = execute(runtime, "subscriptions", WORKSPACE, channel="C1", now=SUBSCRIBED).text.split("\n")
    assert listed == [
        "This channel gets the daily report of acme/engine at 08:00 America/Los_Angeles time.",
        "This channel gets live alerts of acme/engine (`rocm`) as PRs merge.",
    ]
    assert "has no live alerts of acme/engine to stop" not in execute(runtime, "unsubscribe live", WORKSPACE, channel="C1").text
    assert execute(runtime, "unsubscribe live", WORKSPACE, channel="C1").text == "This channel has no live alerts to stop."
    assert "daily report" in execute(runtime, "subscriptions", WORKSPACE, channel="C1").text
