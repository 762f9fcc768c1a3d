"""What `serve` says of itself to a load balancer, an orchestrator or a container runtime.

GET /healthz is liveness: 200 while the process serves. GET /readyz is readiness: 200 when the store opens,
the last ingest of each repository is not older than three poll intervals (when polling is on), and Slack's
auth.test passed at start; otherwise 503 with a JSON body naming what failed. Neither needs a signature.
In HTTP mode they are answered on the Slack port by the event loop itself, so requests queued for the
threads cannot starve them; `--health-port` serves them on a port of their own, in Socket Mode too.
"""
from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import closing
from http import HTTPStatus
from typing import Any
from urllib.parse import quote

from bot.config import Settings
from bot.slack.http_guard import StartResponse, WsgiApp
from store.text.errors import one_line

LIVE, READY = "/healthz", "/readyz"
PATHS = (LIVE, READY)
# A poll may be this many intervals late before the process counts as not ready: one slow GitHub is no outage.
LATE_POLLS = 3
# The longest the store check waits for SQLite; a reader in WAL mode waits on no writer, so this is a stuck disk.
STORE_SECONDS = 1.0


class Health:
    """The state /readyz reads: when the process started, whether Slack took the token, and when each repository
    was last ingested (the scheduler says so after each ingest that went through)."""

    def __init__(self, settings: Settings, clock: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self.clock = clock
        self.started = clock()
        self.slack_accepted = False  # auth.test passed at start
        self._ingested: dict[str, float] = {}
        self._lock = threading.Lock()

    def ingested(self, repo: str) -> None:
        with self._lock:
            self._ingested[repo] = self.clock()

    def answer(self, path: str) -> tuple[int, dict[str, Any]]:
        """The status and JSON body for one of PATHS."""
        if path == LIVE:
            return 200, {"status": "serving"}
        checks = {"store": self._store(), "ingest": self._ingest(), "slack": self._slack()}
        failed = {name: problem for name, problem in checks.items() if problem != "ok"}
        if failed:
            return 503, {"status": "not ready", "failed": failed, "checks": checks}
        return 200, {"status": "ready", "checks": checks}

    def _store(self) -> str:
        path = self.settings.db_path
        if not path.exists():
            return f"there is no store at {path}"
        try:
            uri = f"file:{quote(str(path.resolve()))}?mode=ro"
            with closing(sqlite3.connect(uri, uri=True, timeout=STORE_SECONDS)) as conn:
                conn.execute("select 1 from prs limit 1").fetchall()
        except sqlite3.Error as exc:
            return f"the store at {path} does not open: {one_line(exc)}"
        return "ok"

    def _ingest(self) -> str:
        if not self.settings.ingests:
            return "ok"  # polling is off (PRDIGEST_POLL_MINUTES=0): nothing is expected
        every = 60 * self.settings.poll_minutes
        now = self.clock()
        with self._lock:
            # Until a repository's first ingest went through, the process's start stands for it.
            last = {repo: self._ingested.get(repo) for repo in self.settings.repos}
        late = []
        for repo, when in last.items():
            age = now - (when or self.started)
            if age > LATE_POLLS * every:
                late.append(f"{repo}: {'last ingested' if when else 'not ingested since the start,'} {age / 60:.0f} minutes ago")
        if not late:
            return "ok"
        return f"{'; '.join(late)} (over {LATE_POLLS} poll intervals of {self.settings.poll_minutes} minutes)"

    def _slack(self) -> str:
        return "ok" if self.slack_accepted else "Slack's auth.test has not passed"


def response(health: Health, path: str, method: str) -> tuple[str, list[tuple[str, str]], bytes]:
    """The status line, headers and body answering `method` (GET or HEAD) for one of PATHS."""
    status, body = health.answer(path)
    data = json.dumps(body).encode("utf-8")
    headers = [("Content-Type", "application/json"), ("Content-Length", str(len(data))), ("Cache-Control", "no-store")]
    return f"{status} {HTTPStatus(status).phrase}", headers, b"" if method == "HEAD" else data


def is_health_request(method: str | None, path: str | None) -> bool:
    return method in ("GET", "HEAD") and path in PATHS


class HealthRoutes:
    """WSGI middleware answering PATHS itself and passing every other request on to `inner`."""

    def __init__(self, inner: WsgiApp, health: Health) -> None:
        self.inner = inner
        self.health = health

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        method, path = environ.get("REQUEST_METHOD"), environ.get("PATH_INFO")
        if not is_health_request(method, path):
            return self.inner(environ, start_response)
        status, headers, data = response(self.health, str(path), str(method))
        start_response(status, headers)
        return [data]


def not_found(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    """What the health port answers for anything but PATHS."""
    start_response("404 Not Found", [("Content-Type", "text/plain"), ("Content-Length", "9")])
    return [b"not found"]
