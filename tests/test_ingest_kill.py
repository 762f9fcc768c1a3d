"""SIGKILL an ingest process at several moments of one window; the runs after it complete the window exactly."""
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import date, timedelta
from pathlib import Path

import pytest
from conftest import LA
from servers.github_api import FakeGitHub, Fault, day_of_pulls

from store.days import to_utc_text

pytestmark = pytest.mark.processes

ROOT = Path(__file__).resolve().parents[1]
REPO = "acme/engine"
DAY = date(2026, 3, 7)


def stored(path: Path) -> list[tuple[int, int, str]]:
    """(number, files stored, merged_at) of every PR, read as another process would."""
    if not path.exists():
        return []
    with sqlite3.connect(path, timeout=5) as conn:
        try:
            return conn.execute(
                "select number, json_array_length(files), merged_at from prs order by merged_at, number"
            ).fetchall()
        except sqlite3.OperationalError:  # the first run has not created the tables yet
            return []


def cursor(path: Path) -> str | None:
    with sqlite3.connect(path, timeout=5) as conn:
        row = conn.execute("select ingest_cursor from repos where name = ?", [REPO]).fetchone()
    return row[0] if row else None


def kill_when(process: subprocess.Popen, ready, jitter: random.Random, last: threading.Event) -> None:
    """SIGKILL `process` once `ready()`. Meanwhile GitHub holds its answers about the window's last PR
    (`last` is clear), so however slowly this loop runs on a busy machine the run cannot finish first."""
    try:
        deadline = time.monotonic() + 60
        while not ready():
            assert process.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "the run made no progress"
            time.sleep(0.005)
        time.sleep(jitter.uniform(0, 0.04))  # land anywhere: in a request, between PRs, inside a transaction
        process.send_signal(signal.SIGKILL)
        assert process.wait(timeout=30) == -signal.SIGKILL
    finally:
        last.set()


def test_sigkill_loses_nothing_and_duplicates_nothing(tmp_path):
    jitter = random.Random(20260307)
    pulls = day_of_pulls(DAY, 40, LA, big={7: 230, 23: 120}, unmerged_every=6)
    for pull in pulls:  # opened in an order unlike the merge order, as search would list them
        pull.created_at -= timedelta(hours=jitter.uniform(0, 400))
    merged = sorted((p for p in pulls if p.merged_at), key=lambda p: (p.merged_at, p.number))
    expected = [(p.number, len(p.files), to_utc_text(p.merged_at)) for p in merged]
    db_path = tmp_path / "prdigest.db"
    with FakeGitHub({REPO: pulls}) as github:
        github.delay = 0.03  # a slow GitHub, so that each kill lands inside the window
        last = threading.Event()  # clear while a run is watched for its kill: its last PR is not answered yet
        github.fail(Fault(200, gate=last), match=f"/pulls/{merged[-1].number}", times=1_000_000)
        env = {**os.environ, "PRDIGEST_DB": str(db_path), "PRDIGEST_GITHUB_API_URL": github.url,
               "PRDIGEST_REPOS": REPO, "PRDIGEST_TIMEZONE": "America/Los_Angeles"}
        env.pop("GITHUB_TOKEN", None)
        first = [sys.executable, "-m", "bot", "ingest", "--since", "2026-03-07", "--until", "2026-03-07"]
        then = [sys.executable, "-m", "bot", "ingest", "--until", "2026-03-07"]

        def start(args):
            return subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

        # Killed while listing, before anything is stored.
        kill_when(start(first), lambda: github.count("/search/issues") > 0, jitter, last)
        assert stored(db_path) == []

        runs = [first] + [then] * 3
        for args, at_least in zip(runs, (3, 11, 19, 27)):
            last.clear()
            kill_when(start(args), lambda at_least=at_least: len(stored(db_path)) >= at_least, jitter, last)
            now = stored(db_path)
            # Whatever was stored is a whole prefix of the window, each PR complete, once.
            assert now == expected[: len(now)] and len(now) >= at_least
            assert cursor(db_path) == now[-1][2]

        finished = subprocess.run(then, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert finished.returncode == 0, finished.stderr
    assert stored(db_path) == expected
    assert cursor(db_path) == expected[-1][2]
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("pragma integrity_check").fetchone() == ("ok",)
        assert conn.execute("select count(*), count(distinct number) from prs").fetchone() == (40, 40)
        assert conn.execute("select count(*) from prs where summary_source is null or what_changed = ''").fetchone() == (0,)
    # Each PR was fetched once, plus at most one again per kill: the one being fetched when it landed.
    fetches = [github.count(f"/pulls/{p.number}") - github.count(f"/pulls/{p.number}/files") for p in merged]
    assert min(fetches) >= 1 and sum(fetches) <= len(merged) + 5
