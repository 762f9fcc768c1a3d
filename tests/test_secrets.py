"""Configured secrets, whatever their shape, and keys and tokens by their shape: never stored, printed or posted."""
from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

import pytest
from pr_factory import REPO, make_pr
from servers.github_api import FakeGitHub, FakePull, Fault
from servers.openai_api import FakeOpenAI, Recorded, Reply, summary_sections
from servers.slack_api import FakeSlack, mention_event
from servers.slack_api import Fault as SlackFault
from slack_helpers import import_fixtures, serve_http

from bot.terminal.logs import log_to_stderr
from store.tables.prs import save_pr
from store.text.safe import mask_secrets, use_secrets
from store.understanding.summary import extractive_summary

# A local server's key, a classic GitHub token (40 hex digits) and a Slack secret: none has a known key's shape.
LOCAL_KEY = "local-vllm-key-7Q2xZ9wL"
CLASSIC_TOKEN = "3f9a0c1d5e7b2a4c6d8e0f1a2b3c4d5e6f7a8b9c"
SIGNING = "b7c2e9f14d6a8035e1f2a3b4c5d6e7f8"
SLACK_TOKEN = "slack-bot-token-7Kq2Xw9PmV"
# What a model may repeat from what it saw: a key and a Slack token, by their shape.
SHAPED = ("sk-proj-Zk29XcVbN7mQ", "xoxb-2241-99817-Jq8RtY")


@pytest.fixture
def registered():
    yield
    use_secrets(())  # what a test registered is not masked in the next


def test_configured_secrets_are_masked_by_value_whatever_their_shape(registered):
    odd = 'p@ss w/"quote"&more'
    use_secrets([LOCAL_KEY, CLASSIC_TOKEN, odd, "EMPTY", None])
    text = f"key {LOCAL_KEY}, token={CLASSIC_TOKEN}; {json.dumps({'k': odd})} ?q=p%40ss%20w%2F%22quote%22%26more"
    assert mask_secrets(text) == 'key ***, token=***; {"k": "***"} ?q=***'
    # A value too short to be a secret (a local server's placeholder key) would mask common words: it is left.
    assert mask_secrets("EMPTY results") == "EMPTY results"
    use_secrets([])
    assert mask_secrets(LOCAL_KEY) == LOCAL_KEY  # registering replaces what was registered before


def test_prose_is_not_taken_for_a_credential():
    prose = "Adds Bearer token auth to the server. Install with pip install git+ssh://git@github.com/acme/engine."
    assert mask_secrets(prose) == prose


@pytest.fixture
def echoing(monkeypatch):
    """A model that repeats, in every summary and answer, the configured key and keys and tokens by their shape."""
    said = " ".join((LOCAL_KEY, *SHAPED))

    def respond(request: Recorded) -> Reply:
        if "Number: #" not in request.user:  # an answer to a question
            return Reply(f"The scheduler change answers it [#100]; it ran with {said}.")
        sections = {key: f"{text} Seen with {said}." for key, text in summary_sections().items()}
        if request.wants_json:
            return Reply(json.dumps({"type": "substantial", **sections}))
        return Reply("TYPE: substantial\n\n" + "\n\n".join(f"## {key}\n{text}" for key, text in sections.items()))

    with FakeOpenAI(respond) as api, FakeGitHub({REPO: []}) as github:
        for name, value in {"PRDIGEST_REPOS": REPO, "PRDIGEST_MODEL": "m", "OPENAI_BASE_URL": api.base_url,
                            "OPENAI_API_KEY": LOCAL_KEY, "PRDIGEST_GITHUB_API_URL": github.url}.items():
            monkeypatch.setenv(name, value)
        yield api


def leaks(text: str) -> list[str]:
    return [secret for secret in (LOCAL_KEY, *SHAPED) if secret in text]


def test_model_output_is_masked_before_it_is_stored_and_shown(run_cli, db, echoing, registered):
    pr = make_pr(100, "[Core] Batch requests earlier", body="Makes the scheduler batch earlier.")
    pr.summary = extractive_summary(pr)
    save_pr(db, pr)
    assert run_cli("summarize", "--pr", "100").code == 0
    stored = db.execute("select title, what_changed, impact, risks, insights, summary_source from prs").fetchone()
    assert stored[-1] == "model:m" and "Seen with" in stored[1]
    assert leaks(" ".join(stored)) == []
    assert "sk-***" in stored[1] and "xoxb-***" in stored[1]
    shown = [run_cli("report", "--date", "2026-03-07", "--format", fmt).out for fmt in ("markdown", "json", "slack")]
    shown += [run_cli("ask", "what changed in the scheduler on 2026-03-07?").out,
              run_cli("ask", "--json", "what changed in the scheduler on 2026-03-07?").out,
              run_cli("run", "@prdigest what changed in the scheduler on 2026-03-07?").out,
              run_cli("run", "--format", "text", "what changed in the scheduler on 2026-03-07?").out,
              run_cli("run", "/prdigest pr 100").out]
    assert all("scheduler" in out for out in shown)
    assert [leaks(out) for out in shown] == [[]] * len(shown)


def test_a_local_key_echoed_in_a_401_is_neither_stored_nor_shown(run_cli, db, monkeypatch, registered):
    save_pr(db, make_pr(100))
    echo = {"error": {"message": f"Incorrect API key provided: {LOCAL_KEY}.", "type": "invalid_request_error"}}
    with FakeOpenAI(lambda request: Reply(status=401, raw=json.dumps(echo).encode())) as api:
        for name, value in {"PRDIGEST_REPOS": REPO, "PRDIGEST_MODEL": "m", "OPENAI_BASE_URL": api.base_url,
                            "OPENAI_API_KEY": LOCAL_KEY}.items():
            monkeypatch.setenv(name, value)
        summarized = run_cli("summarize", "--pr", "100")
        stats = run_cli("stats", "--days", "366")
    assert summarized.code == 1 and "Incorrect API key provided: ***" in summarized.err
    assert "Incorrect API key provided: ***" in stats.out
    kept = db.execute("select summary_retry from prs").fetchone()[0] + " ".join(
        row[0] for row in db.execute("select error from model_calls"))
    assert "Incorrect API key" in kept
    assert LOCAL_KEY not in summarized.out + summarized.err + stats.out + kept


def test_a_classic_github_token_echoed_by_github_is_not_printed(run_cli, db, monkeypatch, registered):
    pull = FakePull(7, "[Core] A change", merged_at=datetime(2026, 3, 7, 18, tzinfo=UTC))
    with FakeGitHub({REPO: [pull]}) as github:
        github.fail(Fault(403, message=f"token {CLASSIC_TOKEN} may not read acme/engine"), match="/graphql", times=10)
        for name, value in {"PRDIGEST_REPOS": REPO, "GITHUB_TOKEN": CLASSIC_TOKEN,
                            "PRDIGEST_GITHUB_API_URL": github.url}.items():
            monkeypatch.setenv(name, value)
        result = run_cli("ingest", "--since", "2026-03-07", "--until", "2026-03-07")
    assert result.code == 1 and "token *** may not read" in result.err
    assert CLASSIC_TOKEN not in result.out + result.err


@pytest.mark.parametrize("text", ["a." * 200_000, "http://" + "a:" * 100_000, "Bearer a" * 50_000, "x://" * 50_000])
def test_crafted_text_cannot_stall_the_masking(hang_guard, text):
    assert mask_secrets(text)  # every PR body is masked before it is stored


def test_every_librarys_log_records_are_masked(caplog, registered):
    use_secrets([SLACK_TOKEN])
    log_to_stderr()
    libraries = ("slack_bolt.App", "slack_sdk.web.base_client", "waitress.queue", "httpx", "openai._base_client")
    for name in libraries:
        try:
            raise RuntimeError(f"Slack answered {{'ok': False, 'token': '{SLACK_TOKEN}'}}")
        except RuntimeError:
            logging.getLogger(name).exception("%s failed with %s", name, SLACK_TOKEN)
    assert all(f"{name} failed with ***" in caplog.text for name in libraries)
    assert caplog.text.count("'token': '***'") == len(libraries) and SLACK_TOKEN not in caplog.text


@pytest.mark.processes
def test_a_token_echoed_in_slacks_error_replies_is_not_logged_by_serve(db, isolated_env):
    import_fixtures(db)
    echo = SlackFault(status=200, error=f"invalid_auth (token {SLACK_TOKEN} was revoked)")
    with FakeSlack(bot_token=SLACK_TOKEN) as slack, FakeGitHub({REPO: []}) as github:
        with serve_http(isolated_env, slack, SLACK_BOT_TOKEN=SLACK_TOKEN, PRDIGEST_REPOS=REPO,
                        PRDIGEST_GITHUB_API_URL=github.url) as bot:
            slack.fail("chat.update", echo)
            slack.fail("chat.postMessage", None, echo)  # the placeholder goes through; the answer is refused
            bot.send(*mention_event("<@UPRDIGEST> what merged on 2026-03-08?", ts="1730000000.000100"))
            # A traceback's last line is the exception's: slack_sdk quotes Slack's reply there.
            logged = "".join(bot.log_until(lambda lines: any("The server responded with" in line for line in lines),
                                           "the refused answer logged"))
    assert "invalid_auth (token *** was revoked)" in logged and SLACK_TOKEN not in logged
