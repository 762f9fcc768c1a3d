"""`prdigest backup PATH`: a copy of the store as of one moment, taken while a real import process writes to it."""
from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
from contextlib import closing
from datetime import date, datetime, time, timedelta
from pathlib import Path

import pytest
from conftest import LA
from pr_factory import REPO
from slack_helpers import ROOT, make_pr
from waiting import wait_until

from store.report.markdown import render_report

pytestmark = pytest.mark.processes

DAYS = 12
PER_DAY = 60


def write_reports(folder: Path) -> list[Path]:
    """DAYS daily reports of PER_DAY PRs each, one file a day."""
    paths = []
    for offset in range(DAYS):
        day = date(2026, 3, 2) + timedelta(days=offset)
        start = datetime.combine(day, time(6), tzinfo=LA)
        prs = [make_pr(10_000 + offset * PER_DAY + i, start + timedelta(minutes=7 * i), what=f"Change {i} of day {offset}.")
               for i in range(PER_DAY)]
        path = folder / f"report-{day}.md"
        path.write_text(render_report("Engine Merged PR Report", day, "PST", prs[::-1], LA), encoding="utf-8")
        paths.append(path)
    return paths


def counts(path: Path) -> tuple[int, int]:
    """The reports and PRs a copy holds, read without changing it."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as copy:
        return (copy.execute("select count(*) from reports").fetchone()[0],
                copy.execute("select count(*) from prs").fetchone()[0])


def some_stored(store: Path) -> bool:
    """Whether the importing process stored its first report (the store may not even exist yet)."""
    try:
        return counts(store)[0] >= 1
    except sqlite3.Error:
        return False


def test_a_backup_taken_while_an_import_writes_is_whole_checked_and_private(run_cli, tmp_path, isolated_env):
    reports = write_reports(tmp_path)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PRDIGEST_")}, "PRDIGEST_DB": str(isolated_env)}
    # One process a file: every file is its own write transaction, so the backups fall between and during them.
    script = "; ".join(f"{sys.executable} -m bot import --repo {REPO} {path}" for path in reports)
    writer = subprocess.Popen(["sh", "-ec", script], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
    try:
        wait_until(lambda: some_stored(isolated_env), "the first report stored")
        copies = []
        while writer.poll() is None or not copies:
            target = tmp_path / "backups" / f"copy-{len(copies)}.db"
            target.parent.mkdir(exist_ok=True)
            done = run_cli("backup", str(target))
            assert done.code == 0, done.err
            assert done.out.startswith(f"backed up {isolated_env} to {target}: ") and "integrity_check ok" in done.out
            copies.append(target)
    finally:
        writer.wait(timeout=300)
    assert writer.returncode == 0, writer.stderr.read() if writer.stderr else ""
    seen = set()
    for copy in copies:
        stored, prs = counts(copy)
        assert prs == stored * PER_DAY, copy  # each report whole or not at all: one moment of the store
        assert stat.S_IMODE(copy.stat().st_mode) == 0o600
        with closing(sqlite3.connect(f"file:{copy}?mode=ro", uri=True)) as checked:
            assert checked.execute("pragma integrity_check").fetchone()[0] == "ok"
            assert checked.execute("pragma journal_mode").fetchone()[0] == "delete"  # no -wal needed beside it
        seen.add(stored)
    assert any(0 < stored < DAYS for stored in seen), seen  # at least one copy was taken mid-import
    assert not list((tmp_path / "backups").glob(".*"))  # no partial copy left behind

    # Restoring is putting a copy in place of the store: prdigest opens it as it is.
    restored = tmp_path / "restored.db"
    restored.write_bytes(copies[-1].read_bytes())
    assert f"{REPO}: {counts(copies[-1])[1]:,} PRs merged from 2026-03-02" in run_cli("--db", str(restored), "stats").out


def test_a_backup_over_an_old_one_replaces_it_and_bad_targets_are_refused(run_cli, tmp_path, isolated_env):
    write = write_reports(tmp_path)[:2]
    assert run_cli("import", *map(str, write)).code == 0
    target = tmp_path / "latest.db"
    target.write_text("an older backup")
    target.chmod(0o644)
    done = run_cli("backup", str(target))
    assert done.code == 0 and counts(target) == (2, 2 * PER_DAY) and stat.S_IMODE(target.stat().st_mode) == 0o600
    itself = run_cli("backup", str(isolated_env))
    assert itself.code == 1 and "is the store itself" in itself.err
    nowhere = run_cli("backup", str(tmp_path / "missing" / "x.db"))
    assert nowhere.code == 1 and "the folder" in nowhere.err and "does not exist" in nowhere.err
    folder = run_cli("backup", str(tmp_path))
    assert folder.code == 2 and "is a directory" in folder.err
    missing = run_cli("--db", str(tmp_path / "none.db"), "backup", str(tmp_path / "b.db"))
    assert missing.code == 2 and "there is no store at" in missing.err
