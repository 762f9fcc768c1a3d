"""SIGKILL an ingest while it reads release ranges; every release it marked mapped holds exactly its range,
the others nothing, and the run after it maps the rest exactly once."""
from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import release_repo
from conftest import LA
from release_repo import REPO, START, TOKEN
from servers.github_api import FakeGitHub, Fault
from test_ingest_kill import kill_when

pytestmark = pytest.mark.processes

ROOT = Path(__file__).resolve().parents[1]


def mapped(path: Path) -> dict[str, list[int] | None]:
    """tag -> the numbers recorded for it when it is marked mapped, None when it is not; read as another process would."""
    if not path.exists():
        return {}
    with sqlite3.connect(path, timeout=5, isolation_level=None) as conn:
        try:
            conn.execute("begin")  # both reads from one snapshot, whatever the run commits meanwhile
            tags = conn.execute("select tag, mapped_at is not null from releases").fetchall()
            rows = conn.execute("select tag, number from release_prs order by tag, number").fetchall()
            conn.execute("commit")
        except sqlite3.OperationalError:  # the first run has not created the tables yet
            return {}
    numbers: dict[str, list[int]] = {}
    for tag, number in rows:
        numbers.setdefault(tag, []).append(number)
    found = {tag: numbers.get(tag, []) if done else None for tag, done in tags}
    assert set(numbers) <= {tag for tag, done in tags if done}, "numbers of a release not marked mapped"
    return found


def test_sigkill_while_mapping_releases_loses_and_duplicates_nothing(tmp_path):
    jitter = random.Random(20260105)
    db_path = tmp_path / "prdigest.db"
    with FakeGitHub(token=TOKEN) as github:
        built = release_repo.build(github, REPO, START)
        merged = [pull.merged_at.astimezone(LA).date().isoformat() for pull in built.pulls]
        github.delay = 0.03  # a slow GitHub, so that each kill lands inside the mapping
        last = threading.Event()  # clear while a run is watched for its kill: the last page it needs is not answered
        # Mapped newest first, so the first release's history, read last, ends every run.
        github.fail(Fault(200, gate=last), match="/commits?sha=v0.1.0&per_page=100&page=2", times=1_000_000)
        env = {**{k: v for k, v in os.environ.items() if not k.startswith(("PRDIGEST_", "GITHUB_"))},
               "PRDIGEST_DB": str(db_path), "PRDIGEST_GITHUB_API_URL": github.url, "PRDIGEST_REPOS": REPO,
               "GITHUB_TOKEN": TOKEN, "PRDIGEST_TIMEZONE": "America/Los_Angeles"}
        run = [sys.executable, "-m", "bot", "ingest", "--since", min(merged), "--until", max(merged)]

        def start() -> subprocess.Popen:
            return subprocess.Popen(run, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

        def done() -> int:
            return sum(numbers is not None for numbers in mapped(db_path).values())

        listed = github.count("/releases")
        kills = [lambda: github.count("/releases") > listed]  # while listing, before any range is read
        kills += [lambda at_least=at_least: done() >= at_least for at_least in (1, 2, 3, 4)]
        for ready in kills:
            last.clear()
            kill_when(start(), ready, jitter, last)
            now = mapped(db_path)
            # Whatever is marked mapped holds exactly its range; nothing else holds a number.
            assert {tag: numbers for tag, numbers in now.items() if numbers is not None} == {
                tag: built.ranges[tag] for tag, numbers in now.items() if numbers is not None
            }
            assert built.draft not in now

        finished = subprocess.run(run, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert finished.returncode == 0, finished.stderr
        for tag, numbers in built.ranges.items():  # the notes list exactly each range
            drafted = subprocess.run([sys.executable, "-m", "bot", "release-notes", tag, "--format", "json"],
                                     cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
            assert drafted.returncode == 0, drafted.stderr
            found = json.loads(drafted.stdout)
            assert sorted(pr["number"] for pr in found["prs"]) == numbers and found["unknown"] == []
    assert mapped(db_path) == built.ranges
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("pragma integrity_check").fetchone() == ("ok",)
        assert conn.execute("select count(*) from releases").fetchone() == (len(built.ranges),)
        assert conn.execute("select count(*) from prs").fetchone() == (len(built.pulls),)
