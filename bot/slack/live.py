"""Live alerts inside `serve`: each newly stored PR a subscription's filter keeps, posted once, soon after its ingest.

Every PR due at one look goes into one message, so a burst (a busy poll, the
catch-up after downtime) is one grouped alert rather than one per PR; a person
subscribed to their own PRs (my-prs) gets a direct message per PR. Posts go
through the daily poster's claims and read-back, so a PR is announced exactly
once across restarts and replicas. An alert then follows its PRs: when a model
summary (or anything else it shows) changes, the message is edited to match.
"""
from __future__ import annotations

import logging
import time
from dataclasses import asdict
from datetime import datetime, timedelta

from bot.messages.blocks import live_message
from bot.runtime import Runtime
from bot.slack.daily import DailyPoster, Pacer, new_owner
from bot.slack.workspaces import Workspaces, each_workspace
from store.days import local_day
from store.subscription.cadence import LIVE, MY_PRS
from store.tables.live import Keeps, Render, changed_since_sent, plan_alerts, unfinished
from store.tables.posts import record_messages
from store.tables.subscriptions import Subscription, all_subscriptions, chosen_by

log = logging.getLogger(__name__)

# An alert is kept in step with its PRs' summaries for this long after it went out.
FOLLOW_DAYS = 2


class LiveAlerts:
    """Each workspace's live subscriptions, sent with that workspace's bot token."""

    def __init__(self, runtime: Runtime, workspaces: Workspaces, pacer: Pacer | None = None) -> None:
        self.runtime = runtime
        self.workspaces = workspaces
        self.pacer = pacer or Pacer(runtime.settings.post_pace)
        self.owner = new_owner()

    def run(self, now: datetime) -> None:
        """Send every live subscription what is due, and bring recent alerts up to date."""
        subs = all_subscriptions(self.runtime.db, (LIVE, MY_PRS))
        for client, mine in each_workspace(self.workspaces, subs):
            poster = DailyPoster(client, self.runtime, self.pacer, self.owner)
            for sub in mine:
                try:
                    self._alert(poster, sub, now)
                    self._follow(poster, sub, now)
                except Exception as exc:  # one channel's trouble must not stop the others; the next tick retries
                    log.warning("live alerts of %s to %s failed, retrying at the next tick: %s", sub.repo, sub.channel, exc)

    def _alert(self, poster: DailyPoster, sub: Subscription, now: datetime) -> None:
        for key in unfinished(self.runtime.db, sub):  # a process died mid-send: finish its post first
            poster.send(key, list)
        keeps = self._keeps(sub)
        if keeps is None:
            return
        day = local_day(now, self.runtime.settings.timezone)
        posts = plan_alerts(
            self.runtime.db, sub, day, keeps, self._render(sub), poster.owner, self.runtime.settings.post_lease,
            time.time(),
        )
        for post in posts:
            poster.deliver(post)

    def _keeps(self, sub: Subscription) -> Keeps | None:
        rule = chosen_by(self.runtime.db, sub)
        if rule is None:
            return None
        bots = self.runtime.settings.bots
        return lambda pr: rule.keeps(pr, bots)

    def _render(self, sub: Subscription) -> Render:
        tz = self.runtime.settings.timezone
        return lambda prs: [asdict(live_message(prs, sub.filter, tz))]

    def _follow(self, poster: DailyPoster, sub: Subscription, now: datetime) -> None:
        since = local_day(now, self.runtime.settings.timezone) - timedelta(days=FOLLOW_DAYS)
        render = self._render(sub)
        for post, prs in changed_since_sent(self.runtime.db, sub, since):
            current = render(prs)
            if current == post.messages:
                continue
            message = current[0]
            assert post.parent_ts is not None, "changed_since_sent gives only posts done, so sent"
            room = poster.room(sub.team, sub.channel)
            poster.client.chat_update(channel=room, ts=post.parent_ts, text=message["text"], blocks=message["blocks"])
            record_messages(self.runtime.db, post, current)
            log.info("live alert %s follows its PRs' summaries", post.key.text)
