"""The scheduler inside `serve`, on a frozen clock: day boundaries, DST switches, restarts mid-thread."""
from datetime import date, datetime, time

import pytest
from conftest import LA
from freezegun import freeze_time
from servers.github_api import Fault as GitHubFault
from servers.github_api import day_of_pulls
from servers.slack_api import BOT_TOKEN, Fault
from slack_helpers import REPO, WORKSPACE, import_fixtures, one_team, seed_day

from bot.config import Settings
from bot.runtime import Runtime
from bot.slack.daily import Pacer, repo_ingester
from bot.slack.scheduler import Scheduler
from store.subscription.cadence import DAILY, WEEKDAYS, WEEKLY, Cadence
from store.subscription.filter import EVERYTHING, load_filter
from store.tables.posts import PostKey, claim_post, get_post
from store.tables.subscriptions import subscribe

LONG_AGO = datetime(2026, 1, 1, tzinfo=LA)


@pytest.fixture
def settings(runtime, slack, monkeypatch):
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("PRDIGEST_SLACK_API_URL", slack.api_url)
    return Settings.from_env()


def start(settings, ingest: bool = False) -> Scheduler:
    """A scheduler as `serve` starts it: its own runtime, Slack client and (optionally) ingestion."""
    runtime = Runtime(settings)
    return Scheduler(runtime, one_team(settings), ingest=repo_ingester(runtime) if ingest else None, pacer=Pacer(0))


def tick_at(scheduler: Scheduler, moment: str) -> None:
    with freeze_time(moment):
        scheduler.tick()


def parents(slack, channel="C1"):
    return [call.params["text"].split("\n")[0] for call in slack.delivered(channel) if not call.params.get("thread_ts")]


def test_the_report_comes_at_its_time_the_day_after(runtime, slack, settings):
    seed_day(runtime.db, date(2026, 3, 4), 3)
    seed_day(runtime.db, date(2026, 3, 5), 2, start=2000)
    subscribe(runtime.db, WORKSPACE, "C1", REPO, EVERYTHING, Cadence(DAILY, time(9, 0)), "U1", LONG_AGO)
    scheduler = start(settings)
    tick_at(scheduler, "2026-03-05T08:59:00-08:00")
    assert slack.posts() == []
    tick_at(scheduler, "2026-03-05T09:00:00-08:00")
    assert parents(slack) == ["*engine: merged PRs for 2026-03-04 (PST)*"]
    for moment in ("2026-03-05T09:30:00-08:00", "2026-03-05T23:59:59-08:00", "2026-03-06T00:00:01-08:00",
                   "2026-03-06T08:59:59-08:00"):
        tick_at(scheduler, moment)
    assert len(parents(slack)) == 1
    tick_at(scheduler, "2026-03-06T09:00:30-08:00")
    assert parents(slack)[1] == "*engine: merged PRs for 2026-03-05 (PST)*"


def test_spring_forward_skips_the_hour_and_the_short_day_is_whole(runtime, slack, settings):
    import_fixtures(runtime.db)  # 2026-03-08 holds merges at 00:00:05 PST and 23:59:59 PDT
    subscribe(runtime.db, WORKSPACE, "C1", REPO, EVERYTHING, Cadence(DAILY, time(2, 30)), "U1", LONG_AGO)
    scheduler = start(settings)
    tick_at(scheduler, "2026-03-08T01:59:00-08:00")
    assert slack.posts() == []
    tick_at(scheduler, "2026-03-08T03:00:00-07:00")  # 02:30 never happened that night
    assert parents(slack) == ["*Acme: merged PRs for 2026-03-07 (PST)*"]
    tick_at(scheduler, "2026-03-09T02:29:00-07:00")
    assert len(parents(slack)) == 1
    tick_at(scheduler, "2026-03-09T02:30:00-07:00")
    assert parents(slack)[1] == "*Acme: merged PRs for 2026-03-08 (PST)*"
    report = "\n".join(call.params["text"] for call in slack.posts())
    assert "3 merged" in report and "#4090" in report and "#4102" in report


def test_fall_back_posts_at_the_first_of_the_two_times(runtime, slack, settings):
    seed_day(runtime.db, date(2026, 10, 31), 2)
    subscribe(runtime.db, WORKSPACE, "C1", REPO, EVERYTHING, Cadence(DAILY, time(1, 30)), "U1", LONG_AGO)
    scheduler = start(settings)
    tick_at(scheduler, "2026-11-01T01:29:00-07:00")
    assert slack.posts() == []
    tick_at(scheduler, "2026-11-01T01:30:00-07:00")  # the first 01:30 (PDT)
    assert len(parents(slack)) == 1
    tick_at(scheduler, "2026-11-01T01:30:00-08:00")  # the second 01:30 (PST)
    assert len(parents(slack)) == 1


def test_a_restart_in_the_middle_of_a_thread_continues_it(runtime, slack, settings):
    seed_day(runtime.db, date(2026, 3, 4), 120)  # a parent and three replies
    subscribe(runtime.db, WORKSPACE, "C1", REPO, EVERYTHING, Cadence(DAILY, time(9, 0)), "U1", LONG_AGO)
    slack.fail("chat.postMessage", None, None, Fault(status=200, error="fatal_error"))
    first = start(settings)
    tick_at(first, "2026-03-05T09:00:00-08:00")
    post = get_post(runtime.db, "C1", REPO, date(2026, 3, 4), team=WORKSPACE)
    assert post.state == "posting" and post.replies_sent == 1
    tick_at(first, "2026-03-05T09:01:00-08:00")  # the failing channel waits before trying again
    assert len(slack.posts()) == 3

    restarted = start(settings)  # a new process: nothing in memory, everything in the store
    tick_at(restarted, "2026-03-05T09:02:00-08:00")
    delivered = slack.delivered("C1")
    assert [call.params["text"] for call in delivered] == [m["text"] for m in post.messages]
    assert all(call.params["thread_ts"] == post.parent_ts for call in delivered[1:])
    assert get_post(runtime.db, "C1", REPO, date(2026, 3, 4), team=WORKSPACE).state == "done"
    tick_at(restarted, "2026-03-05T10:00:00-08:00")
    assert len(slack.delivered()) == len(delivered)


def test_the_same_process_retries_a_failed_channel_later(runtime, slack, settings):
    seed_day(runtime.db, date(2026, 3, 4), 2)
    subscribe(runtime.db, WORKSPACE, "C1", REPO, EVERYTHING, Cadence(DAILY, time(9, 0)), "U1", LONG_AGO)
    slack.fail("chat.postMessage", Fault(status=503, headers={}), Fault(status=503, headers={}), Fault(status=503, headers={}))
    scheduler = start(settings)
    tick_at(scheduler, "2026-03-05T09:00:00-08:00")
    assert get_post(runtime.db, "C1", REPO, date(2026, 3, 4), team=WORKSPACE).parent_ts is None
    tick_at(scheduler, "2026-03-05T09:05:00-08:00")
    assert get_post(runtime.db, "C1", REPO, date(2026, 3, 4), team=WORKSPACE).state == "done"
    assert len(parents(slack)) == 1


def test_one_channel_failing_does_not_stop_the_others(runtime, slack, settings):
    seed_day(runtime.db, date(2026, 3, 4), 2)
    subscribe(runtime.db, WORKSPACE, "C0GONE", REPO, EVERYTHING, Cadence(DAILY, time(9, 0)), "U1", LONG_AGO)
    subscribe(runtime.db, WORKSPACE, "C1", REPO, EVERYTHING, Cadence(DAILY, time(9, 0)), "U1", LONG_AGO)
    slack.fail("chat.postMessage", Fault(status=200, error="channel_not_found"))
    tick_at(start(settings), "2026-03-05T09:00:00-08:00")
    assert len(parents(slack, "C1")) == 1


def test_a_new_subscription_starts_the_next_day(runtime, slack, settings):
    seed_day(runtime.db, date(2026, 3, 4), 2)
    seed_day(runtime.db, date(2026, 3, 5), 2, start=2000)
    subscribe(runtime.db, WORKSPACE, "C1", REPO, EVERYTHING, Cadence(DAILY, time(9, 0)), "U1", datetime(2026, 3, 5, 10, 0, tzinfo=LA))
    scheduler = start(settings)
    tick_at(scheduler, "2026-03-05T10:01:00-08:00")
    assert slack.posts() == []
    tick_at(scheduler, "2026-03-06T09:00:00-08:00")
    assert parents(slack) == ["*engine: merged PRs for 2026-03-05 (PST)*"]


def test_area_subscriptions_get_their_areas_only(runtime, slack, settings):
    seed_day(runtime.db, date(2026, 3, 4), 2, areas=["rocm"])
    seed_day(runtime.db, date(2026, 3, 4), 3, start=2000, areas=["core"])
    subscribe(runtime.db, WORKSPACE, "C1", REPO, load_filter("rocm"), Cadence(DAILY, time(9, 0)), "U1", LONG_AGO)
    tick_at(start(settings), "2026-03-05T09:00:00-08:00")
    text = "\n".join(call.params["text"] for call in slack.posts())
    assert "merged PRs in rocm for 2026-03-04" in text and "2 merged" in text and "#2000" not in text


def test_it_ingests_before_posting(runtime, slack, github, settings):
    github.add(REPO, *day_of_pulls(date(2026, 3, 4), 4, LA, first_number=7000))
    subscribe(runtime.db, WORKSPACE, "C1", REPO, EVERYTHING, Cadence(DAILY, time(9, 0)), "U1", LONG_AGO)
    tick_at(start(settings, ingest=True), "2026-03-05T09:00:00-08:00")
    text = "\n".join(call.params["text"] for call in slack.posts())
    assert "4 merged" in text and "#7003" in text
    assert github.count("/search/issues") >= 1


def test_github_down_still_posts_from_the_store(runtime, slack, github, settings, monkeypatch, caplog):
    seed_day(runtime.db, date(2026, 3, 4), 2)
    subscribe(runtime.db, WORKSPACE, "C1", REPO, EVERYTHING, Cadence(DAILY, time(9, 0)), "U1", LONG_AGO)
    github.fail(GitHubFault(429, {"Retry-After": "3600"}, "Too Many Requests"), times=100)
    monkeypatch.setenv("PRDIGEST_GITHUB_MAX_WAIT", "1")
    tick_at(start(Settings.from_env(), ingest=True), "2026-03-05T09:00:00-08:00")
    assert "2 merged" in slack.posts()[0].params["text"]
    assert "ingest of acme/engine failed" in caplog.text


def test_a_post_another_process_is_sending_is_left_to_it_until_its_claim_runs_out(runtime, slack, settings):
    seed_day(runtime.db, date(2026, 3, 4), 2)
    subscribe(runtime.db, WORKSPACE, "C1", REPO, EVERYTHING, Cadence(DAILY, time(9, 0)), "U1", LONG_AGO)
    key = PostKey.of("C1", REPO, date(2026, 3, 4), team=WORKSPACE)
    planned = lambda: [{"text": "planned by post-daily", "blocks": []}]
    due = datetime.fromisoformat("2026-03-05T09:00:00-08:00").timestamp()
    claim_post(runtime.db, key, "post-daily-from-cron", planned, 60, due)
    scheduler = start(settings)
    tick_at(scheduler, "2026-03-05T09:00:00-08:00")
    assert slack.posts() == [] and get_post(runtime.db, "C1", REPO, date(2026, 3, 4), team=WORKSPACE).state == "posting"

    claim_post(runtime.db, key, "post-daily-from-cron", planned, 60, due - 120)  # that process died
    tick_at(scheduler, "2026-03-05T09:01:00-08:00")
    assert [call.params["text"] for call in slack.delivered("C1")] == ["planned by post-daily"]
    assert get_post(runtime.db, "C1", REPO, date(2026, 3, 4), team=WORKSPACE).state == "done"


# ---------------------------------------------------------------- weekdays and weekly, across DST and long weekends

def shown_posts(slack, channel="C1") -> str:
    return "\n".join(block["text"]["text"] for call in slack.delivered(channel) for block in call.params["blocks"])


def spring_week(db) -> None:
    """Merges from Monday Mar 2 to Monday Mar 9, 2026: the spring switch is on Sunday Mar 8."""
    for offset, start in enumerate(range(1000, 1500, 100)):  # Mon Mar 2 .. Fri Mar 6: three PRs a day
        seed_day(db, date(2026, 3, 2 + offset), 3, start=start)
    import_fixtures(db)  # Sat Mar 7: #4085; Sun Mar 8: #4090 at 00:00:05 PST, #4099, #4102 at 23:59:59 PDT
    seed_day(db, date(2026, 3, 9), 2, start=3000)


def test_weekdays_monday_covers_the_weekend_of_the_spring_switch(runtime, slack, settings):
    spring_week(runtime.db)
    subscribe(runtime.db, WORKSPACE, "C1", REPO, EVERYTHING, Cadence(WEEKDAYS, time(9, 0)), "U1", LONG_AGO)
    scheduler = start(settings)
    tick_at(scheduler, "2026-03-06T09:00:00-08:00")  # Friday: Thursday's report
    for moment in ("2026-03-07T09:00:00-08:00", "2026-03-08T09:00:00-07:00", "2026-03-09T08:59:00-07:00"):
        tick_at(scheduler, moment)
    assert parents(slack) == ["*Acme: merged PRs for 2026-03-05 (PST)*"]
    slack.reset()
    tick_at(scheduler, "2026-03-09T09:00:00-07:00")
    assert parents(slack) == ["*Acme: merged PRs for 2026-03-06..2026-03-08 (PST/PDT)*"]
    body = shown_posts(slack)
    assert all(f"#{n} " in body for n in (1400, 1401, 1402, 4085, 4090, 4099, 4102))
    assert "#1300 " not in body and "#3000 " not in body and "7 merged" in body
    slack.reset()
    tick_at(scheduler, "2026-03-10T09:00:00-07:00")
    assert parents(slack) == ["*Acme: merged PRs for 2026-03-09 (PDT)*"]


def test_a_monday_after_a_long_weekend_covers_every_day_since_the_last_report(runtime, slack, settings):
    spring_week(runtime.db)
    subscribe(runtime.db, WORKSPACE, "C1", REPO, EVERYTHING, Cadence(WEEKDAYS, time(9, 0)), "U1", LONG_AGO)
    tick_at(start(settings), "2026-03-05T09:00:00-08:00")  # Thursday: Wednesday's report
    # The bot is down from Thursday afternoon, the Friday of a long weekend, until Monday.
    tick_at(start(settings), "2026-03-09T09:30:00-07:00")
    assert parents(slack) == [
        "*Acme: merged PRs for 2026-03-04 (PST)*", "*Acme: merged PRs for 2026-03-05..2026-03-08 (PST/PDT)*"]
    assert "#1300 " in shown_posts(slack) and "10 merged" in shown_posts(slack)


def test_weekdays_after_the_autumn_switch(runtime, slack, settings):
    for day, start_at in ((30, 1000), (31, 2000)):
        seed_day(runtime.db, date(2026, 10, day), 2, start=start_at)
    seed_day(runtime.db, date(2026, 11, 1), 2, start=3000)  # Sunday: 25 hours long
    subscribe(runtime.db, WORKSPACE, "C1", REPO, EVERYTHING, Cadence(WEEKDAYS, time(1, 30)), "U1", LONG_AGO)
    scheduler = start(settings)
    tick_at(scheduler, "2026-11-01T01:30:00-07:00")  # Sunday's doubled hour: no report on a Sunday
    tick_at(scheduler, "2026-11-02T01:30:00-08:00")
    assert parents(slack) == ["*engine: merged PRs for 2026-10-30..2026-11-01 (PDT/PST)*"]
    assert "6 merged" in shown_posts(slack)


def test_weekly_posts_one_thread_for_the_week_with_counts_by_area_and_five_highlights(runtime, slack, settings):
    spring_week(runtime.db)
    seed_day(runtime.db, date(2026, 3, 4), 2, start=5000, areas=["rocm"], type="trivial")
    subscribe(runtime.db, WORKSPACE, "C1", REPO, EVERYTHING, Cadence(WEEKLY, time(9, 0), 0), "U1", LONG_AGO)
    subscribe(runtime.db, WORKSPACE, "C1", REPO, EVERYTHING, Cadence(DAILY, time(9, 0)), "U1", LONG_AGO)  # both, each once
    scheduler = start(settings)
    tick_at(scheduler, "2026-03-09T09:00:00-07:00")
    assert sorted(parents(slack)) == [
        "*Acme: merged PRs for 2026-03-08 (PST)*", "*Acme: merged PRs for the week 2026-03-02..2026-03-08 (PST/PDT)*"]
    weekly = next(call for call in slack.delivered("C1") if "the week" in call.params["text"])
    parent = "\n".join(block["text"]["text"] for block in weekly.params["blocks"])
    assert "21 merged: 18 substantial, 3 trivial" in parent
    assert ("PRs by area, each counting every PR touching it: core (15), rocm (3), docs (1), frontend (1),"
            " speculative-decoding (1), kernels (1), attention (1)") in parent
    assert parent.count("\n\u2022 ") == 5  # five highlights
    tops, replies = slack.thread("C1")
    [week] = [message["ts"] for message in tops if "the week" in message["text"]]
    body = "\n".join(message["text"] for message in replies if message["thread_ts"] == week)
    assert all(f"#{n} " in body for n in (1000, 1402, 4085, 4102, 5000))
    assert body.index("*core* (15)") < body.index("*trivial* (3)") and "#3000 " not in body
    for moment in ("2026-03-09T10:00:00-07:00", "2026-03-10T09:00:00-07:00", "2026-03-15T23:00:00-07:00"):
        tick_at(scheduler, moment)
    assert len([p for p in parents(slack) if "the week" in p]) == 1


def test_a_week_missed_while_the_bot_was_down_is_posted_late_once(runtime, slack, settings):
    spring_week(runtime.db)
    subscribe(runtime.db, WORKSPACE, "C1", REPO, EVERYTHING, Cadence(WEEKLY, time(9, 0), 0), "U1", LONG_AGO)
    tick_at(start(settings), "2026-03-10T14:00:00-07:00")  # down all Monday
    tick_at(start(settings), "2026-03-11T09:00:00-07:00")
    assert parents(slack) == ["*Acme: merged PRs for the week 2026-03-02..2026-03-08 (PST/PDT)*"]


def test_serve_polls_the_default_repository_until_polling_is_turned_off(slack, monkeypatch):
    from servers.github_api import FakeGitHub

    from bot.config import DEFAULT_REPO
    from store.tables.prs import known_repos

    with FakeGitHub({DEFAULT_REPO: day_of_pulls(date(2026, 3, 4), 2, LA)}) as github:
        for name, value in {"PRDIGEST_GITHUB_API_URL": github.url, "SLACK_BOT_TOKEN": BOT_TOKEN,
                            "PRDIGEST_SLACK_API_URL": slack.api_url}.items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("PRDIGEST_POLL_MINUTES")  # PRDIGEST_REPOS is left at its default
        scheduler = start(Settings.from_env(), ingest=True)
        tick_at(scheduler, "2026-03-05T08:00:00-08:00")
        assert known_repos(scheduler.runtime.db) == [DEFAULT_REPO]
        monkeypatch.setenv("PRDIGEST_POLL_MINUTES", "0")
        quiet = Runtime(Settings.from_env())
        assert repo_ingester(quiet) is None and not quiet.settings.ingests
