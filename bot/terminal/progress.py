"""Ingest progress on a terminal: one status line, redrawn in place."""
from __future__ import annotations

import sys
from typing import TextIO

from store.sources.ingest import Status
from store.text.errors import one_line


class TerminalProgress:
    """One status line on stderr, redrawn in place; silent when stderr is not a terminal (cron, logs, pipes)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self._drawn = False

    def __call__(self, status: Status) -> None:
        waits = f", {status.rate_limit_waits} rate-limit waits" if status.rate_limit_waits else ""
        self._draw(f"{status.repo}: {status.done}/{status.total} PRs, {status.requests} requests{waits}")

    def waiting(self, seconds: float, why: str) -> None:
        self._draw(f"waiting {seconds:.0f}s: {why}")

    def warn(self, text: str) -> None:
        """A warning, terminal or not, on a line of its own: the status line is drawn again after it."""
        self.clear()
        self.stream.write(f"prdigest: warning: {one_line(text, limit=1000)}\n")
        self.stream.flush()

    def clear(self) -> None:
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False

    def _draw(self, text: str) -> None:
        if not self.enabled:
            return
        # GitHub's messages reach this line: one line, no escape sequences, no secrets, like every error.
        self.stream.write("\r\x1b[K" + one_line(text))
        self.stream.flush()
        self._drawn = True
