"""Log records on stderr: one line each for the commands a person runs, timestamped for `serve`, or one JSON
object a line (PRDIGEST_LOG_FORMAT=json); every record masked on its way out, whichever logger made it, and every
record made while a Slack request is answered carries that request's fields."""
from __future__ import annotations

import contextvars
import logging
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from store.text.safe import neutralize, to_json

HANDLER_NAME = "prdigest"
SERVE_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_TRACEBACKS = logging.Formatter()
# The fields of a request, in the order a JSON line gives them.
REQUEST_FIELDS = ("request_id", "team", "channel", "kind", "latency_ms", "outcome")


@dataclass
class RequestLog:
    """One Slack request being answered: what the log says of it, filled in as the answer learns it."""

    kind: str  # a command's word ("today", "area"), "question", a button's or a shortcut's name
    team: str | None = None
    channel: str | None = None
    outcome: str = "ok"  # "ok", "refused" (bad input, said to the person) or "failed" (an error, logged)
    request_id: str = field(default_factory=lambda: secrets.token_hex(6))
    started: float = field(default_factory=time.monotonic)

    def fields(self) -> dict[str, Any]:
        return {"request_id": self.request_id, "team": self.team, "channel": self.channel, "kind": self.kind}


_REQUEST: contextvars.ContextVar[RequestLog | None] = contextvars.ContextVar("prdigest_request", default=None)


def current_request() -> RequestLog | None:
    """The request this thread is answering, for a listener to fill in what it learns (its kind, its outcome)."""
    return _REQUEST.get()


@contextmanager
def answering(request: RequestLog) -> Iterator[RequestLog]:
    """Every record made inside carries the request's fields; at the end, one record says how it went and how
    long it took since it arrived. An exception is logged as the request's failure, not raised."""
    token = _REQUEST.set(request)
    try:
        yield request
    except Exception:
        request.outcome = "failed"
        logging.getLogger(__name__).exception("answering a Slack request failed")
    finally:
        latency = round((time.monotonic() - request.started) * 1000)
        logging.getLogger(__name__).info(
            "answered %s: %s in %d ms", request.kind, request.outcome, latency,
            extra={"latency_ms": latency, "outcome": request.outcome},
        )
        _REQUEST.reset(token)


class MaskSecrets(logging.Filter):
    """Masks a record in place through the one sanitizer: its message with its arguments, its traceback and its
    stack, so that an exception whose text holds a token (slack_sdk's quotes Slack's whole reply) logs none.

    It sits on the root logger's handlers, where every library's records arrive (bolt's, slack_sdk's,
    waitress's, httpx's, openai's): a filter on a logger would see only the records made by that logger."""

    def filter(self, record: logging.LogRecord) -> bool:
        request = _REQUEST.get()
        for name, value in (request.fields() if request else {}).items():
            if not hasattr(record, name):
                setattr(record, name, value)
        for name in REQUEST_FIELDS:  # a channel or a command's word is text from outside
            value = getattr(record, name, None)
            if isinstance(value, str):
                setattr(record, name, neutralize(value))
        try:
            message = record.getMessage()
        except Exception:  # arguments that do not fit the format: shown as they came, masked all the same
            message = f"{record.msg} {record.args}"
        record.msg, record.args = neutralize(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = _TRACEBACKS.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = neutralize(record.exc_text)
        if record.stack_info:
            record.stack_info = neutralize(record.stack_info)
        return True


MASK = MaskSecrets()


class OneLine(logging.Formatter):
    """Log records as one line each: what failed and why, never a traceback."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            message += f" ({type(exc).__name__}: {exc})"
        # The exception's own text is read here, after the filter: it is masked here too.
        return neutralize(f"prdigest: {record.levelname.lower()}: " + " ".join(message.split()))


class JsonLines(logging.Formatter):
    """One JSON object a line: time, level, logger, event, the request's fields when it was made answering one,
    and the error of a record with an exception (one line, never a traceback)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": record.getMessage(),
        }
        line.update({name: getattr(record, name) for name in REQUEST_FIELDS if getattr(record, name, None) is not None})
        if record.exc_info and record.exc_info[1] is not None:
            line["error"] = f"{type(record.exc_info[1]).__name__}: {record.exc_info[1]}"
        return to_json(line)  # masked again, as every output is: the exception's text is read only here


JSON = "json"  # PRDIGEST_LOG_FORMAT's value for JSON lines (bot.config checks it)


class _Chosen:
    """What was asked for last: a change of format keeps the formatter a person reads, for when it changes back."""

    format = "text"
    formatter: logging.Formatter | None = None


def error_line(message: str) -> str:
    """The line a command's failure ends with on stderr, as a record of the chosen format would be: JSON lines
    stay JSON to the last line, whatever logging handlers the host process set up."""
    if _Chosen.format != JSON:
        return f"prdigest: error: {message}"
    record = logging.makeLogRecord({"name": "prdigest", "levelname": "ERROR", "levelno": logging.ERROR, "msg": message})
    MASK.filter(record)
    return JsonLines().format(record)


def use_log_format(name: str) -> None:
    """Write records as `name` says from now on: "text" (the default), or "json" for a log collector."""
    _Chosen.format = name
    log_to_stderr(logging.getLogger().level, _Chosen.formatter)


def log_to_stderr(level: int = logging.WARNING, formatter: logging.Formatter | None = None) -> None:
    """Records of `level` and above on stderr, written by `formatter` (one line each by default), or as JSON
    lines whatever the formatter once use_log_format("json") was called; called again, it changes both. Where
    the host process set up logging already (a test runner), its handlers are kept and its level too; every
    handler of the root logger masks what it writes either way."""
    _Chosen.formatter = formatter
    root = logging.getLogger()
    if not root.handlers:
        stderr = logging.StreamHandler()
        stderr.set_name(HANDLER_NAME)
        root.addHandler(stderr)
    for handler in root.handlers:
        if handler.get_name() == HANDLER_NAME:
            handler.setFormatter(JsonLines() if _Chosen.format == JSON else formatter or OneLine())
            root.setLevel(level)
        if MASK not in handler.filters:
            handler.addFilter(MASK)
