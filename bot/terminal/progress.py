"""Ingest progress on a terminal: one status line, redrawn in place."""
from __future__ import annotations

import sys
from typing import TextIO

from store.sources.ingest import Status


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

    def clear(self) -> None:
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False

    def _draw(self, text: str) -> None:
        if not self.enabled:
            return
        # GitHub's messages reach this line; keep escape sequences out of the terminal.
        printable = "".join(ch for ch in text if ch.isprintable())
        self.stream.write("\r\x1b[K" + printable)
        self.stream.flush()
        self._drawn = True
