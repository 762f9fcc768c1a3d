"""The clock inside `prdigest serve`: ingest every few minutes, send live alerts and new releases' threads, post
each report at its time.

When a report is due comes from its subscription's cadence (store.subscription.cadence);
whether it was posted is read from the store, so a restart (or a crash in the
middle of a thread) picks up exactly where it stopped.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from bot.runtime import Runtime
from bot.slack.daily import DailyPoster, Pacer
from bot.slack.live import LiveAlerts
from bot.slack.releases import ReleasePosts
from bot.slack.workspaces import Workspaces, each_workspace
from store.subscription.cadence import DAILY, WEEKLY
from store.tables.posts import find_post
from store.tables.subscriptions import Subscription, all_subscriptions, report_key
from store.tables.teams import Team

log = logging.getLogger(__name__)

# After a failed post, wait this long before trying the channel again.
RETRY_AFTER = timedelta(minutes=5)
# An ingest this recent counts as fresh enough to post from.
FRESH = timedelta(minutes=1)


class Scheduler:
    """One tick a minute: poll ingestion when due, send live alerts and release threads, then post every report
    that is due and not posted."""

    def __init__(
        self,
        runtime: Runtime,
        workspaces: Workspaces,
        ingest: Callable[[str], None] | None = None,
        pacer: Pacer | None = None,
        ingested: Callable[[str], None] | None = None,
    ) -> None:
        self.runtime = runtime
        self.workspaces = workspaces
        self.ingest = ingest
        self.ingested = ingested  # told of each repository whose ingest went through (serve's readiness)
        self.pacer = pacer or Pacer(runtime.settings.post_pace)
        self.live = LiveAlerts(runtime, workspaces, self.pacer)
        self.releases = ReleasePosts(runtime, workspaces, self.pacer)
        self._ingested: dict[str, datetime] = {}
        self._retry_at: dict[tuple[Team, str, str, str], datetime] = {}

    def tick(self, now: datetime | None = None) -> None:
        now = now or datetime.now(UTC)
        self._poll(now)
        self.live.run(now)
        self.releases.run()
        subs = all_subscriptions(self.runtime.db, (DAILY, WEEKLY))
        for client, mine in each_workspace(self.workspaces, subs):
            poster = DailyPoster(client, self.runtime, self.pacer, self.live.owner)
            for sub in mine:
                self._report(poster, sub, now)

    def _report(self, poster: DailyPoster, sub: Subscription, now: datetime) -> None:
        """Post the subscription's report if one is due and not posted."""
        day = sub.cadence.due(now, self.runtime.settings.timezone, sub.created_at)
        key = (sub.team, sub.channel, sub.repo, sub.slot)
        if day is None or now < self._retry_at.get(key, now):
            return
        post = find_post(self.runtime.db, report_key(sub, day))
        if post is not None and post.finished:
            return
        self._refresh(sub.repo, now)
        try:
            outcome = poster.post(sub, day)
            if outcome.post is None:
                log.info("%s", outcome.describe())
            self._retry_at.pop(key, None)
        except Exception as exc:  # one channel's trouble must not stop the others
            log.warning("%s report of %s for %s to %s failed, retrying later: %s", sub.cadence.name, sub.repo, day,
                        sub.channel, exc)
            self._retry_at[key] = now + RETRY_AFTER

    def _poll(self, now: datetime) -> None:
        every = timedelta(minutes=self.runtime.settings.poll_minutes)
        for repo in self.runtime.settings.repos:
            last = self._ingested.get(repo)
            if last is None or now - last >= every:
                self._ingest(repo, now)

    def _refresh(self, repo: str, now: datetime) -> None:
        """Ingest right before posting, unless that just happened (or the repository is no longer configured)."""
        last = self._ingested.get(repo)
        if repo in self.runtime.settings.repos and (last is None or now - last > FRESH):
            self._ingest(repo, now)

    def _ingest(self, repo: str, now: datetime) -> None:
        if self.ingest is None:
            return
        self._ingested[repo] = now
        try:
            self.ingest(repo)
        except Exception as exc:  # GitHub down: post from what the store has
            log.warning("ingest of %s failed; reports use the store as it is: %s", repo, exc)
            return
        if self.ingested:
            self.ingested(repo)

    def run(self, stop: threading.Event, interval: float = 60.0) -> None:
        """Tick until `stop` is set; a failing tick is logged and the next one comes anyway."""
        while True:
            try:
                self.tick()
            except Exception:
                log.exception("scheduler tick failed")
            if stop.wait(interval):
                return
