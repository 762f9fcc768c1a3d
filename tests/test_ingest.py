"""`prdigest ingest` end to end: the real CLI and httpx against the fake GitHub on 127.0.0.1."""
import os
import pty
import subprocess
import sys
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from conftest import FIXTURES, LA
from servers.github_api import FakeGitHub, FakePull, Fault, day_of_pulls

from store.days import day_bounds, to_utc_text
from store.model import Summary
from store.tables.prs import get_pr, save_pr
from store.understanding.summary import extractive_summary

ROOT = Path(__file__).resolve().parents[1]
REPO = "acme/engine"
DAY = date(2026, 3, 7)


@pytest.fixture
def github(monkeypatch):
    pulls = day_of_pulls(DAY, 12, LA, big={2: 250}, unmerged_every=4)
    pulls += day_of_pulls(DAY - timedelta(days=1), 3, LA, first_number=900)
    pulls += day_of_pulls(DAY + timedelta(days=1), 3, LA, first_number=2000)
    with FakeGitHub({REPO: pulls}, token="good-token") as server:
        monkeypatch.setenv("PRDIGEST_GITHUB_API_URL", server.url)
        monkeypatch.setenv("PRDIGEST_REPOS", REPO)
        yield server


def numbers(db, repo=REPO) -> list[int]:
    return [row[0] for row in db.execute("select number from prs where repo = ? order by merged_at", [repo])]


def cursor(db, repo=REPO) -> str | None:
    row = db.execute("select ingest_cursor from repos where name = ?", [repo]).fetchone()
    return row[0] if row else None


def dump(db) -> list[dict]:
    rows = db.execute("select * from prs order by repo, number").fetchall()
    columns = [c[0] for c in db.execute("select * from prs limit 0").description]
    skip = {"id", "created_at", "updated_at"}
    return [{k: v for k, v in zip(columns, row) if k not in skip} for row in rows] + [
        dict(zip(("name", "cursor"), row)) for row in db.execute("select name, ingest_cursor from repos order by name")
    ]


def test_a_day_is_stored_whole(run_cli, db, github):
    result = run_cli("ingest", "--since", "2026-03-07", "--until", "2026-03-07")
    assert result.code == 0, result.err
    assert result.err == ""  # not a terminal: no progress
    assert result.out.startswith("acme/engine: 12 merged PRs from 2026-03-07 00:00 to 2026-03-08 00:00 PST: 12 new")
    assert numbers(db) == list(range(1000, 1012))  # not the day before or after, never the unmerged
    big = get_pr(db, REPO, 1002)
    assert len(big.files) == 250 and big.changed_files == 250
    assert (big.author, big.merged_by, big.additions, big.deletions) == ("dev-2", "merge-bot", 30, 2)
    first = get_pr(db, REPO, 1000)
    assert first.labels == ["ready"] and "scheduler keeps its token budget" in first.body
    assert first.url == "https://github.example/acme/engine/pull/1000"
    assert first.merged_at == github.repos[REPO][1000].merged_at
    for number in range(1000, 1012):
        pr = get_pr(db, REPO, number)
        assert pr.type in ("substantial", "trivial") and pr.areas
        assert pr.summary.source == "extractive" and pr.summary.what_changed.strip()
    assert cursor(db) == to_utc_text(github.repos[REPO][1011].merged_at)


def test_graphql_mode_stores_the_same(run_cli, db, github, monkeypatch, tmp_path):
    assert run_cli("ingest", "--since", "2026-03-07", "--until", "2026-03-07").code == 0
    rest = dump(db)
    monkeypatch.setenv("GITHUB_TOKEN", "good-token")
    monkeypatch.setenv("PRDIGEST_DB", str(tmp_path / "graphql.db"))
    github.seen.clear()
    result = run_cli("ingest", "--since", "2026-03-07", "--until", "2026-03-07")
    assert result.code == 0, result.err
    from store.db import open_db

    assert dump(open_db(tmp_path / "graphql.db")) == rest
    # Releases come from REST either way (one page here); every PR came from GraphQL.
    assert github.count("/graphql", "MergedPulls") == 1 and github.count("/repos/") == github.count("/releases") == 1
    assert "(3 GitHub requests)" in result.out  # the day, and two more pages of the 250-file PR


def test_continuing_runs_are_cheap_and_catch_new_merges(run_cli, db, github):
    assert run_cli("ingest", "--since", "2026-03-07", "--until", "2026-03-07").code == 0
    github.seen.clear()
    again = run_cli("ingest", "--until", "2026-03-07")
    assert again.code == 0 and "0 new, 0 updated" in again.out
    assert len(github.seen) == 3  # the repository, one search and one page of releases; no PR fetched again
    late = FakePull(1500, "[Bugfix] Merged late in the day", github.repos[REPO][1011].merged_at + timedelta(minutes=5),
                    files=["vllm/v1/engine/core.py"])
    github.add(REPO, late)
    github.seen.clear()
    result = run_cli("ingest", "--until", "2026-03-07")
    assert "1 new, 0 updated" in result.out
    assert github.count("/pulls/") == 2 and github.count("/pulls/1500") == 2
    assert cursor(db) == to_utc_text(late.merged_at)


def test_edited_prs_are_refreshed(run_cli, db, github):
    assert run_cli("ingest", "--since", "2026-03-07", "--until", "2026-03-07").code == 0
    before = get_pr(db, REPO, 1004)
    pull = github.repos[REPO][1004]
    pull.title, pull.labels = "[Doc] Explain the scheduler budget", ["documentation"]
    pull.body = "Documents how the scheduler computes its token budget."
    pull.touch()
    result = run_cli("ingest", "--since", "2026-03-07", "--until", "2026-03-07")
    assert "0 new, 1 updated, 11 unchanged" in result.out
    pr = get_pr(db, REPO, 1004)
    assert pr.title == pull.title and pr.labels == ["documentation"] and "docs" in pr.areas
    # An extractive summary is written again from the new title and description.
    assert pr.summary != before.summary and pr.summary == extractive_summary(replace(pr, summary=None))
    assert numbers(db) == list(range(1000, 1012))


def test_better_summaries_survive_re_ingest(run_cli, db, github):
    assert run_cli("import", str(FIXTURES / "report-2026-03-08.md")).code == 0
    imported = get_pr(db, REPO, 4099)
    day = day_bounds(date(2026, 3, 8), LA)[0]
    github.add(REPO, FakePull(4099, imported.title, imported.merged_at, author=imported.author,
                              body="Corrects the flag name.", labels=["documentation"], files=imported.files),
               FakePull(4200, "[Model] Add a new model", day + timedelta(hours=5), files=["vllm/model.py"]))
    assert run_cli("ingest", "--since", "2026-03-08", "--until", "2026-03-08").code == 0
    modelled = get_pr(db, REPO, 4200)
    modelled.summary = Summary("A model wrote this.", "Impact.", "Risks.", "Insights.", "model:test-model")
    save_pr(db, modelled)
    github.repos[REPO][4099].touch()
    github.repos[REPO][4200].title = "[Model] Add the new model"
    github.repos[REPO][4200].touch()
    assert run_cli("ingest", "--since", "2026-03-08", "--until", "2026-03-08").code == 0
    again = get_pr(db, REPO, 4099)
    assert again.summary == imported.summary and again.type == imported.type
    assert again.labels == ["documentation"] and again.body == "Corrects the flag name."
    model = get_pr(db, REPO, 4200)
    assert model.summary.source == "model:test-model" and model.summary.what_changed == "A model wrote this."
    assert model.title == "[Model] Add the new model"


def test_first_run_starts_at_yesterday(run_cli, db, monkeypatch):
    now = datetime.now(UTC).replace(microsecond=0)
    yesterday = day_bounds(now.astimezone(LA).date() - timedelta(days=1), LA)[0]
    pulls = [
        FakePull(1, "merged just before yesterday", yesterday - timedelta(minutes=1)),
        FakePull(2, "merged at the start of yesterday", yesterday),
        FakePull(3, "merged a minute ago", now - timedelta(minutes=1)),
    ]
    with FakeGitHub({REPO: pulls}) as server:
        monkeypatch.setenv("PRDIGEST_GITHUB_API_URL", server.url)
        result = run_cli("ingest", "--repo", REPO)
    assert result.code == 0, result.err
    assert numbers(db) == [2, 3] and cursor(db) == to_utc_text(pulls[2].merged_at)


def test_every_tracked_repository(run_cli, db, github, monkeypatch):
    github.add("acme/docs", *day_of_pulls(DAY, 2, LA, first_number=70))
    monkeypatch.setenv("PRDIGEST_REPOS", "acme/engine,acme/docs")
    result = run_cli("ingest", "--since", "2026-03-07", "--until", "2026-03-07")
    assert result.code == 0 and result.out.count("\n") == 4  # PRs and releases, per repository
    assert len(numbers(db)) == 12 and numbers(db, "acme/docs") == [70, 71]
    assert cursor(db, "acme/docs") == to_utc_text(github.repos["acme/docs"][71].merged_at)
    github.seen.clear()
    assert run_cli("ingest", "--repo", "acme/docs", "--until", "2026-03-07").code == 0
    assert github.seen and all(
        "acme/docs" in seen.path or "repo:acme/docs " in seen.query.get("q", "") for seen in github.seen
    )


def test_a_window_after_a_gap_does_not_move_the_cursor(run_cli, db, github):
    assert run_cli("ingest", "--since", "2026-03-06", "--until", "2026-03-06").code == 0
    before = cursor(db)
    assert run_cli("ingest", "--since", "2026-03-08", "--until", "2026-03-08").code == 0
    assert cursor(db) == before  # 2026-03-07 is not stored yet
    assert run_cli("ingest", "--until", "2026-03-08").code == 0  # continuing fills the gap
    assert len(numbers(db)) == 18 and cursor(db) == to_utc_text(github.repos[REPO][2002].merged_at)
    assert run_cli("ingest", "--since", "2026-03-06", "--until", "2026-03-06").code == 0
    assert cursor(db) == to_utc_text(github.repos[REPO][2002].merged_at)  # never back


@pytest.mark.parametrize(
    "args, env, needle, code",
    [
        (["--since", "2026-03-08", "--until", "2026-03-07"], {}, "2026-03-08 is after --until 2026-03-07", 2),
        (["--since", "2026-02-30"], {}, "Feb 30 is not a date", 2),
        (["--until", "soonish"], {}, "'soonish' is not a day", 2),
        (["--repo", "acme/missing"], {}, "acme/missing: unknown repository acme/missing", 1),
        (["--repo", "not a repo"], {}, "--repo", 2),
        ([], {"GITHUB_TOKEN": "stolen"}, "GitHub rejected the token (401 Bad credentials): check GITHUB_TOKEN", 1),
        ([], {"GITHUB_TOKEN": "stolen", "PRDIGEST_REPOS": "acme/engine,acme/docs"}, "401", 1),
    ],
    ids=["since-after-until", "bad-date", "words", "unknown-repo", "bad-repo", "bad-token", "bad-token-2-repos"],
)
def test_bad_input_is_one_line_and_leaves_the_store_alone(run_cli, db, github, monkeypatch, args, env, needle, code):
    assert run_cli("ingest", "--since", "2026-03-07", "--until", "2026-03-07").code == 0
    before = dump(db)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = run_cli("ingest", *args)
    assert result.code == code, result
    assert len(result.err.strip().splitlines()) == 1 and needle in result.err, result.err
    assert "Traceback" not in result.err
    assert dump(db) == before


def test_a_failure_midway_keeps_what_was_stored(run_cli, db, github):
    github.fail(Fault(403, message="Resource not accessible by integration"), match="/pulls/1005", times=100)
    result = run_cli("ingest", "--since", "2026-03-07", "--until", "2026-03-07")
    assert result.code == 1
    assert result.err.strip() == (
        "prdigest: error: acme/engine: PR #1005: GET /repos/acme/engine/pulls/1005: "
        "403 Resource not accessible by integration; 5 of 12 PRs stored, run again to continue"
    )
    assert numbers(db) == list(range(1000, 1005))
    assert cursor(db) == to_utc_text(github.repos[REPO][1004].merged_at)
    github.clear_faults()
    assert run_cli("ingest", "--until", "2026-03-07").code == 0
    assert numbers(db) == list(range(1000, 1012))


def test_a_rate_limit_beyond_the_allowed_wait_stops_cleanly(run_cli, db, github, monkeypatch):
    monkeypatch.setenv("PRDIGEST_GITHUB_MAX_WAIT", "5")
    github.exhaust("core", reset_in=3600)
    result = run_cli("ingest", "--since", "2026-03-07", "--until", "2026-03-07")
    assert result.code == 1 and len(result.err.strip().splitlines()) == 1
    assert "rate limit (core) exhausted until" in result.err and "more than the 5s" in result.err
    assert numbers(db) == []


def test_progress_shows_on_a_terminal_only(github, tmp_path):
    env = {**os.environ, "PRDIGEST_DB": str(tmp_path / "p.db"), "PRDIGEST_GITHUB_API_URL": github.url,
           "PRDIGEST_REPOS": REPO}
    args = [sys.executable, "-m", "bot", "ingest", "--since", "2026-03-07", "--until", "2026-03-07"]
    leader, follower = pty.openpty()
    done = subprocess.run(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=follower, timeout=60)
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    assert done.returncode == 0
    assert b"acme/engine: 12/12 PRs, 28 requests" in shown and b"\r" in shown
    env["PRDIGEST_DB"] = str(tmp_path / "q.db")
    quiet = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, timeout=60)
    assert quiet.returncode == 0 and quiet.stderr == b""
    assert quiet.stdout.decode().startswith("acme/engine: 12 merged PRs")
