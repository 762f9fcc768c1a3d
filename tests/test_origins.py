"""A token never leaves for another origin: GitHub's, the model's and Slack's clients, each against two loopback
servers on two ports, the first linking or redirecting to the second, which records what it received."""
from __future__ import annotations

from datetime import UTC, datetime

import pytest
from servers.github_api import FakeGitHub, FakePull, Fault
from servers.openai_api import FakeOpenAI, Reply
from servers.slack_api import BOT_TOKEN, FakeSlack
from servers.slack_api import Fault as SlackFault
from slack_sdk.errors import SlackApiError

from bot.config import Settings
from bot.model.client import LLM, LLMError
from bot.slack.app import slack_client
from store.sources.github import GitHubClient, UnusableAnswer
from store.sources.ingest import Window, ingest_repo
from store.tables.prs import get_pr
from store.text.origins import elsewhere, origin

REPO = "acme/engine"
TOKEN = "ghp_" + "t" * 36
MERGED = datetime(2026, 3, 7, 18, tzinfo=UTC)


@pytest.fixture
def github():
    pulls = [FakePull(7, "[Core] One", MERGED, files=["a.py"]), FakePull(8, "[Core] Two", MERGED.replace(hour=19),
                                                                      files=["b.py"])]
    with FakeGitHub({REPO: pulls}, token=TOKEN) as server:
        yield server


@pytest.fixture
def other():
    """The origin nothing should reach: the same API on another port."""
    with FakeGitHub({REPO: [FakePull(7, "[Core] One", MERGED, files=["elsewhere.py"])]}) as server:
        yield server


def client(server: FakeGitHub, token: str | None = TOKEN) -> GitHubClient:
    return GitHubClient(server.url, token, graphql=False, max_wait=1, timeout=5)


def test_origins_name_scheme_host_and_port():
    assert origin("https://api.github.com/repos/x") == "https://api.github.com:443"
    assert origin("HTTPS://API.github.com:443") == "https://api.github.com:443"
    assert origin("http://[::1]:8080/v1") == "http://[::1]:8080"
    assert elsewhere("http://127.0.0.1:80/x", "http://127.0.0.1/api") is None
    assert elsewhere("https://127.0.0.1/x", "http://127.0.0.1/api") == "https://127.0.0.1:443"
    assert elsewhere("http://127.0.0.1:99999/x", "http://127.0.0.1/") == "http://127.0.0.1:99999"
    assert elsewhere("http://user@api.github.com.evil.example/", "http://api.github.com/") == \
        "http://api.github.com.evil.example:80"


def test_a_next_page_on_another_origin_is_not_followed(github, other):
    link = f'<{other.url}/repos/{REPO}/pulls/7/files?page=2>; rel="next"'
    github.fail(Fault(200, {"Link": link}, payload=[{"filename": "a.py"}]), match="/pulls/7/files")
    with client(github) as gh, pytest.raises(UnusableAnswer) as refused:
        gh.pull_files(REPO, 7)
    assert str(refused.value) == (
        f"GitHub pointed to {other.origin}; only {github.origin}, the configured API origin, gets the token, "
        "so it was not followed"
    )
    assert other.seen == []


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_to_another_origin_is_not_followed(github, other, status):
    github.fail(Fault(status, {"Location": f"{other.url}/repos/{REPO}/pulls/7"}), match="/pulls/7")
    with client(github) as gh, pytest.raises(UnusableAnswer, match=f"GitHub pointed to {other.origin};"):
        gh.pull_files(REPO, 7)
    github.fail(Fault(307, {"Location": f"{other.url}/graphql"}), match="/graphql")
    with GitHubClient(github.url, TOKEN, max_wait=1, timeout=5) as gh, pytest.raises(UnusableAnswer):
        gh.merged_pulls(REPO, MERGED.replace(hour=0), MERGED.replace(hour=23))
    assert other.seen == []  # neither the token nor the GraphQL query went there
    # Within the origin, as when GitHub moves a renamed repository, it is followed.
    github.seen.clear()
    github.fail(Fault(status, {"Location": f"{github.url}/repos/{REPO}/pulls/7/files"}), match="/pulls/7/files")
    with client(github) as gh:
        assert [file["filename"] for file in gh.pull_files(REPO, 7)] == ["a.py"]
    assert [seen.authorization for seen in github.seen] == [f"Bearer {TOKEN}"] * 2


def test_ingest_skips_the_pr_whose_page_links_elsewhere_and_sends_the_token_nowhere(db, github, other):
    link = f'<{other.url}/repos/{REPO}/pulls/7/files?page=2>; rel="next"'
    github.fail(Fault(200, {"Link": link}, payload=[{"filename": "a.py"}]), match="/pulls/7/files")
    warnings: list[str] = []
    # REST with a token, as `summarize` fetches diffs: GraphQL brings the files with the listing.
    with GitHubClient(github.url, TOKEN, graphql=False, max_wait=1, on_warning=warnings.append) as gh:
        done = ingest_repo(db, gh, REPO, Window(MERGED.replace(hour=0), MERGED.replace(hour=23)))
    assert (done.new, done.skipped) == (1, 1) and get_pr(db, REPO, 7) is None and get_pr(db, REPO, 8)
    assert warnings == [f"{REPO}: PR #7 skipped, a later run tries it again: GitHub pointed to {other.origin}; "
                        f"only {github.origin}, the configured API origin, gets the token, so it was not followed"]
    assert other.seen == []


def test_summarize_fetches_no_diff_from_another_origin(run_cli, db, github, other, monkeypatch):
    for name, value in {"PRDIGEST_GITHUB_API_URL": github.url, "GITHUB_TOKEN": TOKEN, "PRDIGEST_REPOS": REPO,
                        "PRDIGEST_MODEL": "m"}.items():
        monkeypatch.setenv(name, value)
    assert run_cli("ingest", "--since", "2026-03-07", "--until", "2026-03-07").code == 0
    link = f'<{other.url}/repos/{REPO}/pulls/7/files?page=2>; rel="next"'
    github.fail(Fault(200, {"Link": link}, payload=[{"filename": "a.py", "patch": "@@ -1 +1 @@\n+x"}]),
                match="/pulls/7/files")
    with FakeOpenAI() as model:
        monkeypatch.setenv("OPENAI_BASE_URL", model.base_url)
        result = run_cli("summarize", "--date", "2026-03-07")
        assert [request.user.count("Number: #8") for request in model.requests] == [1]  # #7 was not sent
    assert f"#7 failed: left for a later run: GitHub pointed to {other.origin};" in result.err
    assert "#8 summarized" in result.out and result.code == 1
    assert other.seen == []


# ---------------------------------------------------------------- the model


def test_the_model_key_does_not_follow_a_redirect_elsewhere():
    with FakeOpenAI() as model, FakeOpenAI() as elsewhere_model:
        model.script(Reply(status=307, headers={"Location": f"{elsewhere_model.base_url}/chat/completions"}))
        with LLM("m", api_key="sk-test-key-123", base_url=model.base_url) as llm, pytest.raises(LLMError) as failed:
            llm.complete("system", "user text of the PR")
        assert elsewhere_model.requests == []  # nothing went there: no key, no prompt
        assert len(model.requests) == 1  # refused at once, not retried
        assert str(failed.value) == (
            f"model m: cannot reach {model.base_url}: redirected to {elsewhere_model.origin}; "
            f"only {model.origin} gets the key, so it was not followed"
        )
        assert failed.value.transient  # the server's fault: it does not count against a PR
        # Within its origin a redirect is followed.
        model.script(Reply(status=307, headers={"Location": f"{model.base_url}/chat/completions"}), "the answer")
        with LLM("m", api_key="sk-test-key-123", base_url=model.base_url) as llm:
            assert llm.complete("system", "user").text == "the answer"
        assert [request.headers["authorization"] for request in model.requests[1:]] == ["Bearer sk-test-key-123"] * 2


# ---------------------------------------------------------------- Slack


@pytest.mark.parametrize("status", [301, 302, 303])
def test_the_slack_token_does_not_follow_a_redirect(monkeypatch, status):
    with FakeSlack() as slack, FakeSlack() as elsewhere_slack:
        monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
        monkeypatch.setenv("PRDIGEST_SLACK_API_URL", slack.api_url)
        slack.fail("chat.postMessage", SlackFault(status, {"Location": f"{elsewhere_slack.api_url}chat.postMessage"}))
        web = slack_client(Settings.from_env())
        with pytest.raises(SlackApiError):
            web.chat_postMessage(channel="C1", text="hello")
        assert [call.token for call in elsewhere_slack.calls] == [None]  # urllib went there, without the token
        assert web.chat_postMessage(channel="C1", text="hello")["ok"]  # Slack itself still gets it
        assert slack.calls[-1].token == BOT_TOKEN
