"""`serve --http` on waitress: each request bounded in size and time before bolt, or even our guard, sees it.

waitress was chosen for what it bounds on its own (body and header size, idle
connections, open connections, worker threads) and because it is pure Python,
maintained, and reads requests on one event loop: a connection that sends
nothing holds a socket, never a thread.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from slack_bolt import App
from slack_bolt.adapter.wsgi import SlackRequestHandler
from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser, ParsingError
from waitress.server import TcpWSGIServer
from waitress.task import ErrorTask
from waitress.utilities import BadRequest, Error
from waitress.wasyncore import close_all

from bot.slack.http_guard import MAX_BODY, MAX_DIGITS, STORE_WAIT, SignedRequestsOnly, unsigned
from store.tables.signed_requests import open_ledger

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
# Slack's headers take about 1 KB; a signed request's timestamp and signature fit many times over.
MAX_HEADERS = 16 * 1024
# Seconds a connection may send nothing (idle, or a body shorter than its Content-Length) before it is closed.
IDLE_SECONDS = 5
# Open connections at once; beyond it new ones wait in the listen queue, so file descriptors stay well under ulimit.
CONNECTIONS = 256
# Requests checked and acknowledged at once. Each takes milliseconds: answers are prepared on the app's own pool.
THREADS = 8


class _Unauthorized(Error):
    code = 401
    reason = "Unauthorized"


_REFUSALS: dict[int, type[Error]] = {400: BadRequest, 401: _Unauthorized}


class _StrictParser(HTTPRequestParser):
    """waitress's parser, refusing a Content-Length longer than a short run of digits (400, not 413 or a crash),
    and a POST to the events path without a fresh signature as soon as its headers are in (before its body)."""

    error: Error | None  # what waitress answers instead of handing the request on

    def parse_header(self, header_plus: bytes) -> None:
        try:
            super().parse_header(header_plus)
        except ValueError as exc:  # int() of more digits than Python converts
            raise ParsingError("Content-Length is invalid") from exc
        if len(self.headers.get("CONTENT_LENGTH", "")) > MAX_DIGITS:
            raise ParsingError("Content-Length is invalid")

    def received(self, data: bytes) -> int:
        in_headers = not self.headers_finished
        consumed: int = super().received(data)
        if in_headers and self.headers_finished and self.error is None and self.command == "POST" \
                and self.path == EVENTS_PATH:
            refused = unsigned(self.headers.get("X_SLACK_REQUEST_TIMESTAMP"), self.headers.get("X_SLACK_SIGNATURE"))
            if refused:
                problem, status = refused
                self.error = _REFUSALS[status](problem)
                self.completed = True
        # What follows a refused request's headers is its body, not another request to read.
        return len(data) if self.error is not None else consumed


class _LoggedRefusal(ErrorTask):
    """waitress's own refusals (413, 400, 431) logged as one line, as the guard logs its own."""

    def execute(self) -> None:
        error = self.request.error
        log.warning("refused a request from %s: %d %s (%s)", self.channel.addr[0], error.code, error.reason, error.body)
        super().execute()


class _Channel(HTTPChannel):
    parser_class = _StrictParser
    error_task_class = _LoggedRefusal


class HttpServer(TcpWSGIServer):
    """The listening server; `run()` serves until the process stops, `shutdown()` stops it from another thread."""

    channel_class = _Channel

    serving = False

    def run(self) -> None:
        self.serving = True
        try:
            super().run()
        finally:
            self.serving = False

    def shutdown(self) -> None:
        self.task_dispatcher.shutdown()
        if not self.serving:
            close_all(self._map)
            return
        # Closed by the serving thread, woken through waitress's trigger: closing the sockets from
        # this thread would pull them from under that thread's select(), which then fails.
        self.trigger.pull_trigger(lambda: close_all(self._map))


def http_server(app: App, signing_secret: str, store: Path, port: int, host: str = "0.0.0.0") -> HttpServer:
    """The server taking commands, events and interactions at POST /slack/events, signed requests only;
    the signatures it handled are kept in the store at `store`."""
    handler = SignedRequestsOnly(SlackRequestHandler(app, path=EVENTS_PATH), signing_secret, EVENTS_PATH,
                                 open_ledger(store, STORE_WAIT))
    # A burst queues requests for the threads by design; waitress would log a line for each one queued.
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)
    return HttpServer(handler, host=host, port=port, **_BOUNDS)


_BOUNDS: dict[str, Any] = {
    "threads": THREADS,
    "connection_limit": CONNECTIONS,
    "channel_timeout": IDLE_SECONDS,
    "cleanup_interval": 1,  # how often idle connections are looked for; waitress's 30 s would let them linger
    "max_request_body_size": MAX_BODY + 1,  # waitress refuses at this size and above; MAX_BODY itself is allowed
    "max_request_header_size": MAX_HEADERS,
    "ident": "prdigest",
    "expose_tracebacks": False,
}
