"""`prdigest post-daily` and `prdigest serve` as real processes on one store: racing each other to post reports,
alerts and new releases' threads, killed mid-send, resumed."""
import os
import random
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from datetime import time as clock_time
from pathlib import Path

import pytest
import release_repo
from conftest import LA
from release_repo import START, TOKEN
from servers.github_api import FakeGitHub
from servers.github_api import Fault as GitHubFault
from servers.slack_api import BOT_TOKEN, FakeSlack, Fault, dm_channel
from slack_helpers import REPO, WORKSPACE, make_pr, seed_day, serve_http
from waiting import wait_past, wait_until

from store.db import open_db
from store.subscription.cadence import DAILY, LIVE, MY_PRS, RELEASES, WEEKDAYS, WEEKLY, Cadence
from store.subscription.filter import EVERYTHING, load_filter
from store.tables.people import link_github
from store.tables.posts import DailyPost, get_post
from store.tables.prs import save_prs
from store.tables.subscriptions import subscribe
from store.tables.teams import NO_TEAM, Team

pytestmark = pytest.mark.processes

ROOT = Path(__file__).resolve().parents[1]
DAY = date(2026, 3, 4)
# Seconds a claim holds without renewal. Racing posters all live: their claims must never lapse, even when a
# busy machine stalls one of them. A killed poster's claim is waited out: short, but long enough for the next
# process to start and find it still running, which takes a Python process well over 6 s on a loaded machine.
RACE_LEASE = 60
KILLED_LEASE = 20


@dataclass
class Run:
    code: int
    out: str
    err: str


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "race.db"
    db = open_db(path)
    seed_day(db, DAY, 90)  # a parent and three replies
    db.close()
    return path


def env_for(store: Path, slack: FakeSlack, lease: float) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PRDIGEST_", "SLACK_", "OPENAI_", "GITHUB_"))},
        "PRDIGEST_DB": str(store), "SLACK_BOT_TOKEN": BOT_TOKEN, "PRDIGEST_SLACK_API_URL": slack.api_url,
        "PRDIGEST_POST_PACE": "0", "PRDIGEST_POST_LEASE": str(lease), "PRDIGEST_POLL_MINUTES": "0",
    }


def start(env: dict[str, str], channel: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "bot", "post-daily", "--channel", channel, "--date", DAY.isoformat(), "--repo", REPO],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def finish(process: subprocess.Popen) -> Run:
    out, err = process.communicate(timeout=120)
    return Run(process.returncode, out, err)


def planned_texts(store: Path, channel: str) -> list[str]:
    db = open_db(store)
    try:
        return [message["text"] for message in get_post(db, channel, REPO, DAY, team=WORKSPACE).messages]
    finally:
        db.close()


def lease_until(store: Path, channel: str) -> float:
    """When the claim on the post runs out (unix time), as the store holds it."""
    db = open_db(store)
    try:
        held = get_post(db, channel, REPO, DAY, team=WORKSPACE).lease_until
        assert held is not None, "the post is not claimed"
        return held
    finally:
        db.close()


def assert_posted_once(slack: FakeSlack, store: Path, channel: str) -> None:
    parents, replies = slack.thread(channel)
    assert len(parents) == 1, [m["text"][:40] for m in parents]
    assert all(reply["thread_ts"] == parents[0]["ts"] for reply in replies)
    assert [m["text"] for m in parents + replies] == planned_texts(store, channel)
    db = open_db(store)
    try:
        assert get_post(db, channel, REPO, DAY, team=WORKSPACE).state == "done"
    finally:
        db.close()


def race(env: dict[str, str], channel: str, posters: int, rng: random.Random) -> list[Run]:
    processes = []
    for _ in range(posters):
        processes.append(start(env, channel))
        time.sleep(rng.uniform(0, 0.6))  # the race's shape: each poster starts at a random moment of the one before
    return [finish(process) for process in processes]


@pytest.mark.parametrize("posters", [2, 4])
def test_racing_posters_post_every_message_once(store, posters):
    rng = random.Random(posters)
    with FakeSlack() as slack:
        env = env_for(store, slack, RACE_LEASE)
        channels = [f"C{posters}R{n:02d}" for n in range(20)]
        for n in range(0, 20, 3):  # every third race waits out 429s on the way
            slack.fail("chat.postMessage", *[None] * n, Fault(429, {"Retry-After": "1"}))
        with ThreadPoolExecutor(4) as pool:  # four races at a time, each on its own channel
            outcomes = list(pool.map(lambda channel: race(env, channel, posters, random.Random(rng.random())), channels))
        for channel, runs in zip(channels, outcomes):
            assert [run.code for run in runs] == [0] * posters, [run.err for run in runs]
            lines = [run.out.strip() for run in runs]
            assert sum(line.startswith("posted ") for line in lines) == 1, lines
            assert all(line.startswith(("posted ", "already posted", "being posted")) for line in lines), lines
            assert all(len(line.splitlines()) == 1 for line in lines)
            assert_posted_once(slack, store, channel)
        assert any("being posted" in run.out for runs in outcomes for run in runs)  # the claim did turn posters away
        assert len([call for call in slack.posts() if not call.ok]) >= 7  # and the 429s happened


@pytest.mark.parametrize("part", [0, 1], ids=["parent", "reply"])
def test_a_poster_killed_after_slack_accepted_is_resumed_without_a_duplicate(store, part):
    with FakeSlack() as slack:
        env = env_for(store, slack, KILLED_LEASE)
        # Slack accepts the message and the answer never comes: the poster is killed right there.
        slack.fail("chat.postMessage", *[None] * part, Fault(accept=True, hang=True))
        first = start(env, "CKILL")
        slack.wait_for(lambda s: len(s.delivered("CKILL")) == part + 1)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
        # The claim renewed as the message went out, so it runs about KILLED_LEASE seconds from here.
        claim_ends = lease_until(store, "CKILL")

        waiting = finish(start(env, "CKILL"))  # the dead poster's claim still runs
        assert waiting.code == 0 and waiting.out.strip() == (
            f"being posted to CKILL for {DAY.isoformat()} by another process; nothing sent"
        )
        wait_past(claim_ends, "the end of the killed poster's claim")
        resumed = finish(start(env, "CKILL"))
        assert resumed.code == 0, resumed.err
        unsent = len(planned_texts(store, "CKILL")) - part - 1  # the accepted one is found, not sent again
        assert resumed.out.startswith(f"posted {unsent} message(s) to CKILL")
        assert_posted_once(slack, store, "CKILL")


# ---------------------------------------------------------------- two `serve` processes: every cadence, and direct messages

ALICE = "U0ALICE"
LONG_AGO = datetime(2026, 1, 1, tzinfo=LA)


def every_post(db) -> list[DailyPost]:
    rows = db.execute("select channel, repo, date, filter, batch, kind, release, team_id from daily_posts").fetchall()
    return [get_post(db, channel, repo, date.fromisoformat(day), text, batch, kind, release, Team(team))
            for channel, repo, day, text, batch, kind, release, team in rows]


def assert_every_post_sent_once(slack: FakeSlack, db) -> list[DailyPost]:
    """Every message Slack shows belongs to a post of the store, and every post's parts are there once, in its thread."""
    shown: dict[str, list[tuple[int, dict]]] = {}
    for room in list(slack.messages):
        for message in [*slack.thread(room)[0], *slack.thread(room)[1]]:
            payload = message["metadata"]["event_payload"]
            shown.setdefault(payload["post"], []).append((payload["part"], message))
    posts = every_post(db)
    for post in posts:
        assert post.finished, post.key
        parts = sorted(shown.pop(post.key.text, []), key=lambda item: item[0])
        assert [part for part, _ in parts] == list(range(len(post.messages))), post.key.text
        assert [message["text"] for _, message in parts] == [message["text"] for message in post.messages]
        assert all(message.get("thread_ts") == parts[0][1]["ts"] for _, message in parts[1:])
    assert shown == {}, list(shown)
    return posts


def serve_env(lease: float) -> dict[str, str]:
    return {"PRDIGEST_POST_PACE": "1", "PRDIGEST_POST_LEASE": str(lease)}


def test_two_serve_processes_send_every_report_alert_and_direct_message_once(tmp_path):
    path = tmp_path / "serve.db"
    db = open_db(path)
    now = datetime.now(LA)
    for back in range(1, 8):  # a week of merges, none of them Alice's
        seed_day(db, now.date() - timedelta(days=back), 50, start=1000 * back, author="grace-h")
    reports = [
        ("C0DAILY", "", Cadence(DAILY, clock_time(0, 0))),
        ("C0WEEK", "-bots", Cadence(WEEKLY, clock_time(0, 0), now.weekday())),
        ("C0WEEKDAYS", "", Cadence(WEEKDAYS, clock_time(0, 0))),
        (ALICE, "", Cadence(DAILY, clock_time(0, 0))),
        (ALICE, "core", Cadence(WEEKLY, clock_time(0, 0), now.weekday())),
    ]
    for channel, rule, cadence in reports:
        subscribe(db, NO_TEAM, channel, REPO, load_filter(rule), cadence, "U0ALICE", LONG_AGO)
    link_github(db, NO_TEAM, ALICE, "ada-l")  # made before the first start: its workspace's once it starts
    for channel, rule, cadence in (("C0LIVE", "rocm", Cadence(LIVE)), (ALICE, "", Cadence(MY_PRS))):
        subscribe(db, NO_TEAM, channel, REPO, load_filter(rule), cadence, ALICE, now - timedelta(minutes=1))
    merged = datetime.now(LA) - timedelta(minutes=20)
    save_prs(db, [make_pr(9001, merged, title="[ROCm] Alice's kernel", author="ada-l", areas=["rocm"]),
                  make_pr(9002, merged, title="[Core] Alice's scheduler", author="Ada-L"),
                  make_pr(9003, merged, title="[ROCm] Grace's kernel", author="grace-h", areas=["rocm"])])
    due = [(channel, cadence.due(now, LA, LONG_AGO)) for channel, _, cadence in reports]
    db.close()

    def done(db) -> bool:
        alerted = db.execute("select channel, number from live_alerts order by channel, number").fetchall()
        return alerted == [("C0LIVE", 9001), ("C0LIVE", 9003), (ALICE, 9001), (ALICE, 9002)] and len(
            [post for post in every_post(db) if post.finished]) == 3 + sum(day is not None for _, day in due)

    with FakeSlack() as slack, serve_http(path, slack, **serve_env(RACE_LEASE)), serve_http(path, slack, **serve_env(RACE_LEASE)):
        db = open_db(path)
        wait_until(lambda: done(db), "every report, alert and direct message", timeout=120)
        posts = assert_every_post_sent_once(slack, db)
        db.close()
    rooms = {post.key.channel for post in posts}
    assert {"C0DAILY", "C0WEEK", "C0LIVE", ALICE} <= rooms
    dms = [message["text"] for message in slack.thread(dm_channel(ALICE))[0]]
    assert [text for text in dms if text.startswith("*Merged*")] == [
        "*Merged* \u00b7 acme/engine: #9001 [ROCm] Alice's kernel", "*Merged* \u00b7 acme/engine: #9002 [Core] Alice's scheduler"]
    assert slack.posts(ALICE) == [] and len(dms) == 2 + sum(day is not None for channel, day in due if channel == ALICE)


def test_a_serve_killed_in_the_middle_of_a_direct_message_thread_is_resumed_by_the_next(tmp_path):
    path = tmp_path / "dm.db"
    db = open_db(path)
    now = datetime.now(LA)
    for back in range(1, 8):
        seed_day(db, now.date() - timedelta(days=back), 12, start=1000 * back)
    subscribe(db, NO_TEAM, ALICE, REPO, load_filter(""), Cadence(WEEKLY, clock_time(0, 0), now.weekday()), ALICE, LONG_AGO)
    db.close()
    with FakeSlack() as slack:
        slack.fail("chat.postMessage", None, Fault(accept=True, hang=True))  # the first reply is kept; no answer comes
        with serve_http(path, slack, **serve_env(KILLED_LEASE)) as first:
            slack.wait_for(lambda s: len(s.delivered(dm_channel(ALICE))) == 2)
            first.process.send_signal(signal.SIGKILL)
            first.process.wait(timeout=30)
        db = open_db(path)
        [post] = every_post(db)
        assert post.state == "posting" and post.in_flight == 1
        wait_past(post.lease_until, "the end of the killed process's claim")
        with serve_http(path, slack, **serve_env(KILLED_LEASE)):
            wait_until(lambda: every_post(db)[0].finished, "the thread finished by the next process")
        assert_every_post_sent_once(slack, db)
        db.close()
    assert len(slack.posts(dm_channel(ALICE))) == len(post.messages)  # the kept reply was read back, not sent again
    assert slack.calls_to("conversations.replies")


# ---------------------------------------------------------------- a new release, posted by `serve`


@pytest.fixture
def release_line(tmp_path):
    """A store of a line of releases and a channel subscribed to them; then the draft is published on GitHub."""
    store = tmp_path / "releases.db"
    with FakeGitHub(token=TOKEN) as github, FakeSlack() as slack:
        built = release_repo.build(github, REPO, START)
        release_repo.ingest_into(store, github, built, TOKEN)
        now = datetime.now(UTC)
        db = open_db(store)
        subscribe(db, NO_TEAM, "CREL", REPO, EVERYTHING, Cadence(RELEASES), "U0ALICE", now - timedelta(minutes=5))
        db.close()
        built.publish_draft(github, now, more=90)  # merged since the last ingest: a thread of several replies
        github.seen.clear()
        yield github, slack, built, store


def release_env(github: FakeGitHub, lease: float) -> dict[str, str]:
    """`serve` polling the loopback GitHub, posting without pause."""
    return {**serve_env(lease), "PRDIGEST_POST_PACE": "0", "PRDIGEST_REPOS": REPO, "PRDIGEST_GITHUB_API_URL": github.url,
            "GITHUB_TOKEN": TOKEN}


def release_post(store: Path, tag: str):
    db = open_db(store)
    try:
        (day,) = db.execute("select date from daily_posts where channel = 'CREL' and release = ?", [tag]).fetchone()
        return get_post(db, "CREL", REPO, date.fromisoformat(day), kind=RELEASES, release=tag, team=WORKSPACE)
    finally:
        db.close()


def assert_release_posted_once(slack: FakeSlack, store: Path, tag: str) -> None:
    parents, replies = slack.thread("CREL")
    assert len(parents) == 1, [m["text"][:40] for m in parents]
    assert f"/releases/tag/{tag}|{tag}>*" in parents[0]["text"]
    assert all(reply["thread_ts"] == parents[0]["ts"] for reply in replies)
    post = release_post(store, tag)
    assert post.state == "done" and [m["text"] for m in parents + replies] == [m["text"] for m in post.messages]


def test_two_serve_processes_post_a_new_release_once(release_line):
    github, slack, built, store = release_line
    # Both processes list the releases at once: GitHub answers neither until both asked. Then Slack holds the
    # parent of the one that claimed the thread until the other found the claim.
    listed, parent = threading.Event(), threading.Event()
    github.fail(GitHubFault(200, gate=listed), match="/releases?per_page=100", times=2)
    slack.fail("chat.postMessage", Fault(gate=parent))
    env = release_env(github, RACE_LEASE)
    handled = f"release {built.draft} of {REPO} to CREL: "
    with serve_http(store, slack, **env) as one, serve_http(store, slack, **env) as two:
        wait_until(lambda: github.count("/releases") >= 2, "both processes listing the releases")
        listed.set()
        said: dict[str, list[str]] = {"one": [], "two": []}

        def found(what: str) -> bool:
            for name, bot in (("one", one), ("two", two)):
                said[name] += [line for line in bot.log() if handled in line]
            return any(what in line for lines in said.values() for line in lines)

        wait_until(lambda: found(": being posted "), "the second process finding the claim")
        parent.set()
        wait_until(lambda: found(": posted "), "the first process posting the thread")
    assert sorted(len(lines) for lines in said.values()) == [1, 1], said
    assert_release_posted_once(slack, store, built.draft)
    assert len(slack.thread("CREL")[0]) == 1  # none of the releases published before the channel subscribed


def test_a_serve_killed_mid_thread_is_resumed_by_the_next_without_a_duplicate(release_line):
    github, slack, built, store = release_line
    slack.fail("chat.postMessage", None, Fault(accept=True, hang=True))  # the first reply is taken; no answer comes
    env = release_env(github, KILLED_LEASE)
    with serve_http(store, slack, **env) as first:
        slack.wait_for(lambda s: len(s.delivered("CREL")) == 2)
        first.process.send_signal(signal.SIGKILL)
        first.process.wait(timeout=30)
    claim_ends = release_post(store, built.draft).lease_until
    assert claim_ends is not None
    wait_past(claim_ends, "the end of the killed process's claim")
    with serve_http(store, slack, **env) as second:
        second.log_until(lambda lines: any(f"release {built.draft} of {REPO} to CREL: posted" in line for line in lines),
                         "the thread resumed")
    assert_release_posted_once(slack, store, built.draft)
    assert len(slack.thread("CREL")[1]) >= 2  # the reply taken before the kill, and the rest after it
