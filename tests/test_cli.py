import json
import os
import subprocess
import sys
from datetime import UTC
from pathlib import Path

from conftest import FIXTURES

from store.db import open_db

ROOT = Path(__file__).resolve().parents[1]


def test_report_json_shape(run_cli):
    run_cli("import", str(FIXTURES / "report-2026-03-08.md"))
    result = run_cli("report", "--repo", "acme/engine", "--date", "2026-03-08", "--format", "json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["repo"] == "acme/engine" and data["date"] == "2026-03-08"
    assert data["timezone"] == "America/Los_Angeles"
    assert [pr["number"] for pr in data["prs"]] == [4102, 4099, 4090]
    first = data["prs"][0]
    assert first["merged_at"] == "2026-03-08T23:59:59-07:00"
    assert data["prs"][2]["merged_at"] == "2026-03-08T00:00:05-08:00"
    assert set(first) == {"number", "title", "url", "author", "merged_by", "merged_at", "type",
                          "files", "areas", "labels", "summary"}
    assert set(first["summary"]) == {"what_changed", "impact", "risks", "insights"}
    assert "rocm" in first["areas"] and first["type"] == "substantial"


def test_report_area_filter(run_cli):
    run_cli("import", str(FIXTURES / "report-2026-03-08.md"))
    result = run_cli("report", "--repo", "acme/engine", "--date", "2026-03-08", "--area", "AMD", "--format", "json")
    assert [pr["number"] for pr in json.loads(result.out)["prs"]] == [4102]


def test_usage_errors_are_one_line_exit_2(run_cli):
    for args in (
        ["report", "--date", "2026-02-30"],
        ["report", "--date", "yesterday-ish"],
        ["report", "--area", "gardening"],
        ["report", "--format", "pdf"],
        ["report", "--repo", "not a repo"],
        ["frobnicate"],
        ["import"],
    ):
        result = run_cli(*args)
        assert result.code == 2, (args, result)
        assert len(result.err.strip().splitlines()) == 1, (args, result.err)
    assert "rocm" in run_cli("report", "--area", "gardening").err


def test_bad_configuration_is_one_line(run_cli, monkeypatch):
    monkeypatch.setenv("PRDIGEST_TIMEZONE", "Mars/Olympus")
    result = run_cli("report")
    assert result.code == 1 and result.err.strip() == "prdigest: error: PRDIGEST_TIMEZONE: unknown timezone 'Mars/Olympus'"


def test_unusable_store_path_is_one_line(run_cli, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = run_cli("--db", str(blocker / "sub" / "x.db"), "import", str(FIXTURES / "report-2026-03-08.md"))
    assert result.code == 1 and len(result.err.strip().splitlines()) == 1 and "Traceback" not in result.err


def test_console_entry_point_runs_as_a_process(tmp_path):
    open_db(tmp_path / "p.db").close()
    env = {**os.environ, "PRDIGEST_DB": str(tmp_path / "p.db")}
    done = subprocess.run(
        [sys.executable, "-m", "bot", "report", "--repo", "acme/engine", "--date", "2026-03-08", "--format", "markdown"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "**Total Merged PRs:** 0" in done.stdout


def test_report_slack_format_lists_every_pr_escaped(run_cli):
    run_cli("import", str(FIXTURES / "report-2026-03-08.md"))
    result = run_cli("report", "--repo", "acme/engine", "--date", "2026-03-08", "--format", "slack")
    assert result.code == 0, result.err
    assert "<!channel>" not in result.out and "&lt;!channel&gt;" in result.out
    for number in (4102, 4099, 4090):
        assert f"https://github.com/acme/engine/pull/{number}|" in result.out


def test_report_slack_format_is_not_cut_on_a_busy_day(run_cli):
    from conftest import seed_reports

    busiest = max(seed_reports(), key=lambda path: path.stat().st_size)
    run_cli("import", str(busiest))
    day = busiest.stem.removeprefix("report-")
    data = json.loads(run_cli("report", "--date", day, "--format", "json").out)
    shown = run_cli("report", "--date", day, "--format", "slack").out
    assert all(f"/pull/{pr['number']}|" in shown for pr in data["prs"])


def test_search_and_slack_reports_print_no_terminal_control_codes(run_cli, db, monkeypatch):
    from datetime import datetime

    from pr_factory import REPO, make_pr

    from store.tables.prs import save_pr

    monkeypatch.setenv("PRDIGEST_REPOS", REPO)
    save_pr(db, make_pr(901, "[Core] Clear\x1b[2J the \x9bscreen\x07", merged_at=datetime(2026, 3, 7, 18, tzinfo=UTC)))
    for args in (("search", "clear"), ("report", "--date", "2026-03-07", "--format", "slack")):
        result = run_cli(*args)
        assert result.code == 0, result.err
        assert "Clear" in result.out and not any(c in result.out for c in "\x1b\x9b\x07")
