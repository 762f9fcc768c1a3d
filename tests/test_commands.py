import sqlite3
import threading
from dataclasses import replace
from datetime import date, datetime

import pytest
from conftest import LA
from slack_helpers import LOUD_TITLE, REPO, import_fixtures, seed_day

from bot.answers.commands import execute
from bot.answers.empty_store import EMPTY_STORE
from bot.answers.subscribing import parse_time
from bot.runtime import Runtime
from store.tables.posts import PostKey, claim_post
from store.tables.subscriptions import channel_subscriptions
from store.tables.teams import NO_TEAM

NOW = datetime(2026, 3, 8, 15, 30, tzinfo=LA)


def say(rt, text, channel=None, user="U0ALICE", now=NOW):
    return execute(rt, text, NO_TEAM, channel=channel, user=user, now=now)


@pytest.fixture
def filled(runtime):
    import_fixtures(runtime.db)
    return runtime


def test_today_lists_the_day_as_of_now(filled):
    for text in ("", "today", "  TODAY  "):
        reply = say(filled, text)
        assert not reply.error and not reply.public
        head = reply.messages[0].text
        assert "2026-03-08 (PST), as of 15:30" in head
        assert "3 merged: 2 substantial, 1 trivial" in head
    body = reply.text
    assert "<https://github.com/acme/engine/pull/4090|#4090 [Spec Decode] Add EAGLE drafter metrics>" in body
    assert "Full summary" not in body  # buttons live in blocks, the text is the fallback
    buttons = [b["accessory"]["value"] for m in reply.messages for b in m.blocks if "accessory" in b]
    assert buttons == ["acme/engine#4102", "acme/engine#4090"]


def test_past_days_and_ranges(filled):
    yesterday = say(filled, "yesterday")
    assert "for 2026-03-07 (PST)*" in yesterday.text and "as of" not in yesterday.text
    assert "#4085" in yesterday.text
    day = say(filled, "2026-03-07")
    assert day.text == yesterday.text
    both = say(filled, "2026-03-07..2026-03-08")
    assert "for 2026-03-07..2026-03-08" in both.text and "4 merged" in both.text
    assert "Mar 07 23:59" in both.text  # ranges show the date of each merge
    week = say(filled, "week")
    assert "for 2026-03-02..2026-03-08 (PST/PDT), as of 15:30" in week.text  # DST began on Mar 8 and "4 merged" in week.text


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2026-02-30", "Feb 30 is not a date"),
        ("2026-03-08..2026-03-01", "starts after it ends"),
        ("2024-01-01..2026-03-01", "ranges are limited to 366 days"),
        ("2026-03-08 rocm", "`rocm` is not a day or a range of days; give one period"),
        ("area", "which area?"),
        ("area gardening", "unknown area 'gardening'; known areas: rocm"),
        ("author", "give one GitHub login"),
        ("pr twelve", "give a PR number"),
        ("pr 99999999999999999999999", "give a PR number"),
        ("search", "search for what?"),
        ("ask", "ask what?"),
        ("areas week yesterday", "give at most one period"),
    ],
)
def test_bad_arguments_get_one_line_and_usage(filled, text, expected):
    reply = say(filled, text)
    assert reply.error
    explanation, usage = reply.text.split("\n")
    assert expected in explanation
    assert usage.startswith("Usage: `/prdigest ")


def test_unknown_words_name_the_closest_command(filled):
    reply = say(filled, "subscrbe rocm")  # never run for a guess: it would change what the channel gets
    assert reply.error and reply.text.startswith("`subscrbe` is not a command. Did you mean `subscribe`?")
    assert "/prdigest area NAME [when]" in reply.text
    assert not channel_subscriptions(filled.db, NO_TEAM, "C0REPORTS")
    question = say(filled, "what changed in rocm")
    assert "To ask a question: `/prdigest ask what changed in rocm`" in question.text


def test_a_day_without_prs_points_to_the_latest_day(filled):
    reply = say(filled, "2026-03-01")
    assert not reply.error
    assert reply.text.startswith("Nothing merged in acme/engine for 2026-03-01 (PST).")
    assert "The latest day with merged PRs is 2026-03-08: `/prdigest 2026-03-08`." in reply.text
    later = say(filled, "today", now=datetime(2026, 3, 10, 8, 5, tzinfo=LA))
    assert later.text.startswith("Nothing merged in acme/engine for 2026-03-10 (PDT), as of 08:05.")
    assert "latest day with merged PRs is 2026-03-08" in later.text


def test_an_empty_store_says_so_for_every_command_that_reads_prs(runtime):
    for text in ("today", "area rocm", "areas week", "author ada-l", "pr 4090", "search eagle", "ask anything on rocm?"):
        assert say(runtime, text).text == EMPTY_STORE, text
    assert "/prdigest search TEXT" in say(runtime, "help").text
    assert "This channel now gets" in say(runtime, "subscribe rocm", channel="C1").text
    seed_day(runtime.db, date(2026, 3, 8), 1, repo="other/repo")
    assert say(runtime, "area rocm").text.startswith("The store holds no PRs of acme/engine yet: fill it with")


def test_area_defaults_to_the_last_seven_days(filled):
    reply = say(filled, "area AMD")  # an alias
    assert "merged PRs in rocm for 2026-03-02..2026-03-08" in reply.text
    assert "#4102" in reply.text and "#4090" not in reply.text
    narrowed = say(filled, "area spec decode yesterday")
    assert "Nothing merged in speculative-decoding in acme/engine for 2026-03-07" in narrowed.text


def test_areas_counts(filled):
    reply = say(filled, "areas")
    lines = reply.text.split("\n")
    assert lines[0] == "*Areas of acme/engine, 2026-03-02..2026-03-08 (PST/PDT): 4 merged PRs*"
    assert "\u2022 `rocm` 1" in lines
    assert any(line.startswith("No PRs: ") and "tpu" in line for line in lines)


def test_author(filled):
    reply = say(filled, "author @grace-h")
    assert "merged PRs by grace-h for 2026-03-02..2026-03-08" in reply.text
    assert "#4085" in reply.text and "#4099" in reply.text and "#4102" not in reply.text
    assert "Nothing merged by nobody" in say(filled, "author nobody").text


def test_pr_accepts_numbers_and_links(filled):
    for text in ("pr 4090", "pr #4090", "pr https://github.com/acme/engine/pull/4090",
                 "pr <https://github.com/acme/engine/pull/4090/files|PR 4090>"):
        reply = say(filled, text)
        assert not reply.error and "*What changed and why*" in reply.text, text
        assert reply.text.startswith("*<https://github.com/acme/engine/pull/4090|#4090 [Spec Decode]"), text
    missing = say(filled, "pr #99999")
    assert "#99999 is not in the store" in missing.text and missing.error  # `prdigest run` exits 1 on it


def test_long_periods_stay_within_a_response_url(runtime):
    for offset in range(7):
        seed_day(runtime.db, date(2026, 3, 2 + offset), 40, start=2000 + 100 * offset,
                 title="[Core] " + "A long title that keeps going " * 4)
    reply = say(runtime, "week")
    assert len(reply.messages) <= 5  # Slack takes five messages per response_url
    for message in reply.messages:
        assert len(message.blocks) <= 50
        assert all(len(block["text"]["text"]) <= 3000 for block in message.blocks)
    assert "280 merged" in reply.text
    assert "\u2026and 230 more; narrow it down" in reply.text


def test_untrusted_title_is_inert_in_every_reply(filled):
    for text in ("today", "2026-03-08", "week", "area rocm", "author ada-l", "search paged attention"):
        body = say(filled, text).text
        assert LOUD_TITLE not in body, text
        assert "&lt;!channel&gt;" in body, text
    echoed = say(filled, "search <!here> <@U123>")
    assert "<!here>" not in echoed.text and "&lt;!here&gt;" in echoed.text


def test_subscribe_unsubscribe_subscriptions(filled):
    db = filled.db
    done = say(filled, "subscribe rocm nvidia at 8:30", channel="C1")
    assert done.public and not done.error
    assert "This channel now gets the daily report of acme/engine (`rocm nvidia`) at 08:30 America/Los_Angeles time" in done.text
    assert "(set by <@U0ALICE>)" in done.text and "The next one comes tomorrow." in done.text
    [sub] = channel_subscriptions(db, NO_TEAM, "C1")
    assert sub.filter.text == "rocm nvidia" and sub.cadence.text == "daily at 08:30"

    early = datetime(2026, 3, 9, 7, 0, tzinfo=LA)
    again = say(filled, "subscribe at 9am", channel="C1", now=early)
    assert again.text.startswith("Updated: this channel gets the daily report of acme/engine at 09:00 America/Los_Angeles time")
    assert "The next one comes today." in again.text
    assert channel_subscriptions(db, NO_TEAM, "C1")[0].created_at == sub.created_at  # the first report's day stays
    claim_post(db, PostKey.of("C1", REPO, date(2026, 3, 8)), "test", list, 60, 0)  # today's report is out already (nothing to post)
    assert "The next one comes tomorrow." in say(filled, "subscribe", channel="C1", now=early).text

    assert "This channel gets the daily report of acme/engine at 09:00" in say(filled, "subscriptions", channel="C1").text
    assert "C1: the daily report" in say(filled, "subscriptions").text  # outside Slack: every channel

    gone = say(filled, "unsubscribe", channel="C1")
    assert gone.public and "no longer gets the daily report of acme/engine" in gone.text
    assert channel_subscriptions(db, NO_TEAM, "C1") == []
    assert "has no reports, live alerts or release threads to stop" in say(filled, "unsubscribe", channel="C1").text


@pytest.mark.parametrize("text, expected", [
    ("subscribe", "subscriptions belong to a Slack channel"),
    ("subscribe at", "`at` needs a time"),
    ("subscribe at 25:00", "`at` needs a time"),
    ("subscribe gardening", "`gardening` is not a filter term or an area"),
])
def test_subscribe_bad_input(filled, text, expected):
    reply = say(filled, text, channel=None if text == "subscribe" else "C1")
    assert reply.error and expected in reply.text
    assert channel_subscriptions(filled.db, NO_TEAM, "C1") == []


def test_parse_time():
    assert [parse_time(t).strftime("%H:%M") for t in ("9", "9:05", "09:30", "9am", "12am", "5:30pm", "23:59")] == [
        "09:00", "09:05", "09:30", "09:00", "00:00", "17:30", "23:59"]
    assert all(parse_time(t) is None for t in ("24:00", "9:60", "13pm", "noon", "0am"))


def test_a_locked_store_gets_an_apology_not_a_traceback(filled, isolated_env):
    # Gives up on the lock after 0.5 s rather than the default 10 s; the lock is held until the reply came.
    impatient = Runtime(replace(filled.settings, busy_timeout=0.5))
    holder = sqlite3.connect(isolated_env)
    holder.execute("begin immediate")  # another process is writing
    try:
        reply = say(impatient, "subscribe rocm", channel="C1")
    finally:
        holder.rollback()
        holder.close()
    try:
        assert reply.error and reply.text.startswith("Sorry, the store is busy")
        assert say(impatient, "subscribe rocm", channel="C1").public  # and the next command works
    finally:
        impatient.close()


def test_an_unusable_store_gets_an_apology(monkeypatch, tmp_path):
    from bot.config import Settings
    from bot.runtime import Runtime

    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("PRDIGEST_DB", str(blocker / "sub" / "x.db"))
    reply = execute(Runtime(Settings.from_env()), "today", NO_TEAM, now=NOW)
    assert reply.error and reply.text.startswith("Sorry, the store is busy or unavailable")


def test_threads_use_their_own_connections(filled):
    """Listeners run on a thread pool: each thread must get a working connection of its own."""
    seen, errors = [], []  # the connections themselves, so that no id is reused after a thread ends

    def work():
        try:
            seen.append(filled.db)
            assert not say(filled, "today").error
        except Exception as exc:  # collected for the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and len({id(db) for db in seen}) == 8
