"""What reaches a terminal or the store: no control characters, no secrets, links cut whole, a private store."""
import json
import stat
from datetime import datetime

import pytest
from conftest import FIXTURES, LA
from servers.openai_api import FakeOpenAI, Reply
from servers.slack_api import BOT_TOKEN
from slack_helpers import REPO, import_fixtures, make_pr

from bot.answers.commands import execute
from bot.answers.mentions import answer
from bot.config import Settings
from bot.messages.mrkdwn import truncate
from bot.runtime import Runtime
from store.db import open_db
from store.sources.importer import web_host
from store.tables.prs import save_pr
from store.tables.teams import NO_TEAM
from store.text.safe import mask_secrets, neutralize, to_json

TRAP = "Fix \x1b]0;owned\x07title \x1b[2Jclear \u202eevil\u202c \x9b31m and \x85done"


def test_neutralize_takes_whole_escape_sequences_and_every_control():
    assert neutralize(TRAP) == "Fix title clear evil 31m and done"
    assert neutralize("a\tb\nc") == "a\tb\nc"


def test_json_escapes_what_json_dumps_leaves_raw():
    text = to_json({"title": TRAP})
    assert json.loads(text) == {"title": TRAP}
    assert not any(char in text for char in "\x1b\x07\x9b\x85\u202e\u202c")


@pytest.mark.parametrize("secret, shown", [
    ("sk-proj-Abc123_def-456", "sk-***"), ("xoxb-1234-5678-abcdef", "xoxb-***"), ("xapp-1-A0-99", "xapp-***"),
    ("ghp_0123456789abcdefghij", "ghp_***"), ("github_pat_11ABC_xyz", "github_pat_***"),
    ("Authorization: Bearer eyJhbGciOi.J9", "Authorization: Bearer ***"),
    ("http://ops:hunter2@10.0.0.5:8000/v1", "http://***@10.0.0.5:8000/v1"),
])
def test_secrets_are_masked_with_their_kind_kept(secret, shown):
    assert mask_secrets(f"server said: {secret}; retry") == f"server said: {shown}; retry"
    assert mask_secrets("ask-me about task-force") == "ask-me about task-force"


def test_a_cut_never_falls_inside_a_link_or_an_entity():
    text = "see <https://github.com/acme/engine/pull/1|#1 a long label> &amp; more"
    for limit in range(1, len(text)):
        cut = truncate(text, limit)
        assert len(cut) <= limit and cut.count("<") == cut.count(">") and "&am…" not in cut
        assert "&a…" not in cut and "&…" not in cut


def test_a_store_prdigest_creates_is_private(tmp_path):
    open_db(tmp_path / "new" / "prdigest.db").close()
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "new" / "prdigest.db").stat().st_mode) == 0o600


@pytest.fixture
def trapped(db):
    import_fixtures(db)
    save_pr(db, make_pr(4300, datetime(2026, 3, 8, 12, 0, tzinfo=LA), title=TRAP, what=f"What: {TRAP}"))


@pytest.mark.parametrize("fmt", ["markdown", "json", "slack"])
def test_every_report_format_is_free_of_controls(trapped, run_cli, monkeypatch, fmt):
    monkeypatch.setenv("PRDIGEST_REPOS", REPO)
    result = run_cli("report", "--date", "2026-03-08", "--format", fmt)
    assert result.code == 0 and "4300" in result.out
    assert not any(char in result.out for char in "\x1b\x07\x9b\x85\u202e\u202c")


def test_a_report_holding_controls_is_refused_naming_the_pr(run_cli, db, tmp_path):
    report = (FIXTURES / "report-2026-03-08.md").read_text()
    title = report.split("\n## 2. [", 1)[1].split("]", 1)[0]
    path = tmp_path / "trap.md"
    path.write_text(report.replace(title, title + "\x1b]0;owned\x07", 1))
    result = run_cli("import", str(path))
    number = report.split("\n## 2. [", 1)[1].split("/pull/", 1)[1].split(")", 1)[0]
    assert result.code == 1 and f"{path}: PR #{number} holds control characters" in result.err
    assert db.execute("select count(*) from prs").fetchone()[0] == 0


def test_a_report_linking_another_host_is_refused(run_cli, db, tmp_path):
    path = tmp_path / "elsewhere.md"
    path.write_text((FIXTURES / "report-2026-03-08.md").read_text().replace("https://github.com/", "https://github.evil.example/"))
    result = run_cli("import", str(path))
    assert result.code == 1 and "links to github.evil.example, not the configured GitHub (github.com)" in result.err
    assert db.execute("select count(*) from prs").fetchone()[0] == 0


def test_a_model_error_echoing_secrets_and_escapes_is_stored_and_printed_clean(trapped, db, run_cli, monkeypatch):
    echo = {"error": {"message": "bad key sk-live-0123456789 for Bearer tok.en \x1b]0;owned\x07 from http://ops:hunter2@10.0.0.5/v1"}}
    with FakeOpenAI() as api:
        api.script(*[Reply(status=400, raw=json.dumps(echo).encode())] * 4)
        base = api.base_url.replace("http://", "http://ops:hunter2@")
        for name, value in {"PRDIGEST_REPOS": REPO, "PRDIGEST_MODEL": "m", "OPENAI_BASE_URL": base,
                            "OPENAI_API_KEY": "sk-live-0123456789"}.items():
            monkeypatch.setenv(name, value)
        asked = run_cli("ask", "what changed for ROCm on 2026-03-08?")
        stats = run_cli("stats", "--days", "366")
        stats_json = run_cli("stats", "--days", "366", "--json")
    errors = [row[0] for row in db.execute("select error from model_calls where error is not null")]
    assert errors
    for printed in (asked.err, stats.out, stats_json.out, *errors):
        assert "sk-live" not in printed and "hunter2" not in printed and "tok.en" not in printed
        assert "\x1b" not in printed and "\x07" not in printed
    assert "warning:" in asked.err and "sk-***" in asked.err


@pytest.mark.parametrize("api, host", [("https://api.github.com", "github.com"), ("https://ghe.corp/api/v3", "ghe.corp"),
                                       ("http://127.0.0.1:8080", "github.com")])
def test_pr_links_must_point_at_the_configured_github(api, host):
    assert web_host(api) == host


CONTROLS = "\x1b\x07\x9b\x85\u202e\u202c"


def test_slack_posts_carry_no_control_characters(trapped, slack, run_cli, monkeypatch):
    for name, value in {"SLACK_BOT_TOKEN": BOT_TOKEN, "PRDIGEST_SLACK_API_URL": slack.api_url,
                        "PRDIGEST_POST_PACE": "0"}.items():
        monkeypatch.setenv(name, value)
    assert run_cli("post-daily", "--channel", "C1", "--date", "2026-03-08", "--repo", REPO).code == 0
    runtime = Runtime(Settings.from_env())
    messages = [*execute(runtime, f"pr {REPO}#4300", NO_TEAM).messages,
                answer(runtime, "what merged on 2026-03-08 in acme/engine?", NO_TEAM)]
    sent = [json.dumps(call.params, ensure_ascii=False) for call in slack.posts()]
    sent += [json.dumps([message.text, message.blocks], ensure_ascii=False) for message in messages]
    assert all("4300" in text and "evil" in text for text in sent[-2:]) and any("evil" in text for text in sent[:-2])
    assert [char for text in sent for char in text if char in CONTROLS] == []


def test_an_imported_file_name_cannot_drive_the_terminal(run_cli, db, tmp_path):
    path = tmp_path / "report\x1b]0;owned\x07\u202e.md"
    path.write_bytes((FIXTURES / "report-2026-03-08.md").read_bytes())
    result = run_cli("import", str(path))
    assert result.code == 0 and "imported 3 PRs" in result.out and "report]0;owned" not in result.out
    assert [char for char in result.out + result.err if char in CONTROLS] == []
