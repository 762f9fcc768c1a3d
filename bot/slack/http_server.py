"""`serve --http` on waitress: each request bounded in size and time before bolt, or even our guard, sees it.

The same server, without the events path, serves the install pages beside a Socket Mode connection.

waitress was chosen for what it bounds on its own (body and header size, idle
connections, open connections, worker threads) and because it is pure Python,
maintained, and reads requests on one event loop: a connection that sends
nothing holds a socket, never a thread.
"""
from __future__ import annotations

import logging
from typing import Any

from slack_bolt import App
from slack_bolt.adapter.wsgi import SlackRequestHandler
from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser, ParsingError
from waitress.server import TcpWSGIServer
from waitress.task import ErrorTask
from waitress.wasyncore import close_all

from bot.slack.http_guard import MAX_BODY, MAX_DIGITS, SignedRequestsOnly

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


class _StrictParser(HTTPRequestParser):
    """waitress's parser, refusing a Content-Length longer than a short run of digits (400, not 413 or a crash)."""

    def parse_header(self, header_plus: bytes) -> None:
        try:
            super().parse_header(header_plus)
        except ValueError as exc:  # int() of more digits than Python converts
            raise ParsingError("Content-Length is invalid") from exc
        if len(self.headers.get("CONTENT_LENGTH", "")) > MAX_DIGITS:
            raise ParsingError("Content-Length is invalid")


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


def http_server(app: App, signing_secret: str, port: int, host: str = "0.0.0.0", events: bool = True) -> HttpServer:
    """The server taking commands, events and interactions at POST /slack/events, signed requests only (unless not
    `events`), and, when the app is installable, its install pages: GET /slack/install and /slack/oauth_redirect."""
    flow = app.oauth_flow
    pages = (flow.install_path, flow.redirect_uri_path) if flow is not None else ()
    handler = SignedRequestsOnly(SlackRequestHandler(app, path=EVENTS_PATH), signing_secret,
                                 EVENTS_PATH if events else None, pages)
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
