"""`subscribe` with cadences, `unsubscribe` by kind, and `post-daily --dry-run` of weekly and weekdays subscriptions."""
from __future__ import annotations

import re
from datetime import date, datetime

import pytest
from conftest import LA
from slack_helpers import import_fixtures, seed_day

from bot.answers.commands import execute
from store.tables.subscriptions import channel_subscriptions
from store.tables.teams import NO_TEAM

NOW = datetime(2026, 3, 11, 10, 0, tzinfo=LA)  # a Wednesday


def say(runtime, text: str, channel: str | None = "C1", now: datetime = NOW):
    return execute(runtime, text, NO_TEAM, channel=channel, user="U0ALICE", now=now)


def test_weekly_and_weekdays_subscriptions_say_when_they_come(runtime):
    weekly = say(runtime, "subscribe weekly on friday at 5pm -bots")
    assert weekly.public and weekly.text.startswith(
        "This channel now gets the weekly report of acme/engine (`-bots`) on Fridays at 17:00 America/Los_Angeles time,"
        " for the 7 days before (set by <@U0ALICE>). The next one comes on Friday.")
    weekdays = say(runtime, "subscribe rocm weekdays at 08:00")
    assert "the weekday report of acme/engine (`rocm`) at 08:00 America/Los_Angeles time, Monday to Friday" in weekdays.text
    assert "The next one comes tomorrow." in weekdays.text
    assert "The next one comes on Monday." in say(runtime, "subscribe weekdays at 8", now=datetime(2026, 3, 13, 9, tzinfo=LA)).text
    daily = say(runtime, "subscribe rocm")  # daily and weekdays are one slot: this updates it
    assert daily.text.startswith("Updated: this channel gets the daily report of acme/engine (`rocm`) at 09:00")
    assert [sub.cadence.text for sub in channel_subscriptions(runtime.db, NO_TEAM, "C1")] == [
        "daily at 09:00", "weekly on friday at 17:00"]
    assert say(runtime, "subscriptions").text.split("\n") == [
        "This channel gets the daily report of acme/engine (`rocm`) at 09:00 America/Los_Angeles time.",
        "This channel gets the weekly report of acme/engine (`-bots`) on Fridays at 17:00 America/Los_Angeles time,"
        " for the 7 days before.",
    ]
    gone = say(runtime, "unsubscribe weekly")
    assert gone.text == ("This channel no longer gets the weekly report of acme/engine (`-bots`) on Fridays at 17:00"
                         " America/Los_Angeles time, for the 7 days before.")
    assert say(runtime, "unsubscribe weekly").text == "This channel has no weekly report to stop."
    assert [sub.cadence.name for sub in channel_subscriptions(runtime.db, NO_TEAM, "C1")] == ["daily"]


@pytest.mark.parametrize("text, says", [
    ("subscribe weekly daily", "give one of daily, weekdays, weekly, live or releases"),
    ("subscribe on friday", "`on DAY` is for the weekly report: `weekly on friday`"),
    ("subscribe weekly on someday", "`on` needs a day of the week, like `weekly on friday`"),
    ("subscribe my-prs", "my-prs is a subscription of your own: `/prdigest me subscribe my-prs`"),
    ("subscribe weekly rcom", "`rcom` is not a filter term: did you mean `rocm`?"),
    ("subscribe dialy", "`dialy` is not a filter term: did you mean `daily`?"),
    ("unsubscribe weekly live", "unsubscribe takes at most a repository and one of daily, weekly, live, releases or my-prs"),
])
def test_bad_subscriptions_get_one_line_and_change_nothing(runtime, text, says):
    reply = say(runtime, text)
    assert reply.error and reply.text.split("\n")[0] == says, reply.text
    assert channel_subscriptions(runtime.db, NO_TEAM, "C1") == []


def numbers(out: str) -> list[int]:
    return sorted({int(n) for n in re.findall(r"\|#(\d+) ", out)})


def test_dry_run_of_a_weekly_subscription_is_the_week_that_ends_on_the_date(runtime, run_cli):
    for offset in range(8):  # Mar 1..8, two PRs a day
        seed_day(runtime.db, date(2026, 3, 1 + offset), 2, start=1000 + 100 * offset)
    assert not say(runtime, "subscribe weekly", channel="C0WEEK").error
    dry = run_cli("post-daily", "--channel", "C0WEEK", "--date", "2026-03-08", "--dry-run")
    assert dry.code == 0 and dry.out.startswith("*engine: merged PRs for the week 2026-03-02..2026-03-08 (PST/PDT)*")
    assert numbers(dry.out) == [n for day in range(1, 8) for n in (1000 + 100 * day, 1001 + 100 * day)]
    daily = run_cli("post-daily", "--channel", "C0WEEK", "--date", "2026-03-08", "--dry-run", "--filter", "core")
    assert "merged PRs in core for the week" in daily.out  # --filter replaces the rule, not the cadence


def test_dry_run_of_a_weekdays_subscription_puts_friday_in_mondays_report(runtime, run_cli):
    import_fixtures(runtime.db)  # Sat Mar 7 and Sun Mar 8
    seed_day(runtime.db, date(2026, 3, 6), 2)
    assert not say(runtime, "subscribe weekdays", channel="C0WD").error
    dry = run_cli("post-daily", "--channel", "C0WD", "--date", "2026-03-06", "--dry-run")
    assert dry.out.startswith("*Acme: merged PRs for 2026-03-06..2026-03-08 (PST/PDT)*")
    assert numbers(dry.out) == [1000, 1001, 4085, 4090, 4099, 4102]
    weekly = run_cli("post-daily", "--channel", "C0WD", "--date", "2026-03-08", "--dry-run", "--weekly")
    assert weekly.out.startswith("*Acme: merged PRs for the week 2026-03-02..2026-03-08")
