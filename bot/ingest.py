"""The people-facing side of ingesting: a GitHub client from the settings, progress on a terminal, result lines."""
from __future__ import annotations

import sys
from typing import TextIO
from zoneinfo import ZoneInfo

from bot.config import Settings
from store.github import GitHubClient, WaitHook
from store.ingest import Ingested, Status


def github_client(settings: Settings, on_wait: WaitHook | None = None) -> GitHubClient:
    return GitHubClient(
        settings.github_api_url,
        settings.github_token,
        max_wait=settings.github_max_wait,
        on_wait=on_wait,
    )


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


def describe(done: Ingested, tz: ZoneInfo, requests: int) -> str:
    """The line a run prints per repository."""
    local = lambda moment: moment.astimezone(tz).strftime("%Y-%m-%d %H:%M")  # noqa: E731
    return (
        f"{done.repo}: {done.total} merged PRs from {local(done.window.start)} to {local(done.window.end)} "
        f"{done.window.end.astimezone(tz).tzname()}: {done.new} new, {done.updated} updated, "
        f"{done.unchanged} unchanged ({requests} GitHub request{'' if requests == 1 else 's'})"
    )
