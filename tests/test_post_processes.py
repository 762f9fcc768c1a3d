"""`prdigest post-daily` as real processes on one store: racing each other, killed mid-send, resumed."""
import os
import random
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pytest
from servers.slack_api import BOT_TOKEN, FakeSlack, Fault
from slack_helpers import REPO, seed_day
from waiting import wait_past

from store.db import open_db
from store.tables.posts import get_post

pytestmark = pytest.mark.processes

ROOT = Path(__file__).resolve().parents[1]
DAY = date(2026, 3, 4)
# Seconds a claim holds without renewal. Racing posters all live: their claims must never lapse, even when a
# busy machine stalls one of them. A killed poster's claim is waited out: short, but long enough for the next
# process to start and find it still running.
RACE_LEASE = 60
KILLED_LEASE = 6


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
        return [message["text"] for message in get_post(db, channel, REPO, DAY).messages]
    finally:
        db.close()


def lease_until(store: Path, channel: str) -> float:
    """When the claim on the post runs out (unix time), as the store holds it."""
    db = open_db(store)
    try:
        held = get_post(db, channel, REPO, DAY).lease_until
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
        assert get_post(db, channel, REPO, DAY).state == "done"
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
