"""The proof that no configured secret is kept or shown: every service echoes every secret, and each is looked for in
the store, its WAL, every log line, every command's output and every call Slack received."""
import os
import subprocess
import sys
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pytest
from conftest import LA
from servers.github_api import FakeGitHub, day_of_pulls
from servers.github_api import Fault as GitHubFault
from servers.openai_api import FakeOpenAI, Recorded, Reply, rotating_responder, summary_sections
from servers.slack_api import FakeSlack, Fault, mention_event
from slack_helpers import REPO, serve_http

pytestmark = pytest.mark.processes

ROOT = Path(__file__).resolve().parents[1]
DAY = date(2026, 3, 7)
CHANNEL = "C0SECRETS"
# Each secret in a shape no pattern knows: only masking by value can find them.
SECRETS = {
    "OPENAI_API_KEY": "oai-e2e-key-Kd93Lm2PqZ",
    "GITHUB_TOKEN": "9c1e7a3b5d2f4068ab1c3e5d7f9a0b2c4d6e8f01",
    "SLACK_BOT_TOKEN": "slack-e2e-bot-Vn47Rt2Lq8",
    "SLACK_APP_TOKEN": "slack-e2e-app-Hj62Wc9Xz1",
    "SLACK_SIGNING_SECRET": "sign-e2e-5Tg8Yb3Nm6Kp",
    "SLACK_CLIENT_SECRET": "client-e2e-2Qw7Er4Ty9",
}
ECHO = "echoing " + " ".join(SECRETS.values())


_SUMMARIES = rotating_responder(lambda number: {key: f"{text} ({ECHO})" for key, text in summary_sections(number).items()})


def echoing_model(request: Recorded) -> Reply:
    """Summaries and answers that repeat every secret, as a model may repeat what it saw."""
    if "Number: #" in request.user:
        return _SUMMARIES(request)
    return Reply(f"The scheduler budget was tightened [#1000]; {ECHO}.")


@dataclass
class Seen:
    """Everything that left the processes: their output and logs, what Slack received, the store's files."""

    texts: list[str]
    files: list[bytes]

    def leaks(self) -> dict[str, list[str]]:
        found = {}
        for name, value in SECRETS.items():
            where = [text[:200] for text in self.texts if value in text]
            where += [f"a file of {len(data)} bytes" for data in self.files if value.encode() in data]
            if where:
                found[name] = where
        return found


def test_no_configured_secret_is_stored_logged_posted_or_printed(tmp_path):
    store = tmp_path / "prdigest.db"
    seen = Seen([], [])
    with FakeGitHub({REPO: day_of_pulls(DAY, 3, LA)}, token=SECRETS["GITHUB_TOKEN"]) as github, \
            FakeOpenAI(echoing_model) as model, FakeSlack(bot_token=SECRETS["SLACK_BOT_TOKEN"]) as slack:
        env = {**{k: v for k, v in os.environ.items() if not k.startswith(("PRDIGEST_", "SLACK_", "OPENAI_", "GITHUB_"))},
               **SECRETS, "PRDIGEST_DB": str(store), "PRDIGEST_REPOS": REPO, "PRDIGEST_GITHUB_API_URL": github.url,
               "PRDIGEST_MODEL": "echo-model", "OPENAI_BASE_URL": model.base_url,
               "PRDIGEST_SLACK_API_URL": slack.api_url, "PRDIGEST_POST_PACE": "0"}

        def run(*args: str) -> subprocess.CompletedProcess[str]:
            done = subprocess.run([sys.executable, "-m", "bot", *args], cwd=ROOT, env=env, capture_output=True,
                                  text=True, timeout=300)
            seen.texts.extend([done.stdout, done.stderr])
            return done

        day = ("--since", DAY.isoformat(), "--until", DAY.isoformat())
        github.fail(GitHubFault(422, message=f"Validation failed, {ECHO}"))  # GitHub, in an error body
        assert "Validation failed, echoing ***" in run("ingest", *day).stderr
        assert run("ingest", *day).returncode == 0  # and the model, in its summaries
        model.script(Reply(status=401, raw=f'{{"error": {{"message": "Incorrect API key: {ECHO}"}}}}'.encode()))
        assert "Incorrect API key: echoing ***" in run("summarize", "--pr", "1000", "--force").stderr  # in a 401
        again = run("summarize", "--pr", "1000", "--force")
        assert again.returncode == 0, again.stderr
        for args in [("report", "--date", DAY.isoformat()), ("report", "--date", DAY.isoformat(), "--format", "json"),
                     ("ask", f"what changed in the scheduler on {DAY}?"), ("run", f"@prdigest what merged on {DAY}?"),
                     ("run", "/prdigest pr 1000"), ("stats", "--days", "366"), ("search", "scheduler budget")]:
            assert run(*args).returncode == 0, args
        slack.fail("chat.postMessage", Fault(status=200, error=f"invalid_auth, {ECHO}"))  # Slack, in an error reply
        assert "invalid_auth, echoing ***" in run("post-daily", "--channel", CHANNEL, "--date", DAY.isoformat()).stderr
        assert run("post-daily", "--channel", CHANNEL, "--date", DAY.isoformat()).returncode == 0

        serving = {name: env[name] for name in (*SECRETS, "PRDIGEST_REPOS", "PRDIGEST_GITHUB_API_URL", "PRDIGEST_MODEL",
                                                "OPENAI_BASE_URL", "PRDIGEST_POST_PACE")}
        with serve_http(store, slack, **serving) as bot:
            slack.fail("chat.update", Fault(status=200, error=f"cant_update_message, {ECHO}"))
            slack.fail("chat.delete", Fault(status=200, error=f"message_not_found, {ECHO}"))
            question = mention_event(f"<@UPRDIGEST> what merged on {DAY}?", ts="1773000000.000100", channel=CHANNEL)
            assert bot.send(*question, secret=SECRETS["SLACK_SIGNING_SECRET"]).status_code == 200
            seen.texts += bot.log_until(lambda lines: any("could not delete the placeholder" in line for line in lines),
                                        "the mention answered and its placeholder left")
            seen.files += [path.read_bytes() for path in (store, Path(f"{store}-wal")) if path.exists()]
            seen.texts += bot.log()
    answers = [call for call in slack.delivered(CHANNEL) if call.params.get("thread_ts") == "1773000000.000100"]
    assert "tightened" in str(answers[-1].params) and "echoing ***" in str(answers[-1].params)
    seen.texts += [str(call.params) for call in slack.calls]
    seen.files += [path.read_bytes() for path in (store, Path(f"{store}-wal")) if path.exists()]
    assert b"echoing ***" in seen.files[-1]  # the summaries and the errors were kept, masked
    assert seen.leaks() == {}
