"""Everyday use as a newcomer meets it: the store path, time zones, dates, the shell and the day view (issue 21)."""
import io
import os
import re
import stat
from datetime import date, datetime, time
from pathlib import Path

import pytest
from conftest import FIXTURES, LA
from slack_helpers import REPO, import_fixtures, make_pr
from test_slack_shell import prdigest

from bot.answers.commands import execute
from bot.answers.empty_store import EMPTY_STORE
from bot.runtime import Runtime
from bot.terminal.shell import Conversation, shell
from store.db import open_db
from store.tables.prs import save_prs
from store.tables.teams import NO_TEAM

ROOT = Path(__file__).resolve().parents[1]
NOW = datetime(2026, 3, 8, 15, 30, tzinfo=LA)  # a Sunday
DAY_07, DAY_08 = str(FIXTURES / "report-2026-03-07.md"), str(FIXTURES / "report-2026-03-08.md")


@pytest.fixture
def repo_env(monkeypatch):
    monkeypatch.setenv("PRDIGEST_REPOS", REPO)


@pytest.fixture
def filled(runtime):
    import_fixtures(runtime.db)
    return runtime


def say(rt: Runtime, text: str) -> str:
    return execute(rt, text, NO_TEAM, now=NOW).text


# ---------------------------------------------------------------- 1. a store that is not there


def test_reading_commands_refuse_a_store_that_does_not_exist(run_cli, tmp_path, repo_env):
    typo = tmp_path / "stores" / "prdgest.db"
    for args in (["stats"], ["ask", "what merged?"], ["search", "eagle"], ["run", "today"], ["report", "--date", "2026-03-07"]):
        result = run_cli("--db", str(typo), *args)
        assert result.code == 2 and result.out == "", (args, result)
        assert result.err == f"prdigest: error: there is no store at {typo}: check --db and PRDIGEST_DB, " \
            "or fill one with `prdigest import …` or `prdigest ingest …`\n", args
    assert not typo.parent.exists()  # nothing was made on the way
    assert run_cli("--db", str(typo), "import", DAY_07).code == 0  # a command that fills the store makes it


def test_an_empty_store_gets_the_notice_from_search_too(run_cli, db, repo_env):
    text = run_cli("search", "kernels", "last", "week")
    assert text.code == 0 and text.out.strip() == EMPTY_STORE
    listed = run_cli("search", "kernels", "--json")
    assert listed.out.strip() == "[]" and listed.err.strip() == f"prdigest: note: {EMPTY_STORE}"
    report = run_cli("report", "--date", "2026-03-07")
    assert "**Total Merged PRs:** 0" in report.out and EMPTY_STORE in report.err


# ---------------------------------------------------------------- 2. a store one may only read


@pytest.fixture
def read_only_store(tmp_path):
    folder = tmp_path / "shared"
    folder.mkdir()
    store = folder / "team.db"
    database = open_db(store)
    import_fixtures(database)
    database.close()
    store.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    yield store
    folder.chmod(stat.S_IRWXU)
    store.chmod(stat.S_IRUSR | stat.S_IWUSR)


def test_a_read_only_store_is_read_and_writes_say_why_they_cannot(run_cli, read_only_store, repo_env):
    before = read_only_store.read_bytes()
    report = run_cli("--db", str(read_only_store), "report", "--date", "2026-03-08", "--format", "json")
    assert report.code == 0 and '"number": 4102' in report.out, report.err
    assert "#4090" in run_cli("--db", str(read_only_store), "search", "eagle").out
    assert "#4085" in run_cli("--db", str(read_only_store), "ask", "what merged on mar 7?").out
    refused = f"the store at {read_only_store} is read-only: "
    imported = run_cli("--db", str(read_only_store), "import", DAY_07)
    assert imported.code == 1 and imported.err.startswith(f"prdigest: error: {refused}")
    subscribed = run_cli("--db", str(read_only_store), "run", "--channel", "C7", "subscribe docs")
    assert subscribed.code == 1 and subscribed.out.startswith(refused) and "busy" not in subscribed.out
    assert read_only_store.read_bytes() == before


# ---------------------------------------------------------------- 3. --db on either side of the command


def test_db_goes_after_the_command_too(run_cli, tmp_path, repo_env):
    mine, other = tmp_path / "mine.db", tmp_path / "other.db"
    assert run_cli("import", DAY_08, "--db", str(mine)).code == 0
    after = run_cli("report", "--date", "2026-03-08", "--db", str(mine), "--format", "json")
    assert after.code == 0 and '"number": 4090' in after.out
    last_wins = run_cli("--db", str(other), "search", "eagle", "--db", str(mine))
    assert "#4090" in last_wins.out and not other.exists()
    assert "--db" in run_cli("stats", "--help").out


# ---------------------------------------------------------------- 4. the time zone's name


def test_the_zone_label_follows_prdigest_timezone(run_cli, monkeypatch, tmp_path, repo_env):
    monkeypatch.setenv("PRDIGEST_TIMEZONE", "Europe/Berlin")
    database = open_db(tmp_path / "berlin.db")
    winter, summer = datetime(2026, 1, 20, 11, 0, tzinfo=LA), datetime(2026, 7, 20, 11, 0, tzinfo=LA)
    save_prs(database, [make_pr(71, winter), make_pr(72, summer)])
    database.close()
    store = ["--db", str(tmp_path / "berlin.db")]
    assert "**Report Date:** 2026-01-20 CET\n" in run_cli(*store, "report", "--date", "2026-01-20").out
    assert "**Report Date:** 2026-07-20 CEST\n" in run_cli(*store, "report", "--date", "2026-07-20").out
    assert "for 2026-07-20 (CEST)" in run_cli(*store, "run", "2026-07-20").out


def test_an_imported_label_is_kept_only_where_it_names_the_zone(run_cli, monkeypatch, repo_env):
    assert run_cli("import", DAY_07).code == 0  # says PST, read in Los Angeles
    assert "**Report Date:** 2026-03-07 PST\n" in run_cli("report", "--date", "2026-03-07").out
    monkeypatch.setenv("PRDIGEST_TIMEZONE", "UTC")
    assert "for 2026-03-07 (UTC)" in run_cli("run", "2026-03-07").out  # UTC days are other days than PST ones


# ---------------------------------------------------------------- 5. dates as people type them


def test_commands_read_dates_as_questions_do(filled):
    assert say(filled, "mar 7") == say(filled, "2026-03-07")
    assert "for 2026-03-07 (PST)" in say(filled, "last saturday")
    assert "for 2026-03-06..2026-03-08" in say(filled, "march 6-8")
    assert "merged PRs in docs for 2026-03-01..2026-03-08" in say(filled, "area docs mar 1-8")
    assert "merged PRs by ada-l for 2026-03-08" in say(filled, "author ada-l mar 8")
    assert say(filled, "areas mar 7").startswith("*Areas of acme/engine, 2026-03-07 (PST)")
    leap = execute(filled, "2026-02-29", NO_TEAM, now=NOW)
    assert leap.error and leap.text.startswith("Feb 29 is not a date.\nUsage: `/prdigest [when]`")
    assert "expected YYYY-MM-DD" not in execute(filled, "area docs 2026-04-31", NO_TEAM, now=NOW).text


# ---------------------------------------------------------------- 6, 7. the shell


def _shell(rt: Runtime, *lines: str) -> str:
    out = io.StringIO()
    shell(rt, iter(lines), out, io.StringIO())
    return out.getvalue()


def test_the_shell_reads_a_line_that_is_not_a_command_as_a_question(filled):
    out = _shell(filled, "which PRs fixed typos?", "mar 7")
    assert "is not a command" not in out and "#4099" in out  # the question, answered
    assert "merged PRs for 2026-03-07" in out  # and a command is still a command


def test_the_shell_shows_follow_ups_and_starts_afresh_on_new(filled):
    out = _shell(filled, "what did ada-l merge on mar 8?", "and in the docs?", "new", "and in the docs?")
    first, follow_up, fresh, alone = [part for part in out.split("\n\n") if part.strip()]
    assert "(following: what did ada-l merge on mar 8?)" not in first
    assert follow_up.startswith("(following: what did ada-l merge on mar 8?)\n")
    assert fresh.startswith("(new thread")
    assert "(following" not in alone


# ---------------------------------------------------------------- 8. the day view


def test_top_areas_and_sections_say_what_they_count(runtime):
    noon = datetime.combine(date(2026, 3, 3), time(12), tzinfo=LA)
    save_prs(runtime.db, [
        make_pr(81, noon, "[Kernel] Faster GEMM", areas=["kernels"]),
        make_pr(82, noon, "[ROCm] Tune a kernel", areas=["rocm", "kernels"]),
        make_pr(83, noon, "[ROCm] Another tune", areas=["rocm", "kernels"]),
    ])
    text = say(runtime, "2026-03-03")
    assert "Top areas, by PRs touching each: kernels (3), rocm (2)" in text
    assert "*rocm* (2)" in text and "*kernels* (1 listed here; 3 touch kernels)" in text
    area = say(runtime, "area rocm 2026-03-03")
    assert "Highlights" not in area and area.count("#82 [ROCm] Tune a kernel") == 1


# ---------------------------------------------------------------- 9. text that looks different but is the same


def test_fullwidth_text_reads_as_its_plain_form(filled):
    assert say(filled, "ａｒｅａ ｄｏｃｓ ２０２６-０３-０８") == say(filled, "area docs 2026-03-08")
    reply = Conversation(filled).say("ｗｈｉｃｈ ＰＲｓ ｆｉｘｅｄ ｔｙｐｏｓ？")
    assert "#4099" in reply.text


# ---------------------------------------------------------------- 10. smaller things


def test_import_counts_one_pr_and_says_updated_the_second_time(run_cli, repo_env):
    assert run_cli("import", DAY_07).out == f"imported 1 PR of {REPO} for 2026-03-07 from {DAY_07}\n"
    assert run_cli("import", DAY_07).out == f"updated 1 PR of {REPO} for 2026-03-07 from {DAY_07}\n"


def test_a_search_for_a_person_alone_prints_no_scores(run_cli, repo_env):
    run_cli("import", DAY_07, DAY_08)
    lines = run_cli("search", "by", "grace-h").out.splitlines()
    assert lines and all(line.startswith("#") for line in lines), lines
    ranked = run_cli("search", "eagle").out.splitlines()
    assert re.match(r"\d+\.\d\d  #4090", ranked[0])


def test_serve_says_http_was_ignored_without_tokens(tmp_path):
    result = prdigest("serve", "--http", "0", stdin="quit\n", PRDIGEST_DB=str(tmp_path / "s.db"))
    assert result.returncode == 0
    assert "prdigest: --http 0 was ignored: serving HTTP needs SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET" in result.stderr


def test_the_readme_imports_files_that_exist_or_says_to_bring_your_own():
    readme = (ROOT / "README.md").read_text()
    for line in re.findall(r"^.*prdigest import \S+.*$", readme, re.MULTILINE):
        path = line.split("prdigest import ")[1].split()[0]
        folder = (ROOT / path).parent
        assert folder.is_dir() or "your own" in line, line
    assert os.path.exists(ROOT / "tests" / "fixtures" / "report-2026-03-08.md")
