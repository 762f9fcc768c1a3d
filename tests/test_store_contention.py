"""Writers in several processes on one store wait for each other instead of failing."""
import os
import sqlite3
import subprocess
import sys
import threading
from datetime import date, datetime, time, timedelta
from pathlib import Path

import pytest
from conftest import LA
from slack_helpers import REPO, seed_day

from store.db import StoreBusy, open_db, write_transaction
from store.report.day import load_report, report_markdown
from store.subscription.cadence import DAILY, Cadence
from store.subscription.filter import EVERYTHING
from store.tables.subscriptions import subscribe
from store.tables.teams import NO_TEAM

pytestmark = pytest.mark.processes

ROOT = Path(__file__).resolve().parents[1]
FIRST = date(2026, 3, 2)
DAYS = 6


@pytest.fixture
def reports(tmp_path) -> list[Path]:
    """Six daily reports of 40 PRs each, rendered from a scratch store."""
    scratch = open_db(tmp_path / "scratch.db")
    paths = []
    for n in range(DAYS):
        day = FIRST + timedelta(days=n)
        seed_day(scratch, day, 40, start=1000 + 100 * n)
        path = tmp_path / f"report-{day.isoformat()}.md"
        path.write_text(report_markdown(load_report(scratch, REPO, day, LA)), encoding="utf-8")
        paths.append(path)
    scratch.close()
    return paths


def dump(path: Path) -> dict[str, list]:
    """The store's content, without row ids and the times of writing."""
    db = open_db(path)
    try:
        tables = {
            "prs": "select * from prs order by repo, number",
            "reports": "select repo, date, tz_label, source from reports order by repo, date",
            "repos": "select name, report_title from repos order by name",
            "relations": "select * from pr_relations order by repo, source, target",
            "fts": "select prs.number, prs_fts.title from prs_fts join prs on prs.id = prs_fts.rowid order by number",
        }
        rows = {name: [tuple(row) for row in db.execute(sql)] for name, sql in tables.items()}
        columns = [c[0] for c in db.execute("select * from prs limit 0").description]
        keep = [i for i, c in enumerate(columns) if c not in ("id", "created_at", "updated_at")]
        rows["prs"] = [tuple(row[i] for i in keep) for row in rows["prs"]]
        return rows
    finally:
        db.close()


def test_eight_concurrent_imports_all_succeed_and_equal_one_sequential_import(tmp_path, reports):
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PRDIGEST_")}, "PRDIGEST_TIMEZONE": LA.key}
    shared = tmp_path / "shared.db"  # new: the processes also race to create and migrate it
    # Each writer waits for the others' transactions. On a busy machine eight of them in a row can take longer
    # than the 10 s default, which is not what this test is about: waiting, not failing, is.
    patient = {**env, "PRDIGEST_DB": str(shared), "PRDIGEST_BUSY_TIMEOUT": "120"}
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "bot", "import", *[str(p) for p in (reports[n % DAYS:] + reports[:n % DAYS])[:4]]],
            cwd=ROOT, env=patient, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for n in range(8)
    ]
    results = []
    for process in processes:
        _, err = process.communicate(timeout=300)
        results.append((process.returncode, err))
    assert results == [(0, "")] * 8

    alone = tmp_path / "alone.db"
    done = subprocess.run([sys.executable, "-m", "bot", "import", *map(str, reports)], cwd=ROOT,
                          env={**env, "PRDIGEST_DB": str(alone)}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert dump(shared) == dump(alone)
    assert len(dump(alone)["prs"]) == 40 * DAYS


def test_a_writer_waits_for_another_process_then_writes(tmp_path, db):
    holder = sqlite3.connect(tmp_path / "prdigest.db")
    holder.execute("BEGIN IMMEDIATE")  # another process's long write
    waiter = open_db(tmp_path / "prdigest.db", busy_timeout=30)
    asked = threading.Event()  # the waiter has begun its write: it is now waiting for the holder's lock
    waiter.conn.set_trace_callback(lambda sql: sql.upper().startswith("BEGIN") and asked.set())
    done = threading.Event()
    now = datetime(2026, 3, 8, 12, tzinfo=LA)
    thread = threading.Thread(target=lambda: (subscribe(waiter, NO_TEAM, "C1", REPO, EVERYTHING, Cadence(DAILY, time(9)), None, now), done.set()))
    thread.start()
    assert asked.wait(30), "the waiter never began its write"
    assert not done.wait(0.5)  # waiting, not failed
    holder.execute("COMMIT")
    thread.join(30)
    assert done.is_set()


def test_a_writer_locked_past_the_busy_timeout_gets_one_line(tmp_path, db, run_cli, monkeypatch):
    holder = sqlite3.connect(tmp_path / "prdigest.db")
    holder.execute("BEGIN IMMEDIATE")
    try:
        waiter = open_db(tmp_path / "prdigest.db", busy_timeout=0.2)
        with pytest.raises(StoreBusy) as refused, write_transaction(waiter):
            pass
        assert str(refused.value) == (
            "the store is busy: another process held its write lock for over 0.2s "
            "(PRDIGEST_BUSY_TIMEOUT sets how long to wait); try again"
        )
        monkeypatch.setenv("PRDIGEST_BUSY_TIMEOUT", "0.2")
        result = run_cli("import", str(ROOT / "tests" / "fixtures" / "report-2026-03-07.md"))
        assert result.code == 1 and result.err.count("\n") == 1
        assert result.err.startswith("prdigest: error: the store is busy: another process held its write lock for over 0.2s")
    finally:
        holder.rollback()
