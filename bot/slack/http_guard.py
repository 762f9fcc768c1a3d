"""The door of `serve --http`: a request reaches bolt only signed, fresh, well-formed and seen for the first time.

The signature is checked over the raw body before anything parses it, so
whoever can reach the port cannot make the app parse (and log tracebacks for)
arbitrary bytes; a signed request sent again is answered once.
"""
from __future__ import annotations

import io
import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from slack_bolt.request.internals import parse_body
from slack_sdk.signature import SignatureVerifier

log = logging.getLogger(__name__)

# Slack's own limit on a request's age; a replay older than this fails the signature check anyway.
FRESH_SECONDS = 5 * 60

StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


class SignedRequestsOnly:
    """WSGI middleware in front of bolt's handler for POSTs to `path`."""

    def __init__(self, inner: WsgiApp, signing_secret: str, path: str) -> None:
        self.inner = inner
        self.path = path
        self.verifier = SignatureVerifier(signing_secret)
        self._seen: dict[str, float] = {}  # signature -> when it stops being fresh
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("REQUEST_METHOD") != "POST" or environ.get("PATH_INFO") != self.path:
            return self.inner(environ, start_response)
        body, problem, status = self._check(environ)
        if problem:
            log.warning("refused a request from %s: %s", environ.get("REMOTE_ADDR", "?"), problem)
            return _answer(start_response, status, "" if status == 200 else problem)
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        return self.inner(environ, start_response)

    def _check(self, environ: dict[str, Any]) -> tuple[bytes, str | None, int]:
        """The body, and what is wrong with the request (None: nothing) with the status to answer."""
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return b"", "a Content-Length that is not a number", 400
        body = environ["wsgi.input"].read(length) if length > 0 else b""
        timestamp = environ.get("HTTP_X_SLACK_REQUEST_TIMESTAMP")
        signature = environ.get("HTTP_X_SLACK_SIGNATURE")
        if timestamp is not None and not timestamp.isdigit():
            return body, "a request timestamp that is not a number", 400
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return body, "a body that is not UTF-8", 400
        if not self.verifier.is_valid(text, timestamp, signature):
            return body, "no valid signature, or a stale timestamp", 401
        content_type = (environ.get("CONTENT_TYPE") or "").split(";")[0].strip()
        try:
            parsed = parse_body(text, content_type)
        except ValueError:  # json's errors are ValueErrors
            return body, "a signed body that is not valid JSON", 400
        if not isinstance(parsed, dict):
            return body, "a signed body that is not a JSON object", 400
        if self._replayed(signature or "", int(timestamp or 0)):
            return body, "a signed request sent again; answered the first time", 200
        return body, None, 200

    def _replayed(self, signature: str, timestamp: int) -> bool:
        now = time.time()
        with self._lock:
            for seen, until in list(self._seen.items()):
                if until < now:
                    del self._seen[seen]
            if signature in self._seen:
                return True
            self._seen[signature] = timestamp + FRESH_SECONDS
            return False


def _answer(start_response: StartResponse, status: int, text: str) -> list[bytes]:
    data = text.encode("utf-8")
    reason = {200: "OK", 400: "Bad Request", 401: "Unauthorized"}[status]
    start_response(f"{status} {reason}", [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(data)))])
    return [data]
