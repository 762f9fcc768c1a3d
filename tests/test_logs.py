"""What `serve` logs: human-readable lines by default, or one JSON object a line with each request's fields; secrets
masked either way, bolt's start-up noise gone, and a start that fails says whether Slack was reached."""
from __future__ import annotations

import json
import logging
import os
import subprocess
import sys

from servers.slack_api import BOT_TOKEN, SIGNING_SECRET, TEAM, FakeSlack, mention_event
from slack_helpers import ROOT, import_fixtures, serve_http

from bot.terminal.logs import MASK, JsonLines, RequestLog, answering
from store.db import open_db
from store.text.safe import use_secrets

ANSWERED = "answered"


def _json(lines: list[str]) -> list[dict]:
    return [json.loads(line) for line in lines]


def test_json_lines_carry_each_request_and_mask_its_secrets(tmp_path, slack: FakeSlack):
    db_path = tmp_path / "prdigest.db"
    import_fixtures(open_db(db_path))
    with serve_http(db_path, slack, PRDIGEST_LOG_FORMAT="json", PRDIGEST_REPOS="acme/engine") as bot:
        assert bot.command("2026-03-08", "day").status_code == 200
        assert bot.command(f"area {BOT_TOKEN}", "bad").status_code == 200
        bot.send(*mention_event("<@UPRDIGEST> what merged on 2026-03-08?", "1700000000.000100"))
        lines = bot.started + bot.log_until(lambda got: sum(ANSWERED in line for line in got) >= 3, "three answered")
    records = _json(lines)  # every line is one JSON object, the start-up lines too
    assert all({"time", "level", "logger", "event"} <= set(record) for record in records)
    answered = {record["kind"]: record for record in records if record["event"].startswith(ANSWERED)}
    assert set(answered) == {"when", "area", "question"}
    day = answered["when"]
    assert (day["team"], day["channel"], day["outcome"], day["level"]) == (TEAM, "C0REPORTS", "ok", "info")
    assert isinstance(day["latency_ms"], int) and day["latency_ms"] >= 0 and len(day["request_id"]) == 12
    assert answered["area"]["outcome"] == "refused" and answered["question"]["outcome"] == "ok"
    assert len({record["request_id"] for record in answered.values()}) == 3
    assert BOT_TOKEN not in "\n".join(lines) and SIGNING_SECRET not in "\n".join(lines)


def test_text_lines_stay_human_readable_and_bolt_says_nothing_of_the_token(tmp_path, slack: FakeSlack):
    db_path = tmp_path / "prdigest.db"
    import_fixtures(open_db(db_path))
    with serve_http(db_path, slack, PRDIGEST_REPOS="acme/engine") as bot:
        bot.command("2026-03-08", "day")
        lines = bot.started + bot.log_until(lambda got: any(ANSWERED in line for line in got), "the command answered")
    assert not any(line.lstrip().startswith("{") for line in lines)
    assert any(" INFO bot.terminal.logs: answered when: ok in " in line for line in lines)
    assert not any("will be unused" in line for line in lines)  # bolt's warning about the token beside the client


def test_a_record_made_while_answering_is_masked_in_every_field():
    use_secrets(["a-configured-secret-value"])
    captured: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            captured.append(record)

    keep = Keep()
    keep.addFilter(MASK)
    root = logging.getLogger()
    level = root.level
    root.addHandler(keep)  # where every logger's records arrive, as the stderr handler sits
    root.setLevel(logging.INFO)
    try:
        with answering(RequestLog("area", team="T1", channel="C0a-configured-secret-value")):
            logging.getLogger("prdigest.test").warning("the model said %s", "a-configured-secret-value")
            raise RuntimeError("Bearer sk-proj-abcdefghijklmnopqrstuvwxyz")
    finally:
        root.removeHandler(keep)
        root.setLevel(level)
        use_secrets([])
    lines = [JsonLines().format(record) for record in captured]
    shown = "\n".join(lines)
    assert "a-configured-secret-value" not in shown and "sk-proj-abc" not in shown
    warning, failure, answered = _json(lines)
    assert warning["event"] == "the model said ***" and warning["channel"] == "C0***"
    assert failure["level"] == "error" and failure["error"] == "RuntimeError: Bearer ***"
    assert (answered["kind"], answered["outcome"], answered["team"]) == ("area", "failed", "T1")


def _serve(slack_url: str, token: str = BOT_TOKEN) -> subprocess.CompletedProcess[str]:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("PRDIGEST_", "SLACK_", "OPENAI_", "GITHUB_"))},
           "SLACK_BOT_TOKEN": token, "SLACK_SIGNING_SECRET": SIGNING_SECRET, "PRDIGEST_SLACK_API_URL": slack_url,
           "PRDIGEST_POLL_MINUTES": "0", "PRDIGEST_DB": os.environ["PRDIGEST_DB"]}
    return subprocess.run([sys.executable, "-m", "bot", "serve", "--http", "0", "--host", "127.0.0.1"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)


def test_a_start_that_cannot_reach_slack_says_why_and_a_refused_token_says_so(slack: FakeSlack):
    nowhere = _serve("https://slack.invalid/api/")  # .invalid never resolves
    assert nowhere.returncode == 1
    assert nowhere.stderr.strip().splitlines()[-1] == (
        "prdigest: error: cannot reach Slack at https://slack.invalid/api/: its name does not resolve (DNS): check the"
        " network, or the URL's host name (PRDIGEST_SLACK_API_URL sets where Slack is)")
    refused = _serve(slack.api_url, token="xoxb-not-this-one")
    assert refused.returncode == 1
    last = refused.stderr.strip().splitlines()[-1]
    assert last.startswith(f"prdigest: error: Slack did not accept SLACK_BOT_TOKEN at {slack.api_url}") and "invalid_auth" in last
