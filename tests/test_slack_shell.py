"""`prdigest run`, `prdigest shell`, and `prdigest serve` for a newcomer without Slack tokens."""
import os
import subprocess
import sys
from pathlib import Path

from conftest import FIXTURES
from servers.slack_api import BOT_TOKEN, FakeSlack
from slack_helpers import LOUD_TITLE, REPO

from bot.answers.empty_store import EMPTY_STORE

ROOT = Path(__file__).resolve().parents[1]


def prdigest(*args: str, stdin: str = "", **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_", "GITHUB_"))}
    return subprocess.run([sys.executable, "-m", "bot", *args], cwd=ROOT, input=stdin, capture_output=True,
                          text=True, timeout=60, env={**clean, "PRDIGEST_REPOS": REPO, **env})


def fill(run_cli) -> None:
    assert run_cli("import", str(FIXTURES / "report-2026-03-07.md"), str(FIXTURES / "report-2026-03-08.md")).code == 0


def test_run_prints_the_exact_slack_message(run_cli, monkeypatch):
    monkeypatch.setenv("PRDIGEST_REPOS", REPO)
    fill(run_cli)
    result = run_cli("run", "/prdigest 2026-03-08")
    assert result.code == 0 and result.err == ""
    lines = result.out.splitlines()
    assert lines[0] == "*Acme: merged PRs for 2026-03-08 (PST)*"
    assert "&lt;!channel&gt;" in result.out and LOUD_TITLE not in result.out
    assert "\u2022 <https://github.com/acme/engine/pull/4090|#4090 [Spec Decode] Add EAGLE drafter metrics>" in result.out
    assert run_cli("run", "2026-03-08").out == result.out  # the /prdigest prefix is optional

    asked = run_cli("run", "@prdigest what merged on 2026-03-07?")
    assert asked.code == 0 and "<https://github.com/acme/engine/pull/4085|#4085>" in asked.out

    bad = run_cli("run", "/prdigest area gardening")
    assert bad.code == 1 and bad.out.startswith("unknown area 'gardening'") and "Usage:" in bad.out


def test_run_subscribe_needs_a_channel(run_cli, monkeypatch, db):
    monkeypatch.setenv("PRDIGEST_REPOS", REPO)
    assert "belong to a Slack channel" in run_cli("run", "/prdigest subscribe").out
    done = run_cli("run", "--channel", "C42", "/prdigest subscribe rocm")
    assert done.code == 0 and "This channel now gets the daily report of acme/engine (`rocm`)" in done.out
    assert "C42: the daily report" in run_cli("run", "subscriptions").out


def test_shell_answers_until_quit_and_survives_bad_lines(run_cli, monkeypatch, isolated_env):
    monkeypatch.setenv("PRDIGEST_REPOS", REPO)
    fill(run_cli)
    lines = ["help", "frobnicate", "2026-02-30", "", "@prdigest what merged on 2026-03-07?", "@prdigest and on ROCm?",
             "/prdigest area rocm 2026-03-08", "quit", "today"]
    result = prdigest("shell", stdin="\n".join(lines) + "\n", PRDIGEST_DB=str(isolated_env))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "• `area NAME [when]`" in out  # as typed in the shell
    assert "is not a command" not in out and "Feb 30 is not a date" in out  # a word that is no command is a question
    assert "#4085" in out
    assert "No PR merged on Sat Mar 7 in rocm" in out  # the follow-up kept the day of the first question
    assert "merged PRs in rocm for 2026-03-08" in out
    assert "as of" not in out  # `today` came after quit
    assert "Traceback" not in result.stderr and EMPTY_STORE not in result.stderr


def test_serve_without_tokens_is_the_shell_on_the_local_store(tmp_path):
    store = tmp_path / "new.db"
    result = prdigest("serve", stdin="today\nhelp\n", PRDIGEST_DB=str(store))
    assert result.returncode == 0
    assert "no Slack tokens (SLACK_BOT_TOKEN, SLACK_APP_TOKEN) are set, so this is the local shell" in result.stderr
    assert f"prdigest shell on {store}" in result.stderr and EMPTY_STORE in result.stderr
    today, help_ = result.stdout.split("\n\n", 1)
    assert today == EMPTY_STORE and "Nothing merged" not in result.stdout
    assert "• `search TEXT`" in help_ and "/prdigest" not in help_  # as typed in the shell, which keeps working


def test_serve_with_incomplete_or_bad_tokens_says_what_is_missing(tmp_path):
    db = str(tmp_path / "p.db")
    socket_mode = prdigest("serve", PRDIGEST_DB=db, SLACK_BOT_TOKEN=BOT_TOKEN)
    assert socket_mode.returncode == 1
    assert socket_mode.stderr.strip().startswith("prdigest: error: Socket Mode needs SLACK_APP_TOKEN")
    http = prdigest("serve", "--http", "0", PRDIGEST_DB=db, SLACK_BOT_TOKEN=BOT_TOKEN)
    assert http.returncode == 1 and http.stderr.strip() == "prdigest: error: --http needs SLACK_SIGNING_SECRET (Basic Information > App Credentials)"
    no_bot = prdigest("serve", PRDIGEST_DB=db, SLACK_APP_TOKEN="xapp-1")
    assert no_bot.returncode == 1 and "SLACK_BOT_TOKEN is not set" in no_bot.stderr
    with FakeSlack() as slack:
        refused = prdigest("serve", "--http", "0", PRDIGEST_DB=db, SLACK_BOT_TOKEN="xoxb-revoked",
                           SLACK_SIGNING_SECRET="s", PRDIGEST_SLACK_API_URL=slack.api_url)
    assert refused.returncode == 1 and "Slack did not accept SLACK_BOT_TOKEN" in refused.stderr
    assert "invalid_auth" in refused.stderr and "Traceback" not in refused.stderr


def test_serve_takes_one_way_to_reach_workspaces(tmp_path):
    db = str(tmp_path / "p.db")
    both = prdigest("serve", PRDIGEST_DB=db, SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_APP_TOKEN="xapp-1", SLACK_CLIENT_ID="1.2",
                    SLACK_CLIENT_SECRET="secret-of-the-app")
    assert both.returncode == 1 and both.stderr.strip() == (
        "prdigest: error: SLACK_BOT_TOKEN and SLACK_CLIENT_ID are both set: unset SLACK_CLIENT_ID to serve the token's one "
        "workspace, or SLACK_BOT_TOKEN to let workspaces install the app")
    half = prdigest("serve", PRDIGEST_DB=db, SLACK_APP_TOKEN="xapp-1", SLACK_CLIENT_ID="1.2")
    assert half.returncode == 1 and "or set SLACK_CLIENT_ID and SLACK_CLIENT_SECRET" in half.stderr
    installable = prdigest("serve", "--http", "0", PRDIGEST_DB=db, SLACK_CLIENT_ID="1.2", SLACK_CLIENT_SECRET="secret-of-the-app")
    assert installable.returncode == 1 and "--http needs SLACK_SIGNING_SECRET" in installable.stderr


def test_manifest_declares_what_the_app_listens_to():
    manifest = (ROOT / "manifest.yml").read_text()
    for needed in ("command: /prdigest", "usage_hint:", "- app_mention", "- app_home_opened", "home_tab_enabled: true",
                   "interactivity:\n    is_enabled: true", "socket_mode_enabled: true", "- app_mentions:read",
                   "- chat:write ", "- commands", "- im:write ", "- im:history ", "messages_tab_enabled: true"):
        assert needed in manifest, needed
