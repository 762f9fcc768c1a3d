"""Log records on stderr: one line each for the commands a person runs, timestamped for `serve`, and every
record masked on its way out, whichever logger made it."""
from __future__ import annotations

import logging

from store.text.safe import neutralize

HANDLER_NAME = "prdigest"
SERVE_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_TRACEBACKS = logging.Formatter()


class MaskSecrets(logging.Filter):
    """Masks a record in place through the one sanitizer: its message with its arguments, its traceback and its
    stack, so that an exception whose text holds a token (slack_sdk's quotes Slack's whole reply) logs none.

    It sits on the root logger's handlers, where every library's records arrive (bolt's, slack_sdk's,
    waitress's, httpx's, openai's): a filter on a logger would see only the records made by that logger."""

    def filter(self, record: logging.LogRecord) -> bool:
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


def log_to_stderr(level: int = logging.WARNING, formatter: logging.Formatter | None = None) -> None:
    """Records of `level` and above on stderr, written by `formatter` (one line each by default); called again,
    it changes both. Where the host process set up logging already (a test runner), its handlers are kept
    and its level too; every handler of the root logger masks what it writes either way."""
    root = logging.getLogger()
    if not root.handlers:
        stderr = logging.StreamHandler()
        stderr.set_name(HANDLER_NAME)
        root.addHandler(stderr)
    for handler in root.handlers:
        if handler.get_name() == HANDLER_NAME:
            handler.setFormatter(formatter or OneLine())
            root.setLevel(level)
        if MASK not in handler.filters:
            handler.addFilter(MASK)
