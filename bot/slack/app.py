"""The Slack app on slack-bolt: the slash command, mentions, the summary button and the Home tab (bot.slack.home).

Link previews, feedback on answers, sharing and the message shortcut register their own listeners. The app serves
the one workspace of SLACK_BOT_TOKEN, or every workspace that installs it (bot.slack.install); each request
reads and writes the rows of its own workspace only (bot.slack.listening.team_of).

Every listener acknowledges first and works after: Slack wants an answer within
three seconds, and the store, the model and GitHub may each take longer.
"""
from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.request import Request

from slack_bolt import Ack, App, BoltContext, BoltResponse, Respond
from slack_bolt.error import BoltUnhandledRequestError
from slack_bolt.logger import get_bolt_logger
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped
from slack_sdk import WebClient
from slack_sdk.http_retry import HttpRequest, HttpResponse, RetryState
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)

from bot.answers.commands import Reply, command_name, execute, is_slow, pr_reply
from bot.answers.feedback import votable
from bot.answers.mentions import (
    EMPTY_QUESTION,
    LOOKING,
    Replies,
    answered_message,
    apology,
    keep_turn,
    question_text,
    reply_to,
    start_turn,
)
from bot.config import Settings
from bot.messages.blocks import SUMMARY_ACTION, Message, text_message
from bot.runtime import Runtime
from bot.slack.explain import Explain
from bot.slack.feedback import Feedback
from bot.slack.home import HomeTab
from bot.slack.install import oauth_settings
from bot.slack.listening import team_of
from bot.slack.previews import LinkPreviews
from bot.slack.sharing import Sharing, shareable
from bot.terminal.logs import RequestLog, answering, current_request
from store.tables.teams import Team
from store.text.errors import one_line

log = logging.getLogger(__name__)

# A PR number SQLite can hold; the value is untrusted, and a 4,000-digit one must not reach the store.
_SUMMARY_VALUE = re.compile(r"^([A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100})#([1-9][0-9]{0,9})$")
WORKING = "_Working on it\u2026_"
# Answers prepared at once (each may wait on the model); more requests queue, acknowledged all the same.
WORKERS = 8
# The longest an answer waits for the requests waiting for their acknowledgement (see Listeners.after_acks).
ACKS_FIRST = 1.0


def slack_client(settings: Settings, token: str | None = None) -> WebClient:
    """A Web API client with `token` (else SLACK_BOT_TOKEN, if set) that waits out 429s (Retry-After) and retries
    Slack's 5xx and dropped connections, except for calls that create a message: Slack may have accepted one whose
    answer was lost, so those are read back (bot.slack.posted) instead of sent again.
    """
    base_url = settings.slack_api_url if settings.slack_api_url.endswith("/") else settings.slack_api_url + "/"
    client = _TokenStaysClient(token=token or settings.slack_bot_token, base_url=base_url)
    client.retry_handlers = [
        RateLimitErrorRetryHandler(max_retry_count=5),  # a 429 means nothing was accepted
        _ServerErrors(max_retry_count=2),
        _ConnectionErrors(max_retry_count=1),
    ]
    return client


class _TokenStaysClient(WebClient):
    """slack_sdk's WebClient, its token kept from redirects.

    It sends through urllib, which follows a redirect of a POST (301, 302, 303) as a GET to
    wherever Location says, with every header it was given, Authorization included. A header
    added as "unredirected" is urllib's own way to send one with the first request only.
    Slack's Web API does not redirect, so nothing that works is lost.
    """

    def _perform_urllib_http_request_internal(self, url: str, req: Request) -> dict[str, Any]:
        token = req.headers.pop("Authorization", None)
        if token:
            req.add_unredirected_header("Authorization", token)
        return super()._perform_urllib_http_request_internal(url, req)


def _creates_message(request: HttpRequest) -> bool:
    return request.url.rstrip("/").endswith("/chat.postMessage")


class _ServerErrors(ServerErrorRetryHandler):
    """slack_sdk's 500/503 retry, plus the 502/504 of a gateway, for every call but message creation."""

    def _can_retry(self, *, state: RetryState, request: HttpRequest, response: HttpResponse | None = None,
                   error: Exception | None = None) -> bool:
        return not _creates_message(request) and response is not None and response.status_code in (500, 502, 503, 504)


class _ConnectionErrors(ConnectionErrorRetryHandler):
    """slack_sdk's retry of a dropped connection, for every call but message creation."""

    def _can_retry(self, *, state: RetryState, request: HttpRequest, response: HttpResponse | None = None,
                   error: Exception | None = None) -> bool:
        return not _creates_message(request) and super()._can_retry(
            state=state, request=request, response=response, error=error
        )


class _ClientGiven(logging.Filter):
    """Drops bolt's warning that a token it read from SLACK_BOT_TOKEN goes unused beside the client we give it:
    the client carries that very token (with our retries and base URL), and the warning came at every start."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != warning_client_prioritized_and_token_skipped()


def _never() -> bool:
    return False


def build_app(runtime: Runtime, client: WebClient | None = None, acks_waiting: Callable[[], bool] = _never) -> App:
    """The bolt App with every listener registered: for SLACK_BOT_TOKEN's workspace, its token checked with
    auth.test; or, with the OAuth settings and no bot token, for every workspace that installs it.
    `acks_waiting` tells whether requests are waiting for their acknowledgement (the HTTP server knows)."""
    settings = runtime.settings
    client = client or slack_client(settings)
    oauth, authorize = oauth_settings(runtime, client) if settings.installable else (None, None)
    bolt_log = get_bolt_logger(App)
    if not any(isinstance(known, _ClientGiven) for known in bolt_log.filters):
        bolt_log.addFilter(_ClientGiven())
    app = App(
        client=client,
        # Empty in Socket Mode, where Slack does not sign; in HTTP mode bolt then refuses every request.
        signing_secret=settings.slack_signing_secret or "",
        name="prdigest",
        # To _malformed, as one log line; bolt's own warning is a screenful of suggested code per request.
        raise_error_for_unhandled_request=True,
        # Each listener acknowledges and hands its work to Listeners' pool, so it may run on the request's own
        # thread. Otherwise bolt runs it on a pool of its own and polls every 10 ms for the acknowledgement,
        # which held each HTTP request thread 10 ms or more and capped a burst at a few hundred acks a second.
        process_before_response=True,
        oauth_settings=oauth,
        authorize=authorize,  # type: ignore[arg-type]  # bolt takes an Authorize (it checks), though its hint names a function
    )
    Listeners(runtime, acks_waiting=acks_waiting).register(app)
    if settings.installable:
        app.enable_token_revocation_listeners()  # the installation goes, and with it the team's posts
    else:
        app.event("app_uninstalled")(_uninstalled)
        app.event("tokens_revoked")(_uninstalled)
    app.error(_malformed)
    return app


def _uninstalled(context: BoltContext) -> None:
    log.warning("workspace %s uninstalled the app or revoked its token: SLACK_BOT_TOKEN no longer works there",
                team_of(context))


def _malformed(error: Exception) -> BoltResponse:
    """A request bolt could not follow (a signed body with fields of the wrong shape): one line, and 400.
    One no listener takes (an event or action the app does not subscribe to): one line, and 404."""
    if isinstance(error, BoltUnhandledRequestError):
        log.warning("no listener for a request of type %.40r; answered 404", error.body.get("type"))
        return BoltResponse(status=404, body="unhandled request")
    log.warning("could not handle a request (%s: %s); answered 400", type(error).__name__, error)
    return BoltResponse(status=400, body="malformed request")


class Listeners:
    """The handlers. Each acknowledges, then hands the answer to its own pool of workers:
    bolt's listener threads stay free, so a request is acknowledged at once even
    while every worker waits on a slow model.
    """

    def __init__(self, runtime: Runtime, workers: int = WORKERS, acks_waiting: Callable[[], bool] = _never) -> None:
        self.runtime = runtime
        self.work = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="prdigest-answer")
        self.acks_waiting = acks_waiting

    def register(self, app: App) -> None:
        # Any command routed to this app is ours, so a workspace may rename /prdigest when the name is taken.
        app.command(re.compile(r"^/"))(self.on_command)
        app.event("app_mention")(self.on_mention)
        app.action(SUMMARY_ACTION)(self.on_summary_button)
        for kind in (HomeTab, LinkPreviews, Feedback, Sharing, Explain):
            kind(self.runtime, self.later).register(app)

    def later(self, job: Callable[..., None], *args: Any, request: RequestLog | None = None) -> None:
        """Run job(*args) on the pool, as the answer to `request` (by default, one named after the job): its
        records carry the request's fields, and one more says how it went and how long it took from here."""
        request = request or RequestLog(kind=job.__name__.strip("_").replace("_", " "))
        self.work.submit(self.after_acks, request, job, *args)

    def after_acks(self, request: RequestLog, job: Callable[..., None], *args: Any) -> None:
        """Run a job of the answer pool once no request waits for its acknowledgement (ACKS_FIRST at most).
        Slack waits 3 s for an acknowledgement and far longer for the answer; the interpreter runs one thread
        at a time, so in a burst the answers would otherwise slow every acknowledgement still to come."""
        waited_enough = time.monotonic() + ACKS_FIRST
        while self.acks_waiting() and time.monotonic() < waited_enough:
            time.sleep(0.005)
        _logged(request, job, *args)

    def on_command(self, ack: Ack, command: dict[str, Any], respond: Respond, context: BoltContext) -> None:
        if not command.get("response_url"):
            ack()
            log.warning("a command without a response_url; nothing to answer it with")
            return
        text = command.get("text") or ""
        if is_slow(text):
            ack(WORKING)
        else:
            ack()
        request = RequestLog(command_name(self.runtime, text), _text(command.get("team_id")), _text(command.get("channel_id")))
        self.later(self.answer_command, text, command, respond, team_of(context), request=request)

    def answer_command(self, text: str, command: dict[str, Any], respond: Respond, team: Team) -> None:
        channel, user = command.get("channel_id"), command.get("user_id")
        reply = execute(self.runtime, text, team, channel=channel, user=user)
        reply.messages = [votable(self.runtime, message, "ask", team, channel, user) for message in reply.messages]
        send_reply(respond, shareable(self.runtime, reply, team, channel, user))
        _outcome("refused" if reply.error else "ok")

    def on_summary_button(self, ack: Ack, body: dict[str, Any], action: dict[str, Any], respond: Respond) -> None:
        ack()
        match = _SUMMARY_VALUE.match(str(action.get("value") or ""))
        if not match:
            log.warning("summary button with an unexpected value %.80r", action.get("value"))
            return
        if not body.get("response_url"):
            log.warning("a summary button click without a response_url; nothing to answer it with")
            return
        request = RequestLog("summary button", _text((body.get("team") or {}).get("id")), _text((body.get("channel") or {}).get("id")))
        self.later(self.answer_button, match.group(1), int(match.group(2)), respond, request=request)

    def answer_button(self, repo: str, number: int, respond: Respond) -> None:
        send_reply(respond, pr_reply(self.runtime, repo, number))

    def on_mention(self, body: dict[str, Any], event: dict[str, Any], client: WebClient, context: BoltContext) -> None:
        if not (isinstance(event.get("channel"), str) and isinstance(event.get("ts"), str)):
            log.warning("a mention without its channel or ts; nothing to answer it in")
            return
        kind = "follow-up question" if event.get("thread_ts") else "question"
        request = RequestLog(kind, _text(body.get("team_id")), event["channel"])
        self.later(self.answer_mention, event, client, team_of(context), request=request)

    def answer_mention(self, event: dict[str, Any], client: WebClient, team: Team) -> None:
        channel, ts = event["channel"], event["ts"]
        thread_ts = event.get("thread_ts") or ts
        text = event.get("text")
        question = question_text(text if isinstance(text, str) else "")
        if not question:
            post(client, channel, thread_ts, text_message(EMPTY_QUESTION))
            return
        try:
            history = start_turn(self.runtime, team, channel, thread_ts, ts, question)
        except Exception:  # the store may be locked or gone; the person still gets an answer
            log.exception("could not record the mention %s/%s", channel, ts)
            post(client, channel, thread_ts, apology())
            _outcome("failed")
            return
        if history is None:
            return  # Slack delivered this mention again; it is answered already
        try:
            placeholder: str | None = post(client, channel, thread_ts, text_message(LOOKING))
        except Exception as exc:  # the answer still comes, as a message of its own
            log.warning("could not post the placeholder in %s/%s (%s)", channel, thread_ts, _why(exc))
            placeholder = None
        try:
            replies = reply_to(self.runtime, question, team, history=history, channel=channel)
            message = answered_message(self.runtime, question, replies, history)
        except Exception:
            log.exception("could not answer %r", question)
            message = apology()
            _outcome("failed")
        else:
            self._keep_turn(team, channel, ts, replies)
        message = votable(self.runtime, message, "mention", team, channel, event.get("user"))
        deliver(client, channel, thread_ts, placeholder, message)

    def _keep_turn(self, team: Team, channel: str, ts: str, replies: Replies) -> None:
        """Keep what the question was read as and cited, for the thread's next one; the answer goes out regardless."""
        try:
            keep_turn(self.runtime, team, channel, ts, replies)
        except Exception:  # the store may be locked or gone: the next question then reads this one again
            log.exception("could not keep the answer to the mention %s/%s", channel, ts)


def _logged(request: RequestLog, job: Callable[..., None], *args: Any) -> None:
    """Run a job of the answer pool as the answer to `request`; a failure is logged (a Future would keep it silent)."""
    with answering(request):
        job(*args)


def _outcome(outcome: str) -> None:
    """How the request being answered went, for the record that closes it."""
    request = current_request()
    if request is not None:
        request.outcome = outcome


def _text(value: object) -> str | None:
    """A field of Slack's payload, for the log only when it is text."""
    return value if isinstance(value, str) else None


def send_reply(respond: Respond, reply: Reply) -> None:
    for message in reply.messages:
        respond(
            text=message.text,
            blocks=message.blocks,
            response_type="in_channel" if reply.public else "ephemeral",
            replace_original=False,
        )


def deliver(client: WebClient, channel: str, thread_ts: str, placeholder: str | None, message: Message) -> None:
    """The answer in place of the placeholder; when there is none, or Slack refuses to edit it, as a new message
    in the thread. A placeholder left behind is then deleted: "Looking through…" above the answer would read as
    a question still being worked on. If Slack refuses that too, it stays, above the answer."""
    if placeholder is not None:
        try:
            client.chat_update(channel=channel, ts=placeholder, text=message.text, blocks=message.blocks)
            return
        except Exception as exc:
            log.warning("could not replace the placeholder %s in %s (%s); posting the answer as a new message",
                        placeholder, channel, _why(exc))
    post(client, channel, thread_ts, message)
    if placeholder is not None:
        try:
            client.chat_delete(channel=channel, ts=placeholder)
        except Exception as exc:
            log.warning("could not delete the placeholder %s in %s (%s)", placeholder, channel, _why(exc))


def _why(exc: Exception) -> str:
    """A failed Slack call in one line: slack_sdk's message spreads Slack's whole reply over two."""
    return one_line(f"{type(exc).__name__}: {exc}")


def post(client: WebClient, channel: str, thread_ts: str, message: Message) -> str:
    response = client.chat_postMessage(
        channel=channel, thread_ts=thread_ts, text=message.text, blocks=message.blocks, unfurl_links=False
    )
    return response["ts"]
