"""`serve --http` on waitress: each request bounded in size and time before bolt, or even our guard, sees it.

The same server, without the events path, serves the install pages beside a Socket Mode connection.

waitress was chosen for what it bounds on its own (body and header size, idle
connections, open connections, worker threads) and because it is pure Python,
maintained, and reads requests on one event loop: a connection that sends
nothing holds a socket, never a thread. What it does not bound, this module
adds to it: the time a whole request may take to arrive, whatever its pace, and
room for a new connection when every place is held by a slow one. Its loop runs
on bot.slack.http_loop, whose cost follows the connections that are active,
not all those open.
"""
from __future__ import annotations

import logging
import resource
import threading
import time
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

from bot.slack.health import Health, HealthRoutes, is_health_request, not_found, response
from bot.slack.http_guard import MAX_BODY, MAX_DIGITS, STORE_WAIT, SignedRequestsOnly, WsgiApp, unsigned
from bot.slack.http_loop import Turns
from store.tables.signed_requests import SignatureLedger

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
# Slack's headers take about 1 KB; a signed request's timestamp and signature fit many times over.
MAX_HEADERS = 16 * 1024
# Seconds a connection may send nothing (idle, or a body shorter than its Content-Length) before it is closed.
IDLE_SECONDS = 5
# Seconds a request's headers and body together may take to arrive, counted from its first byte, however
# steadily they trickle in. Slack sends a request in milliseconds and stops waiting for the answer after 3 s,
# so a request still arriving after 5 s is one nobody waits for; the 2 s beyond Slack's limit spare a slow link.
REQUEST_SECONDS = 5
# Open connections at once. Past it, a new connection takes the place of the one open longest without a
# request being handled: a slow client gives up its place to a new one, never the other way round.
CONNECTIONS = 2048
# A body's first bytes are kept in memory, the rest in a temporary file: Slack's commands and events take a few KB,
# and a connection's memory stays bounded (this plus MAX_HEADERS) whatever it announces.
BODY_IN_MEMORY = 16 * 1024
# Connections past CONNECTIONS at once, at most: accepted before others make room, or while every connection
# has a request being handled.
BUSY_BEYOND = 64
# Connections accepted at one turn of the loop, at most: a burst is taken fast, the other connections not held up.
ACCEPTS_PER_TURN = BUSY_BEYOND
# Each connection may hold two file descriptors (its socket, a body's temporary file); these are for the rest.
OTHER_FILES = 2 * BUSY_BEYOND + 128
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

    def __init__(self, adj: Any) -> None:
        super().__init__(adj)
        self.started = time.monotonic()  # made at the request's first byte; HttpServer.maintenance reads it

    def parse_header(self, header_plus: bytes) -> None:
        try:
            super().parse_header(header_plus)
        except ValueError as exc:  # int() of more digits than Python converts
            raise ParsingError("Content-Length is invalid") from exc
        if len(self.headers.get("CONTENT_LENGTH", "")) > MAX_DIGITS:
            raise ParsingError("Content-Length is invalid")

    health = False  # a GET of /healthz or /readyz: HttpServer answers it on the event loop

    def received(self, data: bytes) -> int:
        in_headers = not self.headers_finished
        consumed: int = super().received(data)
        if in_headers and self.headers_finished and self.error is None and is_health_request(self.command, self.path):
            self.health = self.completed = True
            return len(data)
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


_serving = threading.local()  # the connection a request thread is handling


class _Channel(HTTPChannel):
    parser_class = _StrictParser
    error_task_class = _LoggedRefusal

    def add_channel(self, map: Any = None) -> None:
        super().add_channel(map)
        self.server.turns.touch(self._fileno)

    def service(self) -> None:
        """Handles a request on a request thread; HttpServer.pull_trigger touches this connection for the loop."""
        _serving.channel = self
        try:
            super().service()
        finally:
            _serving.channel = None

    def del_channel(self, map: Any = None) -> None:
        self.server.turns.forget(self._fileno)
        super().del_channel(map)


class HttpServer(TcpWSGIServer):
    """The listening server; `run()` serves until the process stops, `shutdown()` stops it from another thread."""

    channel_class = _Channel

    serving = False
    connections = CONNECTIONS  # set from the open-file limit by http_server()
    health: Health | None = None  # answers /healthz and /readyz when set

    def add_task(self, channel: HTTPChannel) -> None:
        """A connection's first request is ready (called by the loop): a health check is answered here, on the loop,
        so that requests queued for the threads never hold it up; any other goes to a thread."""
        request = channel.requests[0]
        if not (self.health and getattr(request, "health", False)):
            super().add_task(channel)
            return
        status, headers, data = response(self.health, request.path, request.command)
        lines = [f"HTTP/1.1 {status}", *(f"{name}: {value}" for name, value in headers), "Connection: close"]
        channel.write_soon(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + data)
        channel.requests.pop(0)
        request.close()
        channel.close_when_flushed = True  # what came after it on this connection is not read
        self.turns.touch(channel._fileno)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.turns = Turns(self._map)

    def handle_accept(self) -> None:
        """Accepts the connections waiting, ACCEPTS_PER_TURN at most, making room for each: a burst of connections
        is taken in a few turns of the loop rather than one turn each (waitress accepts one a turn)."""
        for _ in range(ACCEPTS_PER_TURN):
            open_before = len(self.active_channels)
            super().handle_accept()
            if len(self.active_channels) == open_before:  # none was waiting
                return
            self._make_room()

    def _make_room(self) -> None:
        """Past the connection limit, close the connection open longest that has no request being handled.
        Connections are kept in the order they were accepted, so this is nearly always the first one looked at."""
        if len(self.active_channels) <= self.connections:
            return
        for channel in self.active_channels.values():
            if not (channel.requests or channel.will_close):
                self._close_soon(channel)
                return

    def maintenance(self, now: float) -> None:
        """Every cleanup_interval: waitress marks the idle connections for closing, this the requests taking too long."""
        super().maintenance(now)
        started_by = time.monotonic() - REQUEST_SECONDS
        late = 0
        for channel in list(self.active_channels.values()):
            if not channel.will_close and channel.request is not None and channel.request.started < started_by:
                late += 1
                self._close_soon(channel)
            else:
                self.turns.touch(channel._fileno)  # waitress may have marked it; none waits over a second for a look
        if late:  # one line a second at most, however many slow clients there are
            log.warning("closed %d connection(s) whose request took over %d s to arrive", late, REQUEST_SECONDS)

    def acks_waiting(self) -> bool:
        """Whether requests are waiting for a request thread, or being handled by one."""
        return bool(self.task_dispatcher.queue) or self.task_dispatcher.active_count > 0

    def pull_trigger(self) -> None:
        """Wakes the loop; from a request thread, for the connection it changed (answered, or closing)."""
        channel = getattr(_serving, "channel", None)
        if channel is not None:
            self.turns.touch(channel._fileno)
        super().pull_trigger()

    def _close_soon(self, channel: HTTPChannel) -> None:
        channel.will_close = True  # closed by the event loop on its next turn, as waitress closes idle ones
        self.turns.touch(channel._fileno)

    def run(self) -> None:
        self.serving = True
        try:
            self.turns.run(self.adj.asyncore_loop_timeout, self._fileno)
        except (SystemExit, KeyboardInterrupt):  # as waitress's own run()
            self.task_dispatcher.shutdown()
        finally:
            self.serving = False

    def shutdown(self) -> None:
        self.task_dispatcher.shutdown()
        if not self.serving:
            close_all(self._map)
            return
        # Closed by the serving thread, woken through waitress's trigger: closing the sockets from
        # this thread would pull them from under that thread's selector, which then fails.
        self.trigger.pull_trigger(lambda: close_all(self._map))


def http_server(
    app: App, signing_secret: str, store: Path, port: int, host: str = "127.0.0.1", health: Health | None = None,
    events: bool = True,
) -> HttpServer:
    """The server taking commands, events and interactions at POST /slack/events, signed requests only (unless not
    `events`), and, when the app is installable, its install pages: GET /slack/install and /slack/oauth_redirect.
    The signatures it handled are kept in the store at `store`. With `health`, it answers /healthz and /readyz."""
    flow = app.oauth_flow
    pages = (flow.install_path, flow.redirect_uri_path) if flow is not None else ()
    handler: WsgiApp = SignedRequestsOnly(SlackRequestHandler(app, path=EVENTS_PATH), signing_secret,
                                          EVENTS_PATH if events else None, SignatureLedger(store, STORE_WAIT), pages)
    if health is not None:  # on the loop (HttpServer.add_task); here too, for one sent after another on a connection
        handler = HealthRoutes(handler, health)
    # A burst queues requests for the threads by design; waitress would log a line for each one queued.
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)
    connections = connections_allowed(CONNECTIONS)
    # waitress's own limit stops accepting. Set past ours (its count includes the listening socket and a pipe),
    # it is reached only when the connections past ours all have requests being handled, as in a burst.
    server = HttpServer(handler, host=host, port=port, connection_limit=connections + BUSY_BEYOND, **_BOUNDS)
    server.connections = connections
    server.health = health
    return server


def health_server(health: Health, port: int, host: str = "127.0.0.1") -> TcpWSGIServer:
    """/healthz and /readyz on a port of their own (`serve --health-port`), and nothing else: 404."""
    return TcpWSGIServer(HealthRoutes(not_found, health), host=host, port=port, threads=2, ident="prdigest",
                         channel_timeout=IDLE_SECONDS, cleanup_interval=1, expose_tracebacks=False)


def connections_allowed(wanted: int) -> int:
    """Raise this process's open-file limit as far as `wanted` connections need, or its hard limit allows
    (an unprivileged process may), and return how many connections it allows."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = 2 * wanted + OTHER_FILES
    if soft != resource.RLIM_INFINITY and soft < needed:
        soft = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    allowed = wanted if soft == resource.RLIM_INFINITY else min(wanted, (soft - OTHER_FILES) // 2)
    if allowed < wanted:
        log.warning("the open-file limit (%d) allows %d connections at once rather than %d", soft, allowed, wanted)
    return max(allowed, 1)


_BOUNDS: dict[str, Any] = {
    "threads": THREADS,
    "channel_timeout": IDLE_SECONDS,
    "cleanup_interval": 1,  # how often idle and late connections are looked for; waitress's 30 s would let them linger
    "inbuf_overflow": BODY_IN_MEMORY,
    "max_request_body_size": MAX_BODY + 1,  # waitress refuses at this size and above; MAX_BODY itself is allowed
    "max_request_header_size": MAX_HEADERS,
    "ident": "prdigest",
    "expose_tracebacks": False,
}
