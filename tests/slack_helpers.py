"""Helpers for the Slack tests: a runtime over the test store, PRs made to order, the fake Slack, `serve --http`."""
from __future__ import annotations

import html
import os
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from pathlib import Path
from time import monotonic
from typing import Any

import httpx
import pytest
from conftest import FIXTURES, LA
from pr_factory import REPO
from pr_factory import make_pr as base_pr
from servers.github_api import FakeGitHub
from servers.slack_api import (
    BOT_TOKEN,
    CLIENT_ID,
    CLIENT_SECRET,
    SIGNING_SECRET,
    TEAM,
    FakeSlack,
    signed_headers,
    slash_command,
)
from waiting import wait_until

from bot.config import Settings
from bot.runtime import Runtime
from bot.slack.app import slack_client
from bot.slack.daily import Pacer
from bot.slack.scheduler import Scheduler
from bot.slack.workspaces import Installed, OneWorkspace
from store.db import open_db
from store.model import PullRequest, Summary
from store.sources.importer import import_file
from store.subscription.cadence import EVERY_DAY, Cadence
from store.subscription.filter import parse_filter, split_terms
from store.tables.installations import find_installation
from store.tables.prs import save_prs
from store.tables.subscriptions import Subscription
from store.tables.teams import Team

LOUD_TITLE = "<!channel>"  # in report-2026-03-08.md: must reach Slack as inert text
WORKSPACE = Team(TEAM)  # the fake Slack's workspace: the one of BOT_TOKEN, whose rows the bot reads


def one_team(settings: Settings) -> OneWorkspace:
    """The workspace of SLACK_BOT_TOKEN as `serve` starts with it (without asking auth.test again)."""
    return OneWorkspace(WORKSPACE, slack_client(settings))


def make_pr(number: int, merged_at: datetime, title: str | None = None, **fields) -> PullRequest:
    """A PR with a summary, as the Slack side shows them."""
    what = fields.pop("what", f"Change {number} makes the engine better in one specific way.")
    source = fields.pop("source", "imported")
    fields.setdefault("author", "ada-l")
    fields.setdefault("files", ["engine/core.py"])
    fields.setdefault("areas", ["core"])
    return base_pr(
        number,
        title or f"[Core] Change number {number}",
        merged_at=merged_at,
        merged_by="merge-bot",
        summary=Summary(what, "Impact.", "Risks.", "Insights.", source),
        **fields,
    )


def seed_day(db, day: date, count: int, start: int = 1000, **fields) -> list[PullRequest]:
    """`count` PRs merged on local day `day`, a few minutes apart from 08:00."""
    base = datetime.combine(day, time(8, 0), tzinfo=LA)
    prs = [make_pr(start + i, base + timedelta(minutes=5 * i), **fields) for i in range(count)]
    save_prs(db, prs)
    return prs


def of_channel(channel: str, rule: str = "", cadence: Cadence = EVERY_DAY, repo: str = REPO) -> Subscription:
    """A subscription of `channel` made long ago, its filter `rule` as `subscribe` takes it."""
    return Subscription(channel, repo, datetime(2026, 1, 1, tzinfo=LA), parse_filter(split_terms(rule), repo), cadence,
                        team=WORKSPACE)


def replicas_at_once(replicas: list, now: datetime) -> None:
    """Live alerts looked for by each replica at once, each on its own thread, then once more one after another."""
    threads = [threading.Thread(target=replica.run, args=(now,)) for replica in replicas]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for replica in replicas:
        replica.run(now)


def import_fixtures(db) -> None:
    for name in ("report-2026-03-07.md", "report-2026-03-08.md"):
        import_file(db, FIXTURES / name, LA, REPO)


@pytest.fixture
def github(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    """A GitHub holding no PRs yet; ingesting (on, as by default) talks to it and nothing else."""
    with FakeGitHub({REPO: []}) as server:
        monkeypatch.setenv("PRDIGEST_GITHUB_API_URL", server.url)
        monkeypatch.delenv("PRDIGEST_POLL_MINUTES")
        yield server


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch, github: FakeGitHub) -> Iterator[Runtime]:
    monkeypatch.setenv("PRDIGEST_REPOS", REPO)
    rt = Runtime(Settings.from_env())
    yield rt
    rt.close()


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as server:
        yield server


# ---------------------------------------------------------------- the app served in-process over HTTP

class Served:
    """The real bolt App behind the real HTTP server, in this process: signed requests to it, the fake Slack it
    answers through. `runtime` is the test's own view of the store the app uses."""

    def __init__(self, url: str, slack: FakeSlack, runtime: Runtime) -> None:
        self.url, self.slack, self.runtime = url, slack, runtime

    def send(self, body: str, content_type: str) -> httpx.Response:
        # Generous: a test asserts what the answer is, and ordering by events, never how soon it came.
        return httpx.post(self.url, content=body.encode(), headers=signed_headers(body, content_type), timeout=30)


@contextmanager
def serve_app(slack: FakeSlack, monkeypatch: pytest.MonkeyPatch, **env: str) -> Iterator[str]:
    """The app on a free port over the settings of the environment (and `env`, where "" unsets one), talking to
    `slack`; its URL."""
    from bot.slack.app import build_app
    from bot.slack.http_server import EVENTS_PATH, http_server

    for name, value in {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET,
                        "PRDIGEST_SLACK_API_URL": slack.api_url, **env}.items():
        if value:
            monkeypatch.setenv(name, value)
        else:
            monkeypatch.delenv(name, raising=False)
    runtime = Runtime(Settings.from_env())
    server = http_server(build_app(runtime), SIGNING_SECRET, runtime.settings.db_path, 0, "127.0.0.1")
    threading.Thread(target=server.run, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.effective_port}{EVENTS_PATH}"
    finally:
        server.shutdown()


@pytest.fixture
def served(runtime: Runtime, slack: FakeSlack, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    """The app in-process over a store holding the fixture reports, with ingest configured (PRDIGEST_REPOS)."""
    import_fixtures(runtime.db)
    with serve_app(slack, monkeypatch) as url:
        yield Served(url, slack, runtime)


# ---------------------------------------------------------------- the app installed in several workspaces (OAuth)

ACME, GLOBEX = "T0ACME", "T0GLOBEX"
CHANNEL = "C0SAME"  # the same ID in both workspaces: unique per workspace only on paper


@dataclass
class Installable:
    """The app served over HTTP for any workspace that installs it, a fake Slack, and the store they share."""

    base: str
    slack: FakeSlack
    runtime: Runtime

    def events(self, team: str) -> Served:
        """Requests from `team`, signed as Slack signs them."""
        return Served(f"{self.base}/slack/events", self.slack, self.runtime)

    def command(self, team: str, text: str, hook: str, channel: str = CHANNEL) -> str:
        """`/prdigest TEXT` typed in `team`'s channel; the answer Slack shows the person."""
        assert self.events(team).send(*slash_command(text, self.slack.response_url(hook), channel=channel, team=team)).status_code == 200
        self.slack.wait_for(lambda s: s.responses(hook))
        return self.slack.responses(hook)[-1].params["text"]

    def scheduler(self) -> Scheduler:
        """The scheduler as `serve` starts it: each workspace's posts with the token of its installation."""
        settings = self.runtime.settings
        return Scheduler(Runtime(settings), Installed(self.runtime, lambda token: slack_client(settings, token)), pacer=Pacer(0))


@pytest.fixture
def installable(runtime: Runtime, slack: FakeSlack, monkeypatch: pytest.MonkeyPatch) -> Iterator[Installable]:
    """The app over the test's store, installable in any workspace (OAuth), with no SLACK_BOT_TOKEN."""
    with serve_app(slack, monkeypatch, SLACK_BOT_TOKEN="", SLACK_CLIENT_ID=CLIENT_ID,
                   SLACK_CLIENT_SECRET=CLIENT_SECRET) as url:
        base = url.removesuffix("/slack/events")
        slack.redirect_url = f"{base}/slack/oauth_redirect"
        yield Installable(base, slack, Runtime(Settings.from_env()))


def start_install(base: str, team: str) -> tuple[str, str]:
    """A person opens the Add to Slack page and clicks its button: the authorize URL it links to, and the state
    cookie it set (Secure: a browser sends it back over the HTTPS a real install runs on)."""
    page = httpx.get(f"{base}/slack/install", params={"team": team}, timeout=30)
    assert page.status_code == 200, page.text
    link = html.unescape(re.search(r'<a href="([^"]+)"', page.text)[1])
    cookie = page.headers["set-cookie"].split(";")[0]
    return link, cookie


def authorize(link: str) -> str:
    """Slack's authorize page, where the person chooses Allow: where it redirects the browser to."""
    answer = httpx.get(link, timeout=30)
    assert answer.status_code == 302, answer.text
    return answer.headers["location"]


def install(base: str, team: str) -> httpx.Response:
    """The whole Add to Slack flow of one workspace, as a browser goes through it."""
    link, cookie = start_install(base, team)
    return httpx.get(authorize(link), headers={"Cookie": cookie}, timeout=30)


def token_of(runtime: Runtime, team: str) -> str:
    found = find_installation(runtime.db, Team(team))
    assert found is not None, f"{team} is not installed"
    return found["bot_token"]


# ---------------------------------------------------------------- the real `prdigest serve --http` process

ROOT = Path(__file__).resolve().parents[1]
_LISTENING = re.compile(r"serving Slack requests at http://[^:]+:(\d+)/slack/events")


class Bot:
    """A running `prdigest serve --http`: signed requests to it, what it logged, the fake Slack it answers through."""

    def __init__(self, url: str, slack: FakeSlack, db_path: Path, lines: queue.Queue[str], process: subprocess.Popen,
                 started: list[str]) -> None:
        self.url, self.slack, self.db_path, self._lines, self.process = url, slack, db_path, lines, process
        self.started = started  # what it logged up to the line saying where it listens, that line included

    def log(self) -> list[str]:
        """What the bot logged since the last call."""
        got = []
        while not self._lines.empty():
            got.append(self._lines.get())
        return got

    def log_until(self, enough: Callable[[list[str]], bool], what: str) -> list[str]:
        """What the bot logged since the last call, once `enough` holds for it (the lines reach us through a pipe)."""
        got: list[str] = []

        def arrived() -> bool:
            got.extend(self.log())
            return enough(got)

        try:
            wait_until(arrived, what)
        except AssertionError as exc:
            raise AssertionError(f"{exc}; the bot logged: {got}") from None
        return got

    def send(self, body: str, content_type: str, **signing: Any) -> httpx.Response:
        headers = signed_headers(body, content_type, **signing)
        # Generous: tests assert what the bot answers and in which order, never how soon (a busy machine is slow).
        return httpx.post(self.url, content=body.encode(), headers=headers, timeout=30)

    def command(self, text: str, hook: str, channel: str = "C0REPORTS", **signing: Any) -> httpx.Response:
        """`/prdigest TEXT` typed in `channel`; the answer goes to the fake Slack's response_url(hook)."""
        return self.send(*slash_command(text, self.slack.response_url(hook), channel=channel), **signing)


def shown(params: dict[str, Any]) -> str:
    """What a message shows: the text of its blocks."""
    return "\n".join(block["text"]["text"] for block in params["blocks"] if "text" in block)


@contextmanager
def serve_http(db_path: Path, slack: FakeSlack, **env: str) -> Iterator[Bot]:
    """`prdigest serve --http` on a free port over the store at `db_path`, talking to `slack`; `env` adds settings."""
    with serve_process(db_path, slack, ("--http", "0"), _LISTENING, **env) as (_, bot):
        yield bot


@contextmanager
def serve_process(
    db_path: Path, slack: FakeSlack, args: tuple[str, ...], ready: re.Pattern[str], **env: str
) -> Iterator[tuple[int, Bot]]:
    """`prdigest serve ARGS` on 127.0.0.1 over the store at `db_path`, talking to `slack`, with `env` over the
    single-workspace settings ("" unsets one): the port its `ready` log line names, and the running process."""
    mine = ("PRDIGEST_", "SLACK_", "OPENAI_", "GITHUB_")
    process_env = {
        **{name: value for name, value in os.environ.items() if not name.startswith(mine)},
        "PRDIGEST_DB": str(db_path), "SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "PRDIGEST_SLACK_API_URL": slack.api_url,
        # Without a fake GitHub to poll, it polls none: never the real one.
        **({} if "PRDIGEST_GITHUB_API_URL" in env else {"PRDIGEST_POLL_MINUTES": "0"}), **env,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "bot", "serve", *args, "--host", "127.0.0.1"],
        cwd=ROOT, env={name: value for name, value in process_env.items() if value}, stderr=subprocess.PIPE, text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stderr], daemon=True).start()
    try:
        port, started = _wait_for_port(process, lines, ready)
        yield port, Bot(f"http://127.0.0.1:{port}/slack/events", slack, db_path, lines, process, started)
    finally:
        process.terminate()
        process.wait(timeout=10)


@contextmanager
def serving_fixtures(db_path: Path, **env: str) -> Iterator[Bot]:
    """`serve --http` over a store holding the fixture reports, with a fake Slack and an empty fake GitHub."""
    db = open_db(db_path)
    import_fixtures(db)
    db.close()
    with FakeSlack() as slack, FakeGitHub({REPO: []}) as github:
        with serve_http(db_path, slack, PRDIGEST_REPOS=REPO, PRDIGEST_GITHUB_API_URL=github.url, **env) as served:
            yield served


def _wait_for_port(process: subprocess.Popen, lines: queue.Queue[str], ready: re.Pattern[str]) -> tuple[int, list[str]]:
    seen = []
    deadline = monotonic() + 30
    while monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            assert process.poll() is None, f"serve exited: {seen}"
            continue
        seen.append(line)
        found = ready.search(line)
        if found:
            return int(found.group(1)), seen
    raise AssertionError(f"serve did not start: {seen}")
