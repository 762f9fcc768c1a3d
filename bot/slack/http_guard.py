"""The door of `serve --http`: a request reaches bolt only signed, fresh, well-formed and seen for the first time.

The signature is checked over the raw body before anything parses it, so
whoever can reach the port cannot make the app parse (and log tracebacks for)
arbitrary bytes; a signed request sent again is answered once, after a restart
too, and by every process sharing the store. The only requests let through
unsigned are GETs of the install pages, when the app is installable: a
browser's, which Slack never signs.
"""
from __future__ import annotations

import io
import logging
import re
import time
from collections.abc import Callable, Collection, Iterable
from http import HTTPStatus
from typing import Any

from slack_bolt.request.internals import parse_body
from slack_sdk.signature import SignatureVerifier

from store.db import StoreError
from store.tables.signed_requests import SignatureLedger

log = logging.getLogger(__name__)

# Slack's own limit on a request's age; a replay older than this fails the signature check anyway.
FRESH_SECONDS = 5 * 60
# Slack's largest payloads (a modal's state, a long message's blocks) stay well under this.
MAX_BODY = 1024 * 1024
# A timestamp or Content-Length: ASCII digits only (str.isdigit() takes "²", which int() refuses), and short.
MAX_DIGITS = 12
_DIGITS = re.compile(f"[0-9]{{1,{MAX_DIGITS}}}")
# The longest a request waits to take its turn at the store, and then for another process's write (an import)
# to finish: past either, it is handled without the replay check rather than miss Slack's 3 seconds.
STORE_WAIT = 0.5
NOT_SIGNED = "no valid signature, or a stale timestamp"

StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


class SignedRequestsOnly:
    """WSGI middleware in front of bolt's handler: signed POSTs to `path` (None: no POST at all) and GETs of
    `pages`, every other request 404."""

    def __init__(
        self, inner: WsgiApp, signing_secret: str, path: str | None, seen: SignatureLedger, pages: Collection[str] = ()
    ) -> None:
        self.inner = inner
        self.path = path
        self.pages = pages
        # None beside Socket Mode, whose requests come over the socket: no secret to check, nothing taken by POST.
        self.verifier = SignatureVerifier(signing_secret) if path else None
        self.seen = seen

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        method, path = environ.get("REQUEST_METHOD"), environ.get("PATH_INFO")
        if method == "GET" and path in self.pages:
            return self.inner(environ, start_response)
        if method != "POST" or path != self.path:
            return _not_found(start_response)
        body, problem, status = self._check(environ)
        if problem:
            return _refuse(environ, start_response, status, problem)
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        try:
            return self.inner(environ, start_response)
        except Exception as exc:  # bolt reads fields before its error handler is in place; a shape it trips on is the sender's fault
            return _refuse(environ, start_response, 400, f"a signed body bolt could not read ({type(exc).__name__})")

    def _check(self, environ: dict[str, Any]) -> tuple[bytes, str | None, int]:
        """The body, and what is wrong with the request (None: nothing) with the status to answer."""
        length = environ.get("CONTENT_LENGTH") or "0"
        if not _DIGITS.fullmatch(length):
            return b"", "a Content-Length that is not a short number", 400
        if int(length) > MAX_BODY:
            return b"", "a body over 1 MB", 413
        timestamp = environ.get("HTTP_X_SLACK_REQUEST_TIMESTAMP")
        signature = environ.get("HTTP_X_SLACK_SIGNATURE")
        refused = unsigned(timestamp, signature)
        if refused:
            return b"", *refused
        body = environ["wsgi.input"].read(int(length))
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return body, "a body that is not UTF-8", 400
        if self.verifier is None or not self.verifier.is_valid(text, timestamp, signature):
            return body, NOT_SIGNED, 401
        content_type = (environ.get("CONTENT_TYPE") or "").split(";")[0].strip()
        try:
            parsed = parse_body(text, content_type)
        except (ValueError, RecursionError):  # json's errors are ValueErrors; deep nesting exhausts its recursion
            return body, "a signed body that is not valid JSON", 400
        problem = shape_problem(parsed)
        if problem:
            return body, problem, 400
        if not self._first_delivery(signature or "", int(timestamp or 0)):
            return body, "a signed request sent again; answered the first time", 200
        return body, None, 200

    def _first_delivery(self, signature: str, timestamp: int) -> bool:
        """Whether this is the first delivery of the request; True also when the store cannot tell in time."""
        try:
            return self.seen.first_delivery(signature, timestamp + FRESH_SECONDS)
        except StoreError as exc:  # busy past STORE_WAIT, read-only, or full: an answer beats none
            log.warning("handled a signed request without the replay check: %s", exc)
            return True


def unsigned(timestamp: str | None, signature: str | None) -> tuple[str, int] | None:
    """What is wrong with a request's signature headers, with the status to answer (None: nothing), read before
    its body: a request without a signature, or with a timestamp that is not a short number or not fresh, is
    refused before the body arrives (bot.slack.http_server) and before it is read (here)."""
    if timestamp is not None and not _DIGITS.fullmatch(timestamp):
        return "a request timestamp that is not a short number", 400
    if not (timestamp and signature) or abs(time.time() - int(timestamp)) > FRESH_SECONDS:
        return NOT_SIGNED, 401
    return None


def _not_found(start_response: StartResponse) -> list[bytes]:
    """404, and no log line: a port open to the internet is probed all day."""
    data = b"not found"
    start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(data)))])
    return [data]


def _refuse(environ: dict[str, Any], start_response: StartResponse, status: int, problem: str) -> list[bytes]:
    """One log line, and the problem as the answer's body (none for a replay, which Slack takes as delivered)."""
    log.warning("refused a request from %s: %s", environ.get("REMOTE_ADDR", "?"), problem)
    data = b"" if status == 200 else problem.encode("utf-8")
    start_response(f"{status} {HTTPStatus(status).phrase}",
                   [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(data)))])
    return [data]


# The fields the listeners and bolt's matchers read, where they sit: text, an object, or a list of objects.
_TEXT = ("type", "command", "text", "response_url", "channel_id", "user_id", "trigger_id", "action_id", "callback_id")
_EVENT_TEXT = ("type", "user", "channel", "ts", "thread_ts", "text", "tab")
_ACTION_TEXT = ("type", "action_id", "block_id", "value")
_OBJECTS = ("event", "view", "team", "container", "enterprise", "message")
_LISTS = ("actions", "authorizations")


def shape_problem(payload: object) -> str | None:
    """What makes a signed payload one the listeners cannot read (None: nothing), so it is refused before
    bolt dispatches it: a wrong shape found later fails on a worker thread, after the request was acknowledged."""
    if not isinstance(payload, dict):
        return "a signed body that is not a JSON object"
    wrong = [key for key in _TEXT if not _is(payload.get(key), str)]
    wrong += [key for key in _OBJECTS if not _is(payload.get(key), dict)]
    wrong += [key for key in _LISTS if payload.get(key) is not None and not _objects(payload[key])]
    if not wrong:
        event = payload.get("event") or {}
        wrong += [f"event.{key}" for key in _EVENT_TEXT if not _is(event.get(key), str)]
        wrong += [f"actions.{key}" for action in payload.get("actions") or [] for key in _ACTION_TEXT
                  if not _is(action.get(key), str)]
    return f"a signed body with fields of the wrong shape: {', '.join(sorted(set(wrong)))}" if wrong else None


def _is(value: object, kind: type) -> bool:
    """Absent or null (Slack sends "enterprise": null), or a `kind`."""
    return value is None or isinstance(value, kind)


def _objects(value: object) -> bool:
    """A non-empty list of JSON objects."""
    return isinstance(value, list) and bool(value) and all(isinstance(item, dict) for item in value)
