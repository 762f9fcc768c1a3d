"""Release threads inside `serve`: each release published since a channel subscribed, posted once it is mapped.

A release's thread is a post like a daily report's, keyed by the release's tag,
so it goes through the same claims, leases and read-back: each release is posted
exactly once across restarts and replicas.
"""
from __future__ import annotations

import logging
from dataclasses import asdict
from typing import Any

from slack_sdk import WebClient

from bot.messages.releases import release_thread
from bot.runtime import Runtime
from bot.slack.daily import DailyPoster, Outcome, Pacer
from store.days import local_day
from store.report.release import load_release
from store.tables.posts import PostKey
from store.tables.releases import Release, due_releases
from store.tables.subscriptions import RELEASES, all_subscriptions

log = logging.getLogger(__name__)


class ReleasePosts:
    def __init__(self, runtime: Runtime, client: WebClient, pacer: Pacer | None = None) -> None:
        self.runtime = runtime
        self.poster = DailyPoster(client, runtime, pacer)

    def run(self) -> None:
        """Post every subscribed channel the threads of the releases published since it subscribed."""
        db = self.runtime.db
        for sub in all_subscriptions(db, RELEASES):
            try:
                for release in due_releases(db, sub.channel, sub.repo, sub.areas, sub.created_at):
                    outcome = post_release(self.poster, sub.channel, release, sub.areas)
                    log.info("release %s of %s to %s: %s", release.tag, sub.repo, sub.channel, outcome.describe())
            except Exception as exc:  # one channel's trouble must not stop the others; the next tick retries
                log.warning("release threads of %s to %s failed, retrying at the next tick: %s", sub.repo, sub.channel, exc)


def post_release(poster: DailyPoster, channel: str, release: Release, areas: tuple[str, ...] = ()) -> Outcome:
    """Post the mapped `release`'s thread to `channel` (only its PRs in `areas`, when it names any), exactly once:
    the parent holds its counts and highlights, the replies its PRs by area. Nothing is posted when none is in
    the areas."""
    runtime = poster.runtime
    tz = runtime.settings.timezone
    key = PostKey.of(channel, release.repo, local_day(release.published_at, tz), areas, release=release.tag)

    def plan() -> list[dict[str, Any]]:
        found = load_release(runtime.db, release, tz).in_areas(key.areas)
        if not found.report.prs:
            return []
        scope = f"in {', '.join(key.areas)}" if key.areas else None
        return [asdict(message) for message in release_thread(found, tz, scope)]

    return poster.send(key, plan)
