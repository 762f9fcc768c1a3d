"""`prdigest serve`: the Slack app (Socket Mode, or HTTP) with the daily report scheduler beside it.

It serves the one workspace of SLACK_BOT_TOKEN, or, with SLACK_CLIENT_ID and SLACK_CLIENT_SECRET instead, every
workspace that installs it from its Add to Slack page: in HTTP mode on the same port as the events, in Socket
Mode on a small HTTP port of its own (--install-port) beside the socket connection.
"""
from __future__ import annotations

import logging
import sys
import threading

import click

from bot.runtime import Runtime
from bot.slack.app import build_app, slack_client
from bot.slack.daily import repo_ingester
from bot.slack.health import LIVE, READY, Health
from bot.slack.http_server import EVENTS_PATH, HttpServer, health_server, http_server
from bot.slack.install import INSTALL_PATH
from bot.slack.scheduler import Scheduler
from bot.slack.workspaces import Installed, Workspaces, one_workspace
from bot.terminal.logs import SERVE_FORMAT, log_to_stderr
from bot.terminal.shell import prompted_lines, shell
from store.text.errors import network_problem, one_line

log = logging.getLogger(__name__)

NO_TOKENS = (
    "prdigest: no Slack tokens (SLACK_BOT_TOKEN, SLACK_APP_TOKEN) are set, so this is the local shell: "
    "the same answers the bot gives in Slack. manifest.yml creates the Slack app."
)
# Where the install pages listen beside a Socket Mode connection, unless --install-port says (bolt's own default).
INSTALL_PORT = 3000


def serve(runtime: Runtime, port: int | None, host: str, health_port: int | None = None,
          install_port: int = INSTALL_PORT) -> None:
    settings = runtime.settings
    if not (settings.slack_bot_token or settings.slack_app_token or settings.slack_signing_secret or settings.installable):
        print(NO_TOKENS, file=sys.stderr)
        if port is not None:
            print(f"prdigest: --http {port} was ignored: serving HTTP needs SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET", file=sys.stderr)
        if health_port is not None:
            print(f"prdigest: --health-port {health_port} was ignored: the local shell serves no health checks", file=sys.stderr)
        shell(runtime, prompted_lines(), sys.stdout, sys.stderr)
        return
    _check_tokens(runtime, port)
    log_to_stderr(logging.INFO, logging.Formatter(SERVE_FORMAT))
    _ = runtime.db  # a store that cannot open fails here, as one line, not in the first request
    server: HttpServer | None = None  # in HTTP mode, made once the app is

    def acks_waiting() -> bool:
        return server is not None and server.acks_waiting()

    try:
        app = build_app(runtime, acks_waiting=acks_waiting)
        workspaces: Workspaces = (
            Installed(runtime, lambda token: slack_client(settings, token)) if settings.installable
            else one_workspace(runtime, app.client)
        )
    except Exception as exc:  # auth.test failed: a bad token or no way to reach Slack
        raise click.ClickException(slack_refusal(settings.slack_api_url, exc)) from None
    health = Health(settings)
    # SLACK_BOT_TOKEN's auth.test passed; an installable app has no token of its own to test, only its workspaces'.
    health.slack_accepted = True
    stop = threading.Event()
    scheduler = Scheduler(runtime, workspaces, ingest=repo_ingester(runtime), ingested=health.ingested)
    threading.Thread(target=scheduler.run, args=(stop,), name="prdigest-scheduler", daemon=True).start()
    if health_port is not None:
        _serve_health(health, health_port, host)
    try:
        if port is not None:
            server = http_server(app, settings.slack_signing_secret or "", settings.db_path, port, host, health)
            log.info("serving Slack requests at http://%s:%s%s, and %s and %s", host, server.effective_port,
                     EVENTS_PATH, LIVE, READY)
            _installs_at(settings.installable, host, server.effective_port)
            server.run()
            return
        from slack_bolt.adapter.socket_mode import SocketModeHandler

        log.info("connecting to Slack in Socket Mode")
        handler = SocketModeHandler(app, settings.slack_app_token)
        if not settings.installable:
            handler.start()
            return
        handler.connect()
        pages = http_server(app, "", settings.db_path, install_port, host, events=False)
        _installs_at(True, host, pages.effective_port)
        pages.run()
    finally:
        stop.set()


def _installs_at(installable: bool, host: str, port: int) -> None:
    if installable:
        log.info("workspaces install the app at http://%s:%s%s", host, port, INSTALL_PATH)


def _serve_health(health: Health, port: int, host: str) -> None:
    """/healthz and /readyz on their own port, on a thread of their own, for as long as the process runs."""
    try:
        server = health_server(health, port, host)
    except OSError as exc:  # the port is taken, or not ours to bind
        raise click.ClickException(f"--health-port {port}: cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    log.info("serving %s and %s at http://%s:%s", LIVE, READY, host, server.effective_port)
    threading.Thread(target=server.run, name="prdigest-health", daemon=True).start()


def slack_refusal(url: str, exc: Exception) -> str:
    """Why auth.test failed, in one line: Slack could not be reached (and why), or it refused the token."""
    unreached = network_problem(exc)
    if unreached:
        return f"cannot reach Slack at {url}: {unreached} (PRDIGEST_SLACK_API_URL sets where Slack is)"
    return f"Slack did not accept SLACK_BOT_TOKEN at {url}: {one_line(exc)}"


def _check_tokens(runtime: Runtime, port: int | None) -> None:
    settings = runtime.settings
    if settings.slack_bot_token and settings.slack_client_id:
        raise click.ClickException(
            "SLACK_BOT_TOKEN and SLACK_CLIENT_ID are both set: unset SLACK_CLIENT_ID to serve the token's one "
            "workspace, or SLACK_BOT_TOKEN to let workspaces install the app"
        )
    if not (settings.slack_bot_token or settings.installable):
        raise click.ClickException(
            "SLACK_BOT_TOKEN is not set (the xoxb- token under OAuth & Permissions); or set SLACK_CLIENT_ID and "
            "SLACK_CLIENT_SECRET (Basic Information > App Credentials) to let workspaces install the app"
        )
    if port is None and not settings.slack_app_token:
        raise click.ClickException(
            "Socket Mode needs SLACK_APP_TOKEN (an xapp- token with connections:write); "
            "or serve HTTP with `prdigest serve --http PORT` and SLACK_SIGNING_SECRET"
        )
    if port is not None and not settings.slack_signing_secret:
        raise click.ClickException("--http needs SLACK_SIGNING_SECRET (Basic Information > App Credentials)")
