"""`prdigest doctor` against the loopback Slack, GitHub and model: one line per check, ✓ or ✗ (– when not
configured), exit 1 on any ✗, and a service that cannot be reached told apart from one that refuses a credential."""
from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from servers.github_api import FakeGitHub
from servers.openai_api import FakeOpenAI, Reply
from servers.slack_api import BOT_TOKEN, CLIENT_ID, CLIENT_SECRET, SIGNING_SECRET, FakeSlack, Token

from bot.slack.manifest import BOT_SCOPES
from store.db import open_db
from store.sources.sample import SAMPLE_REPO
from store.tables.installations import save_installation
from store.tables.teams import Team

ROOT = Path(__file__).resolve().parents[1]
GITHUB_TOKEN = "ghp_doctorDoctorDoctorDoctorDoctor1234"
OPENAI_KEY = "sk-doctor-key-0123456789abcdef"
NOWHERE = "slack.invalid"  # .invalid never resolves


def manifest_scopes() -> list[str]:
    """The bot scopes manifest.yml asks for, read from its `oauth_config: scopes: bot:` list."""
    text = (ROOT / "manifest.yml").read_text(encoding="utf-8")
    block = re.search(r"^oauth_config:\n(?:  #.*\n)*  scopes:\n    bot:\n((?:      - .*\n)+)", text, re.M)
    assert block, "manifest.yml has no oauth_config.scopes.bot list"
    return [line.split("#")[0].strip().removeprefix("- ").strip() for line in block.group(1).splitlines()]


@pytest.fixture
def world(run_cli, monkeypatch) -> Iterator[tuple[FakeSlack, FakeGitHub, FakeOpenAI]]:
    """A store of the example reports, and every service prdigest talks to, each answering as it should."""
    assert run_cli("import", "--sample").code == 0
    with FakeSlack() as slack, FakeGitHub({SAMPLE_REPO: []}, token=GITHUB_TOKEN) as github, FakeOpenAI() as model:
        slack.scopes = [*BOT_SCOPES, "users:read"]
        github.scopes = "repo, read:org"
        for name, value in {
            "SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET, "PRDIGEST_SLACK_API_URL": slack.api_url,
            "GITHUB_TOKEN": GITHUB_TOKEN, "PRDIGEST_GITHUB_API_URL": github.url, "PRDIGEST_REPOS": SAMPLE_REPO,
            "PRDIGEST_MODEL": "doctor-model", "OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": OPENAI_KEY,
        }.items():
            monkeypatch.setenv(name, value)
        yield slack, github, model


def lines_of(output: str) -> dict[str, str]:
    """Each check's line by its name, mark included ("✓ store: ..." under "store")."""
    found = {}
    for line in output.splitlines():
        checked = re.match(r"^([✓✗–]) ([^:]+): ", line)
        if checked:
            found[checked.group(2)] = line
    return found


def test_the_shipped_scopes_are_the_manifests():
    assert sorted(BOT_SCOPES) == sorted(manifest_scopes())


def test_everything_in_order_passes_and_shows_no_secret(run_cli, world, isolated_env):
    result = run_cli("doctor")
    assert result.code == 0, result.out
    checks = lines_of(result.out)
    assert list(checks) == ["settings", "store", "Slack", "GitHub", "model"]
    assert all(line.startswith("✓") for line in checks.values()), result.out
    assert f"    PRDIGEST_DB = {isolated_env}  (environment)" in result.out
    assert "    SLACK_BOT_TOKEN = set  (environment)" in result.out and "    SLACK_APP_TOKEN = unset  (default)" in result.out
    assert "    PRDIGEST_TIMEZONE = America/Los_Angeles  (default)" in result.out
    assert not any(secret in result.out for secret in (BOT_TOKEN, SIGNING_SECRET, GITHUB_TOKEN, OPENAI_KEY))
    assert re.match(rf"✓ store: {re.escape(str(isolated_env))}, [\d.]+ MB, schema m\d{{3}}_\w+ \(\d+ migrations\)$",
                    checks["store"])
    assert f"    {SAMPLE_REPO}: 72 PRs merged from 2026-03-16 to 2026-03-19" in result.out
    assert checks["Slack"].startswith("✓ Slack: auth.test passed as prdigest in Workspace T0TEST (T0TEST)")
    assert checks["Slack"].endswith(f"every scope manifest.yml asks for ({len(BOT_SCOPES)})")
    assert "with a token with scopes repo, read:org; 5,000 of 5,000 requests left this hour" in checks["GitHub"]
    assert checks["GitHub"].endswith(f"{SAMPLE_REPO} found")
    assert checks["model"].endswith("answered; it takes a JSON schema for replies")
    db_flag = run_cli("doctor", "--db", str(isolated_env))
    assert f"    PRDIGEST_DB = {isolated_env}  (--db)" in db_flag.out


def test_missing_scopes_an_unknown_repository_and_a_model_without_schemas(run_cli, world, monkeypatch):
    slack, _, _ = world
    slack.scopes = ["chat:write", "commands"]
    monkeypatch.setenv("PRDIGEST_REPOS", f"{SAMPLE_REPO},acme/missing")
    with FakeOpenAI(json_schema="vllm") as refusing:
        monkeypatch.setenv("OPENAI_BASE_URL", refusing.base_url)
        result = run_cli("doctor")
    assert result.code == 1
    checks = lines_of(result.out)
    assert checks["Slack"].startswith("✗ Slack: auth.test passed as prdigest")
    assert "missing 8 scopes manifest.yml asks for: app_mentions:read, chat:write.public," in checks["Slack"]
    assert checks["GitHub"].startswith("✗") and checks["GitHub"].endswith("not found, or the token cannot see: acme/missing")
    assert checks["model"].startswith("✓") and "it takes no JSON schema: replies are read as text" in checks["model"]


def test_refused_credentials_are_told_apart_from_services_out_of_reach(run_cli, world, monkeypatch):
    _, _, model = world
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-not-the-one")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_notTheOneNotTheOneNotTheOne12345")
    model.script(Reply('{"error": {"message": "Incorrect API key provided"}}', status=401))
    refused = lines_of(run_cli("doctor").out)
    assert refused["Slack"].startswith("✗ Slack: Slack refused SLACK_BOT_TOKEN (invalid_auth) at http://127.0.0.1:")
    assert "GitHub rejected the token (401 Bad credentials): check GITHUB_TOKEN" in refused["GitHub"]
    assert refused["model"].startswith("✗ model: model doctor-model: ") and "answered HTTP 401" in refused["model"]

    for name in ("PRDIGEST_SLACK_API_URL", "PRDIGEST_GITHUB_API_URL", "OPENAI_BASE_URL"):
        monkeypatch.setenv(name, f"http://{NOWHERE}/api/")
    result = run_cli("doctor")
    assert result.code == 1
    unreached = lines_of(result.out)
    dns = "its name does not resolve (DNS)"
    assert unreached["Slack"] == f"✗ Slack: cannot reach http://{NOWHERE}/api/: {dns}: check the network, or the URL's host name"
    assert unreached["GitHub"].startswith(f"✗ GitHub: cannot reach http://{NOWHERE}/api: {dns}")
    assert unreached["model"].startswith(f"✗ model: cannot reach http://{NOWHERE}/api: {dns}")


def test_nothing_configured_skips_the_services_and_a_missing_store_fails(run_cli, tmp_path):
    result = run_cli("--db", str(tmp_path / "none.db"), "doctor")
    assert result.code == 1
    checks = lines_of(result.out)
    assert checks["store"].startswith(f"✗ store: there is no store at {tmp_path / 'none.db'}: `prdigest import --sample`")
    assert checks["Slack"].startswith("– Slack: SLACK_BOT_TOKEN is not set")
    assert checks["model"].startswith("– model: no model configured")
    assert not (tmp_path / "none.db").exists()  # the doctor looks, and creates nothing


def test_settings_that_do_not_read_are_a_failed_check(run_cli, monkeypatch):
    monkeypatch.setenv("PRDIGEST_TIMEZONE", "Mars/Olympus")
    result = run_cli("doctor")
    assert result.code == 1
    assert result.out.strip() == ("✗ settings: PRDIGEST_TIMEZONE: unknown timezone 'Mars/Olympus' "
                                  "(the other checks need settings that read)")


def test_an_installable_app_checks_the_token_of_each_workspace_that_installed_it(run_cli, world, monkeypatch, isolated_env):
    slack, _, _ = world
    monkeypatch.delenv("SLACK_BOT_TOKEN")
    monkeypatch.setenv("SLACK_CLIENT_ID", CLIENT_ID)
    monkeypatch.setenv("SLACK_CLIENT_SECRET", CLIENT_SECRET)
    installable = "✓ Slack: installable in many workspaces (SLACK_CLIENT_ID and SLACK_CLIENT_SECRET); "
    assert lines_of(run_cli("doctor").out)["Slack"] == installable + (
        "no workspace has installed the app yet (its page: /slack/install)")

    db = open_db(isolated_env)
    for team in ("T0ACME", "T0GLOBEX"):
        slack.tokens[f"xoxb-{team}-doctor"] = Token(team)
        save_installation(db, Team(team), {"bot_token": f"xoxb-{team}-doctor", "installed_at": 1.0})
    db.close()
    assert run_cli("doctor").code == 0
    slack.uninstall("T0GLOBEX")  # its app_uninstalled not handled yet: the installation is still in the store
    result = run_cli("doctor")
    assert result.code == 1 and lines_of(result.out)["Slack"] == installable.replace("✓", "✗") + (
        "2 workspaces installed, 1 of them failing")
    assert "    T0ACME: auth.test passed as prdigest in Workspace T0ACME (T0ACME)" in result.out
    assert "    T0GLOBEX: Slack refused the bot token of T0GLOBEX (invalid_auth)" in result.out
    assert "-doctor" not in result.out and CLIENT_SECRET not in result.out
