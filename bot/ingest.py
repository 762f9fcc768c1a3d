"""The people-facing side of ingesting, for the terminal and Slack alike: a GitHub client from the settings, and result lines."""
from __future__ import annotations

from zoneinfo import ZoneInfo

from bot.config import Settings
from store.sources.github import GitHubClient, WaitHook, WarnHook
from store.sources.ingest import Ingested
from store.sources.releases import ReleasesIngested
from store.text.prose import plural


def github_client(
    settings: Settings, on_wait: WaitHook | None = None, max_wait: float | None = None, on_warning: WarnHook | None = None
) -> GitHubClient:
    """A client for the configured GitHub; `max_wait` shortens the longest rate-limit wait (PRDIGEST_GITHUB_MAX_WAIT)."""
    return GitHubClient(
        settings.github_api_url,
        settings.github_token,
        max_wait=settings.github_max_wait if max_wait is None else min(max_wait, settings.github_max_wait),
        on_wait=on_wait,
        on_warning=on_warning,
    )


def describe(done: Ingested, tz: ZoneInfo, requests: int) -> str:
    """The line a run prints per repository."""
    local = lambda moment: moment.astimezone(tz).strftime("%Y-%m-%d %H:%M")
    skipped = f", {done.skipped} skipped until a later run" if done.skipped else ""
    return (
        f"{done.repo}: {done.total} merged PRs from {local(done.window.start)} to {local(done.window.end)} "
        f"{done.window.end.astimezone(tz).tzname()}: {done.new} new, {done.updated} updated, "
        f"{done.unchanged} unchanged{skipped} ({requests} GitHub request{'' if requests == 1 else 's'})"
    )


def describe_releases(done: ReleasesIngested, requests: int) -> str:
    """The line a run prints per repository about its releases."""
    mapped = [
        f"{release.tag} ({plural(release.prs, 'PR')} since {release.previous or 'the first commit'})"
        for release in done.mapped
    ]
    news = f"{plural(done.new, 'new release')}" + (f"; mapped {', '.join(mapped)}" if mapped else "")
    missing = "".join(f"; {tag} not mapped ({problem})" for tag, problem in done.missing)
    return f"{done.repo}: {news}{missing} ({plural(requests, 'GitHub request')})"
