"""`prdigest doctor`: every part prdigest depends on, checked in turn, one line each.

A check passes (✓), fails (✗), or is skipped (–) when that part is not configured and nothing needs it.
Each looks without changing anything: the store is opened read-only, and the model is asked one short
question. A failure to reach a service says why (its name does not resolve, the connection was refused)
apart from the service refusing a credential.
"""
from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from slack_sdk.errors import SlackApiError
from sqlite_utils import Database

from bot.config import Settings
from bot.model.client import LLM, LLMError, SchemaRefused, unconfigured_reason
from bot.slack.app import slack_client
from bot.slack.manifest import BOT_SCOPES
from store.migrations import migrations
from store.sources.github import BadToken, GitHubClient, GitHubError
from store.tables.prs import holdings
from store.tables.structured_output import json_schema_support
from store.tables.teams import Team
from store.text.errors import network_problem, one_line
from store.text.prose import plural

PASSED, FAILED, SKIPPED = "✓", "✗", "–"
# A check waits this long for a service at most: a doctor that hangs tells nothing.
TIMEOUT_SECONDS = 20
# Room for the model's answer, and for the reasoning a reasoning model writes before it.
PING_TOKENS = 256
# The model's question: as short as a request gets, with a schema as small as one gets.
_PING_SCHEMA = {"name": "ping", "strict": True, "schema": {
    "type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"], "additionalProperties": False}}


@dataclass
class Check:
    mark: str
    name: str
    line: str
    details: list[str] = field(default_factory=list)

    def shown(self) -> str:
        return "\n".join([f"{self.mark} {self.name}: {self.line}", *(f"    {detail}" for detail in self.details)])


def checks(settings: Settings, db_given: bool = False) -> Iterator[Check]:
    """Every check, in order, each as soon as it is done."""
    yield _settings(settings, db_given)
    for check in (_store, _slack, _github, _model):
        yield _guarded(check, settings)


def _guarded(check: Callable[[Settings], Check], settings: Settings) -> Check:
    """A check that broke in a way it did not foresee still gives its line, not a traceback."""
    try:
        return check(settings)
    except Exception as exc:
        return Check(FAILED, check.__name__.strip("_"), f"the check itself failed: {one_line(exc)}")


def _settings(settings: Settings, db_given: bool) -> Check:
    shown = settings.in_effect()
    given = sum(from_env for _, _, from_env in shown)
    details = []
    for name, value, from_env in shown:
        source = "--db" if name == "PRDIGEST_DB" and db_given else "environment" if from_env else "default"
        details.append(f"{name} = {value}  ({source})")
    return Check(PASSED, "settings", f"{len(shown)} variables, {given} from the environment, secrets not shown", details)


def _store(settings: Settings) -> Check:
    path = settings.db_path
    if not path.exists():
        return Check(FAILED, "store", f"there is no store at {path}: `prdigest import --sample` (example reports), "
                                      "`prdigest import FILE...` or `prdigest ingest` fills one")
    size = sum(file.stat().st_size for file in (path, Path(f"{path}-wal")) if file.exists())
    try:
        with closing(sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True)) as conn:
            db = Database(conn)
            applied = migrations.applied(db)
            pending = len(migrations.pending(db))
            held = holdings(db) if not pending else []
            problems = [row[0] for row in conn.execute("pragma quick_check")]
    except sqlite3.Error as exc:
        return Check(FAILED, "store", f"{path} cannot be read: {one_line(exc)}")
    schema = applied[-1].name if applied else "none"
    line = f"{path}, {size / 1e6:,.1f} MB, schema {schema} ({plural(len(applied), 'migration')}"
    line += f", {pending} pending: the next command that writes applies them)" if pending else ")"
    if problems != ["ok"]:
        return Check(FAILED, "store", f"{line}; quick_check found: {one_line('; '.join(problems[:3]))}")
    details = [item.describe(settings.timezone) for item in held] or ["no PRs yet"]
    return Check(PASSED, "store", line, details)


def _slack(settings: Settings) -> Check:
    if settings.installable:
        return _installations(settings)
    if not settings.slack_bot_token:
        return Check(SKIPPED, "Slack", "SLACK_BOT_TOKEN is not set, nor SLACK_CLIENT_ID and SLACK_CLIENT_SECRET: "
                                       "`prdigest serve` opens the local shell")
    return _token(settings, settings.slack_bot_token, "SLACK_BOT_TOKEN")


def _token(settings: Settings, token: str, named: str) -> Check:
    """auth.test with the bot token `named`, and its scopes against the manifest's."""
    client = slack_client(settings, token)
    client.timeout = TIMEOUT_SECONDS
    where = settings.slack_api_url
    try:
        response = client.auth_test()
    except SlackApiError as exc:
        return Check(FAILED, "Slack", f"Slack refused {named} ({one_line(exc.response.get('error'))}) at {where}")
    except Exception as exc:
        unreached = network_problem(exc)
        return Check(FAILED, "Slack", f"cannot reach {where}: {unreached or one_line(exc)}")
    who = f"auth.test passed as {response.get('user')} in {response.get('team')} ({response.get('team_id')}) at {where}"
    granted = response.headers.get("x-oauth-scopes")
    if granted is None:
        return Check(PASSED, "Slack", who, ["Slack listed no scopes (x-oauth-scopes): the scopes cannot be compared"])
    have = {scope.strip() for scope in granted.split(",") if scope.strip()}
    missing = [scope for scope in BOT_SCOPES if scope not in have]
    if missing:
        return Check(FAILED, "Slack", f"{who}; missing {plural(len(missing), 'scope')} manifest.yml asks for: "
                                      f"{', '.join(missing)} (add them and reinstall the app)")
    return Check(PASSED, "Slack", f"{who}; every scope manifest.yml asks for ({len(BOT_SCOPES)})")


def _installations(settings: Settings) -> Check:
    """Installable in many workspaces: each installation's bot token, as `_token` checks SLACK_BOT_TOKEN. A token
    that rotated out is not refreshed here (that would change the store): `serve` refreshes it before it posts."""
    installed = _installed(settings)
    line = "installable in many workspaces (SLACK_CLIENT_ID and SLACK_CLIENT_SECRET)"
    if not installed:
        return Check(PASSED, "Slack", f"{line}; no workspace has installed the app yet (its page: /slack/install)")
    details, failed = [], 0
    for team, found in installed:
        expires = found.get("bot_token_expires_at")
        if expires and found.get("bot_refresh_token") and expires <= time.time():
            details.append(f"{team}: its token expired; `serve` refreshes it before its next use")
            continue
        check = _token(settings, found.get("bot_token") or "", f"the bot token of {team}")
        failed += check.mark == FAILED
        details += [f"{team}: {check.line}", *check.details]
    summary = f"{line}; {plural(len(installed), 'workspace')} installed"
    if failed:
        return Check(FAILED, "Slack", f"{summary}, {failed} of them failing", details)
    return Check(PASSED, "Slack", summary, details)


def _installed(settings: Settings) -> list[tuple[Team, dict[str, Any]]]:
    """Each workspace that installed the app, with its installation, read from the store without changing it."""
    if not settings.db_path.exists():
        return []
    try:
        with closing(sqlite3.connect(f"file:{quote(str(settings.db_path.resolve()))}?mode=ro", uri=True)) as conn:
            rows = Database(conn)["slack_installations"].rows_where(order_by="enterprise_id, team_id")
            return [(Team(row["team_id"], row["enterprise_id"]), row) for row in rows]
    except sqlite3.Error:  # a store whose migrations have not made the table yet: nothing installed
        return []


def _github(settings: Settings) -> Check:
    where = settings.github_api_url
    client = GitHubClient(where, settings.github_token, max_attempts=1, max_wait=0, timeout=TIMEOUT_SECONDS)
    try:
        with client:
            limit = client.rate_limit()
            unknown = []
            for repo in settings.repos:
                try:
                    client.repository(repo)
                except GitHubError as exc:
                    if network_problem(exc) or isinstance(exc, BadToken):
                        raise
                    unknown.append(repo)
    except BadToken as exc:
        return Check(FAILED, "GitHub", f"{where}: {exc}")
    except GitHubError as exc:
        unreached = network_problem(exc)
        return Check(FAILED, "GitHub", f"cannot reach {where}: {unreached}" if unreached else f"{where}: {exc}")
    if limit.scopes is not None:
        token = f"a token with scopes {', '.join(limit.scopes) or 'none'}"
    else:
        token = "a token (fine-grained: GitHub lists no scopes)" if settings.github_token else "no token"
    resets = limit.reset.astimezone(settings.timezone).strftime("%H:%M")
    line = (f"{where} with {token}; {limit.remaining:,} of {limit.limit:,} requests left this hour "
            f"(it resets at {resets})")
    if unknown:
        return Check(FAILED, "GitHub", f"{line}; not found, or the token cannot see: {', '.join(unknown)}")
    return Check(PASSED, "GitHub", f"{line}; {', '.join(settings.repos)} found")


def _model(settings: Settings) -> Check:
    reason = unconfigured_reason(settings)
    if reason:
        return Check(SKIPPED, "model", f"{reason}; summaries and answers are written without one")
    llm = LLM(settings.model or "", api_key=settings.openai_api_key, base_url=settings.openai_base_url,
              timeout=min(float(settings.llm_timeout), TIMEOUT_SECONDS), max_retries=0)
    with llm:
        known = _remembered(settings, llm)
        try:
            takes = _takes_a_schema(llm, ask=known is not False)
        except LLMError as exc:
            unreached = network_problem(exc)
            line = f"cannot reach {llm.endpoint}: {unreached}" if unreached else str(exc)
            return Check(FAILED, "model", line)
    schema = "it takes a JSON schema for replies" if takes else "it takes no JSON schema: replies are read as text"
    if known is False:
        schema += " (as the store remembers; it asks again after a week)"
    return Check(PASSED, "model", f"{settings.model} at {llm.endpoint} answered; {schema}")


def _remembered(settings: Settings, llm: LLM) -> bool | None:
    """What the store remembers of the server and a JSON schema; None when not known (or no store to ask)."""
    if not settings.db_path.exists():
        return None
    try:
        with closing(sqlite3.connect(f"file:{quote(str(settings.db_path.resolve()))}?mode=ro", uri=True)) as conn:
            return json_schema_support(Database(conn), llm.endpoint, llm.model)
    except sqlite3.Error:
        return None


def _takes_a_schema(llm: LLM, ask: bool) -> bool:
    """One short question, with a JSON schema when `ask`: True when the server took it, False when it refused it
    (or was not asked) and answered without one; LLMError when it answered neither."""
    question = ("Reply with the JSON object {\"ok\": true}.", "Are you there?")
    if ask:
        try:
            llm.complete(*question, max_tokens=PING_TOKENS, json_schema=_PING_SCHEMA)
            return True
        except SchemaRefused:
            pass
    llm.complete(*question, max_tokens=PING_TOKENS)
    return False
