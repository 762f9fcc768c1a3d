"""GET /healthz and /readyz: on the Slack port in HTTP mode, answered by the event loop even while every request
thread is held, and on --health-port in Socket Mode; 503 with a JSON body naming what failed."""
from __future__ import annotations

import os
import queue
import re
import sqlite3
import subprocess
import sys
import threading
from contextlib import closing
from datetime import date

import httpx
import pytest
from conftest import LA
from servers.github_api import FakeGitHub, day_of_pulls
from servers.github_api import Fault as GitHubFault
from servers.slack_api import APP_TOKEN, BOT_TOKEN, SIGNING_SECRET, FakeSlack, signed_headers, slash_command
from servers.slack_socket import FakeSocketMode
from slack_helpers import REPO, ROOT, WORKSPACE, import_fixtures, one_team, serve_http
from waiting import wait_until

from bot.answers.commands import execute
from bot.config import Settings
from bot.runtime import Runtime
from bot.slack.app import build_app
from bot.slack.daily import Pacer, repo_ingester
from bot.slack.health import Health
from bot.slack.http_server import THREADS, http_server
from bot.slack.scheduler import Scheduler
from store.db import open_db


def _stored(db_path) -> None:
    db = open_db(db_path)
    import_fixtures(db)
    db.close()


def test_healthz_and_readyz_on_the_slack_port_need_no_signature(tmp_path, slack: FakeSlack):
    db_path = tmp_path / "prdigest.db"
    _stored(db_path)
    with serve_http(db_path, slack) as bot:
        base = bot.url.removesuffix("/slack/events")
        live = httpx.get(f"{base}/healthz", timeout=30)
        assert live.status_code == 200 and live.json() == {"status": "serving"}
        ready = httpx.get(f"{base}/readyz", timeout=30)
        assert ready.status_code == 200
        assert ready.json() == {"status": "ready", "checks": {"store": "ok", "ingest": "ok", "slack": "ok"}}
        assert httpx.head(f"{base}/readyz", timeout=30).status_code == 200
        assert httpx.get(f"{base}/elsewhere", timeout=30).status_code == 404
        db_path.rename(tmp_path / "moved.db")  # the store is gone from under the running process
        gone = httpx.get(f"{base}/readyz", timeout=30)
        assert gone.status_code == 503
        assert gone.json()["failed"] == {"store": f"there is no store at {db_path}"}
        assert httpx.get(f"{base}/healthz", timeout=30).status_code == 200  # it still serves


def test_health_is_answered_while_every_request_thread_is_held(runtime, slack, monkeypatch):
    """Each signed command waits for the store's write lock (its replay check) for as long as the guard lets it,
    holding a request thread; a health check sent behind eight threads' worth of them is answered at once."""
    import_fixtures(runtime.db)
    for name, value in {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET,
                        "PRDIGEST_SLACK_API_URL": slack.api_url}.items():
        monkeypatch.setenv(name, value)
    settings = Settings.from_env()
    health = Health(settings)
    health.slack_accepted = True
    server = http_server(build_app(Runtime(settings)), SIGNING_SECRET, settings.db_path, 0, "127.0.0.1", health)
    threading.Thread(target=server.run, daemon=True).start()
    base = f"http://127.0.0.1:{server.effective_port}"
    commands = 12 * THREADS
    answered: queue.Queue[int] = queue.Queue()
    dispatcher = server.task_dispatcher
    received = lambda: len(dispatcher.queue) + dispatcher.active_count + answered.qsize() >= commands

    def command(n: int) -> None:
        body, kind = slash_command("2026-03-08", slack.response_url(f"held-{n}"))
        answered.put(httpx.post(f"{base}/slack/events", content=body.encode(), headers=signed_headers(body, kind),
                                timeout=60).status_code)

    with closing(sqlite3.connect(settings.db_path, isolation_level=None)) as holder:
        holder.execute("begin immediate")  # another process's long write, as an import's
        senders = [threading.Thread(target=command, args=(n,)) for n in range(commands)]
        for sender in senders:
            sender.start()
        wait_until(lambda: received() and len(dispatcher.queue) >= 2 * THREADS, "every command queued for a thread")
        live = httpx.get(f"{base}/healthz", timeout=60)
        still_queued = len(dispatcher.queue)
        holder.execute("rollback")
    for sender in senders:
        sender.join(timeout=120)
    each = len(execute(runtime, "2026-03-08", WORKSPACE).messages)  # the messages one answer takes
    slack.wait_for(lambda s: len(s.calls_to("response_url")) >= commands * each)  # every command answered, too
    server.shutdown()
    assert live.status_code == 200
    assert still_queued >= THREADS, still_queued  # answered before the commands queued ahead of it
    assert [answered.get() for _ in range(commands)] == [200] * commands


def test_readiness_follows_the_last_ingest_that_went_through(monkeypatch, slack):
    clock = [1_000_000.0]
    with FakeGitHub({REPO: day_of_pulls(date(2026, 3, 4), 2, LA)}) as github:
        for name, value in {"PRDIGEST_GITHUB_API_URL": github.url, "PRDIGEST_REPOS": REPO, "SLACK_BOT_TOKEN": BOT_TOKEN,
                            "PRDIGEST_SLACK_API_URL": slack.api_url, "PRDIGEST_POLL_MINUTES": "10"}.items():
            monkeypatch.setenv(name, value)
        settings = Settings.from_env()
        health = Health(settings, clock=lambda: clock[0])
        health.slack_accepted = True
        runtime = Runtime(settings)
        _ = runtime.db  # the store serve opens at its start
        scheduler = Scheduler(runtime, one_team(settings), ingest=repo_ingester(runtime), pacer=Pacer(0),
                              ingested=health.ingested)
        assert health.answer("/readyz")[0] == 200  # a fresh process is given three polls' time
        clock[0] += 31 * 60
        status, body = health.answer("/readyz")
        assert status == 503
        assert body["failed"] == {"ingest": f"{REPO}: not ingested since the start, 31 minutes ago"
                                            " (over 3 poll intervals of 10 minutes)"}
        scheduler.tick()
        assert health.answer("/readyz") == (200, {"status": "ready", "checks": {
            "store": "ok", "ingest": "ok", "slack": "ok"}})
        github.fail(GitHubFault(500), times=50)  # GitHub down from here on: every later poll fails
        clock[0] += 29 * 60
        scheduler._ingest(REPO, scheduler.runtime.now())
        assert health.answer("/readyz")[0] == 200
        clock[0] += 2 * 60
        status, body = health.answer("/readyz")
        assert status == 503 and body["failed"]["ingest"].startswith(f"{REPO}: last ingested 31 minutes ago")
        assert body["checks"]["store"] == "ok"
    monkeypatch.setenv("PRDIGEST_POLL_MINUTES", "0")  # no polling: nothing is expected of ingest
    assert Health(Settings.from_env(), clock=lambda: clock[0] + 10**6).answer("/readyz")[1]["checks"]["ingest"] == "ok"


@pytest.mark.processes
def test_socket_mode_serves_health_on_its_own_port_at_127_0_0_1(tmp_path):
    db_path = tmp_path / "prdigest.db"
    _stored(db_path)
    with FakeSlack() as slack, FakeSocketMode() as socket_mode:
        slack.socket_url = socket_mode.url
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("PRDIGEST_", "SLACK_", "OPENAI_", "GITHUB_"))},
            "PRDIGEST_DB": str(db_path), "SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": APP_TOKEN,
            "PRDIGEST_SLACK_API_URL": slack.api_url, "PRDIGEST_POLL_MINUTES": "0",
        }
        process = subprocess.Popen([sys.executable, "-m", "bot", "serve", "--health-port", "0"], cwd=ROOT, env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            assert process.stderr is not None
            seen = []
            for line in process.stderr:
                seen.append(line)
                found = re.search(r"serving /healthz and /readyz at http://127\.0\.0\.1:(\d+)", line)
                if found:
                    break
            assert found, seen
            threading.Thread(target=lambda: [None for _ in process.stderr or ()], daemon=True).start()  # drained
            base = f"http://127.0.0.1:{found.group(1)}"
            socket_mode.wait_connected()
            assert httpx.get(f"{base}/healthz", timeout=30).json() == {"status": "serving"}
            ready = httpx.get(f"{base}/readyz", timeout=30)
            assert ready.status_code == 200 and ready.json()["status"] == "ready"
            assert httpx.get(f"{base}/slack/events", timeout=30).status_code == 404
        finally:
            process.terminate()
            process.wait(timeout=10)
