"""How long a second poster, a waiting writer and a takeover of a dead poster's claim wait.

    python bench/contention.py [--rounds 5]

Runs real `prdigest post-daily` and `prdigest import` processes on one store,
against the fake Slack of tests/servers, and prints:
- a second poster started while the first sends a 4-message thread at the
  production pace: how long until it leaves ("being posted by another process");
- a writer started while another process holds the store's write lock for H
  seconds: how long until its write is done, and what one locked past the busy
  timeout prints;
- a poster killed after Slack accepted a message: how long until the next run
  resumes the thread (the claim's lease, PRDIGEST_POST_LEASE).
"""
from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from servers.slack_api import BOT_TOKEN, FakeSlack, Fault  # noqa: E402
from slack_helpers import REPO, seed_day  # noqa: E402

from store.db import open_db  # noqa: E402

DAY = date(2026, 3, 4)
REPORT = ROOT / "tests" / "fixtures" / "report-2026-03-07.md"


def prdigest(env: dict[str, str], *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "bot", *args], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def post_daily(env: dict[str, str], channel: str) -> subprocess.Popen:
    return prdigest(env, "post-daily", "--channel", channel, "--date", DAY.isoformat(), "--repo", REPO)


def timed(process: subprocess.Popen, started: float) -> tuple[float, str]:
    out, err = process.communicate(timeout=120)
    return time.perf_counter() - started, (out + err).strip()


def summary(values: list[float]) -> str:
    return f"median {statistics.median(values):.2f} s, max {max(values):.2f} s"


def second_poster(env: dict[str, str], slack: FakeSlack, rounds: int) -> None:
    baseline, second, first = [], [], []
    for n in range(rounds):
        channel = f"CSECOND{n}"
        started = time.perf_counter()
        holder = post_daily(env, channel)
        slack.wait_for(lambda s, channel=channel: s.delivered(channel), timeout=30)  # the first holds the claim and is sending
        begun = time.perf_counter()
        took, line = timed(post_daily(env, channel), begun)
        assert "by another process" in line, line
        second.append(took)
        first.append(timed(holder, started)[0])
        begun = time.perf_counter()
        took, line = timed(post_daily(env, channel), begun)
        assert line.startswith("already posted"), line
        baseline.append(took)
    print(f"first poster, a 4-message thread at one message a second: {summary(first)}")
    print(f"second poster started meanwhile, until it leaves: {summary(second)}")
    print(f"  (a run after the post is done, for comparison: {summary(baseline)})")


def hold_write_lock(path: Path, seconds: float, ready: threading.Event) -> None:
    conn = sqlite3.connect(path)
    conn.execute("BEGIN IMMEDIATE")
    ready.set()
    time.sleep(seconds)
    conn.execute("COMMIT")
    conn.close()


def waiting_writer(env: dict[str, str], path: Path) -> None:
    for hold in (0.5, 2.0, 5.0):
        ready = threading.Event()
        threading.Thread(target=hold_write_lock, args=(path, hold, ready)).start()
        ready.wait()
        took, line = timed(prdigest(env, "import", str(REPORT)), time.perf_counter())
        assert line.startswith("imported"), line
        print(f"import while another process holds the write lock for {hold:.1f} s: done after {took:.2f} s")
    ready = threading.Event()
    threading.Thread(target=hold_write_lock, args=(path, 3.0, ready)).start()
    ready.wait()
    took, line = timed(prdigest({**env, "PRDIGEST_BUSY_TIMEOUT": "1"}, "import", str(REPORT)), time.perf_counter())
    print(f"the same, lock held 3.0 s, PRDIGEST_BUSY_TIMEOUT=1: gave up after {took:.2f} s with\n  {line}")
    time.sleep(2.5)


def takeover(env: dict[str, str], slack: FakeSlack, rounds: int) -> None:
    lease = float(env["PRDIGEST_POST_LEASE"])
    waits = []
    for n in range(rounds):
        channel = f"CDEAD{n}"
        slack.fail("chat.postMessage", Fault(accept=True, hang=True))
        victim = post_daily(env, channel)
        slack.wait_for(lambda s, channel=channel: s.delivered(channel), timeout=30)
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        killed = time.perf_counter()
        while True:  # as cron or serve's scheduler would, only more often
            _, line = timed(post_daily(env, channel), time.perf_counter())
            if line.startswith("posted"):
                break
            time.sleep(0.2)
        waits.append(time.perf_counter() - killed)
        parents, _ = slack.thread(channel)
        assert len(parents) == 1, parents
    print(f"poster killed after Slack accepted its parent, PRDIGEST_POST_LEASE={lease:g}: "
          f"thread resumed {summary(waits)} after the kill")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, FakeSlack() as slack:
        path = Path(folder) / "bench.db"
        db = open_db(path)
        seed_day(db, DAY, 120)  # a parent and three replies
        db.close()
        env = {**{k: v for k, v in os.environ.items() if not k.startswith(("PRDIGEST_", "SLACK_", "OPENAI_", "GITHUB_"))},
               "PRDIGEST_DB": str(path), "SLACK_BOT_TOKEN": BOT_TOKEN, "PRDIGEST_SLACK_API_URL": slack.api_url,
               "PRDIGEST_TIMEZONE": "America/Los_Angeles", "PRDIGEST_POST_LEASE": "5",
               "PRDIGEST_POLL_MINUTES": "0"}  # posts from the store as it is, without ingesting first
        second_poster(env, slack, args.rounds)
        waiting_writer(env, path)
        takeover({**env, "PRDIGEST_POST_PACE": "0"}, slack, args.rounds)


if __name__ == "__main__":
    main()
