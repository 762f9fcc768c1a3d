"""One command line: days read as commands read them, exit codes that say what happened, -h everywhere, typos that
find what was meant, and replies that say where the data is when a day is empty."""
from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

import click
import pytest
from conftest import FIXTURES
from freezegun import freeze_time
from pr_factory import REPO
from test_slack_shell import ROOT, fill, prdigest

from bot.cli import cli
from store.sources.sample import SAMPLE_REPO
from store.tables.prs import save_pr

# The fixture reports are of acme/engine, 2026-03-07 (1 PR) and 2026-03-08 (3 PRs), Pacific days.
DATE_OPTIONS = [
    ["report", "--date"], ["summarize", "--date"], ["post-daily", "--channel", "C1", "--dry-run", "--date"],
    ["ingest", "--since"], ["ingest", "--until"], ["feedback", "export", "--since"],
]


@pytest.fixture
def filled(run_cli, monkeypatch):
    monkeypatch.setenv("PRDIGEST_REPOS", REPO)
    fill(run_cli)


@freeze_time("2026-03-09 19:00:00")  # UTC: noon of Mar 9 in Los Angeles
def test_report_dates_read_as_commands_read_them(run_cli, filled):
    for said in ("2026-03-08", "mar 8", "8 March", "yesterday", "sunday"):
        result = run_cli("report", "--date", said, "--format", "json")
        assert result.code == 0, (said, result.err)
        assert json.loads(result.out)["date"] == "2026-03-08", said


@pytest.mark.parametrize("option", DATE_OPTIONS, ids=lambda option: " ".join(option))
def test_every_date_option_names_a_day_that_does_not_exist(run_cli, filled, option):
    result = run_cli(*option, "2026-02-30")
    assert result.code == 2 and result.err.count("\n") == 1 and "Feb 30 is not a date" in result.err
    ranged = run_cli(*option, "feb 9-13")
    assert ranged.code == 2 and "more than one day" in ranged.err


def test_a_pr_not_in_the_store_exits_1(run_cli, filled):
    missing = run_cli("run", "/prdigest pr 99999")
    assert missing.code == 1 and "#99999 is not in the store" in missing.out
    assert run_cli("run", "/prdigest pr 4090").code == 0


def test_every_command_without_its_required_input_exits_2(run_cli, filled):
    for args in (["ask"], ["search"], ["run", " "], ["import"], ["summarize"], ["post-daily"]):
        result = run_cli(*args)
        assert result.code == 2 and not result.out and result.err.count("\n") == 1, (args, result)


def _commands(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name, command in group.commands.items():
        found.append((*path, name))
        if isinstance(command, click.Group):
            found += _commands(command, (*path, name))
    return found


def test_dash_h_works_for_every_command(run_cli):
    commands = _commands(cli)
    assert ("feedback", "export") in commands and ("import",) in commands
    for path in [(), *commands]:
        result = run_cli(*path, "-h")
        assert result.code == 0 and result.out.startswith(f"Usage: prdigest {' '.join(path)}".rstrip()), path


def test_run_prints_terminal_text_on_a_terminal_and_mrkdwn_in_a_pipe(run_cli, filled, isolated_env):
    piped = run_cli("run", "2026-03-08")
    assert piped.out.startswith("*Acme: merged PRs for 2026-03-08 (PST)*")
    text = run_cli("run", "--format", "text", "2026-03-08").out
    assert text.startswith("Acme: merged PRs for 2026-03-08 (PST)\n")
    leader, follower = pty.openpty()
    env = {**os.environ, "PRDIGEST_DB": str(isolated_env), "PRDIGEST_REPOS": REPO, "TERM": "dumb"}
    done = subprocess.run([sys.executable, "-m", "bot", "run", "2026-03-08"], cwd=ROOT, env=env, stdout=follower,
                          stderr=subprocess.PIPE, timeout=60)
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: everything was read
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    assert done.returncode == 0, done.stderr
    assert shown.decode().replace("\r\n", "\n") == text


def test_a_mistyped_area_suggests_the_closest_one(run_cli, filled):
    said = run_cli("run", "area rcom")
    assert said.code == 1 and said.out.startswith("unknown area 'rcom'; did you mean rocm? known areas: rocm, ")
    option = run_cli("report", "--area", "rcom")
    assert option.code == 2 and "did you mean rocm?" in option.err


def test_a_mistyped_command_word_is_answered_as_that_command_and_says_so(run_cli, filled):
    typo = run_cli("run", "are rocm 2026-03-08")
    assert typo.code == 0
    assert typo.out.startswith("_Read `are` as `area`._\n*Acme: merged PRs in rocm for 2026-03-08 (PST)*")
    # The rest of a question is no area's name: it stays a question, over what it asks.
    question = run_cli("run", "are there any rocm fixes on 2026-03-08?").out
    assert "Read `are`" not in question and "#4102" in question


def test_an_empty_day_after_the_store_ends_says_where_its_prs_are(run_cli, filled):
    result = run_cli("report", "--date", "2026-04-02")
    assert result.code == 0 and "**Total Merged PRs:** 0" in result.out
    assert result.err == (f"prdigest: note: nothing merged in {REPO} on 2026-04-02: the store holds its PRs merged"
                          " from 2026-03-07 to 2026-03-08 (America/Los_Angeles days); try --date 2026-03-08\n")
    assert run_cli("report", "--date", "2026-03-07").err == ""


def test_a_question_under_another_zone_that_finds_nothing_says_whose_days_those_are(run_cli, filled, monkeypatch):
    asked = "what merged on 2026-03-06?"
    assert "PRDIGEST_TIMEZONE" not in run_cli("ask", asked).out
    monkeypatch.setenv("PRDIGEST_TIMEZONE", "Asia/Tokyo")
    answer = json.loads(run_cli("ask", "--json", asked).out)["answer"]
    assert answer.startswith("No PR merged on Fri Mar 6. (Days run midnight to midnight Asia/Tokyo time, as"
                             " PRDIGEST_TIMEZONE sets.)")


# ---------------------------------------------------------------- the example reports


def test_import_sample_loads_the_example_reports_and_says_what_to_try(run_cli, db):
    result = run_cli("import", "--sample")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0].startswith(f"Loaded 72 example PRs of {SAMPLE_REPO}, merged 2026-03-16 to 2026-03-19")
    tries = [line.strip() for line in lines[2:-1]]
    assert tries[0] == 'prdigest run "2026-03-17"'
    assert lines[-1].startswith("In `prdigest shell` (or `prdigest serve` without Slack tokens), type them without")
    for line in tries:  # each suggestion answers with PRs
        _, command, text = line.split(" ", 2)
        shown = run_cli(command, text.strip('"')).out
        assert "https://github.com/vllm-project/vllm/pull/" in shown, line
    assert run_cli("import", "--sample").code == 0  # loading it again updates
    assert db.execute("select count(*) from prs").fetchone()[0] == 72
    assert run_cli("import", "--sample", str(FIXTURES / "report-2026-03-07.md")).code == 2


def test_the_sample_is_not_mixed_with_real_prs_of_its_repository(run_cli, db):
    from pr_factory import make_pr

    save_pr(db, make_pr(1, repo=SAMPLE_REPO, url=f"https://github.com/{SAMPLE_REPO}/pull/1"))
    refused = run_cli("import", "--sample")
    assert refused.code == 1 and "holds 1 PR of vllm-project/vllm" in refused.err and "--db" in refused.err
    assert db.execute("select count(*) from prs").fetchone()[0] == 1


def test_an_empty_shell_offers_the_sample_and_answers_from_it(tmp_path):
    store = tmp_path / "new.db"
    result = prdigest("serve", stdin="sample\n2026-03-17\nwhy was the split-K kernel reverted?\n",
                      PRDIGEST_DB=str(store), PRDIGEST_REPOS=SAMPLE_REPO)
    assert result.returncode == 0, result.stderr
    assert "To try prdigest on example reports first, type `sample`." in result.stderr
    loaded, day = result.stdout.split("\n\n")[:2]
    assert loaded.startswith(f"Loaded 72 example PRs of {SAMPLE_REPO}")
    assert day.startswith("vLLM: merged PRs for 2026-03-17 (PST)\n26 merged")
    assert "\n\n#36187 <https://github.com/vllm-project/vllm/pull/36187> reverts #36102" in result.stdout
