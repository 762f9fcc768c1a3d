"""Release threads inside `serve`: each release published since a subscription began, posted once it is mapped;
and to a person subscribed to their own PRs (my-prs), a direct message for each release that ships some of them.

A release's thread is a post like a report's (kind `releases`, keyed by the release's tag), so it goes
through the same claims, leases and read-back: each release is posted exactly once across restarts and
replicas, to a channel or to a person by direct message, with the PRs the subscription's filter keeps. A
person's message is a post of kind `my-prs` keyed by the tag in the same way.
"""
from __future__ import annotations

import logging
from dataclasses import asdict
from typing import Any

from bot.messages.blocks import filter_scope
from bot.messages.releases import release_thread, yours_shipped_message
from bot.runtime import Runtime
from bot.slack.daily import DailyPoster, Outcome, Pacer, new_owner
from bot.slack.workspaces import Workspaces, each_workspace
from store.days import local_day
from store.report.release import load_release
from store.subscription.cadence import MY_PRS, RELEASES
from store.tables.posts import PostKey
from store.tables.releases import Release, due_releases
from store.tables.subscriptions import Subscription, all_subscriptions, chosen_by

log = logging.getLogger(__name__)


class ReleasePosts:
    """Each workspace's release subscriptions, posted with that workspace's bot token."""

    def __init__(self, runtime: Runtime, workspaces: Workspaces, pacer: Pacer | None = None) -> None:
        self.runtime = runtime
        self.workspaces = workspaces
        self.pacer = pacer or Pacer(runtime.settings.post_pace)
        self.owner = new_owner()

    def run(self) -> None:
        """Post every release subscription the threads of the releases published since it began, and every
        my-prs subscription the releases since then that shipped the person's PRs."""
        db = self.runtime.db
        for client, mine in each_workspace(self.workspaces, all_subscriptions(db, (RELEASES, MY_PRS))):
            poster = DailyPoster(client, self.runtime, self.pacer, self.owner)
            for sub in mine:
                if chosen_by(db, sub) is None:
                    continue  # my-prs without a GitHub login: the releases wait until the person links one
                post = post_release if sub.slot == RELEASES else post_shipped
                try:
                    for release in due_releases(db, sub.team, sub.channel, sub.repo, sub.filter.text, sub.created_at,
                                                sub.slot):
                        outcome = post(poster, sub, release)
                        log.info("release %s of %s to %s: %s", release.tag, sub.repo, sub.channel, outcome.describe())
                except Exception as exc:  # one channel's trouble must not stop the others; the next tick retries
                    log.warning("release posts of %s to %s failed, retrying at the next tick: %s", sub.repo,
                                sub.channel, exc)


def _key(poster: DailyPoster, sub: Subscription, release: Release) -> PostKey:
    day = local_day(release.published_at, poster.runtime.settings.timezone)
    return PostKey.of(sub.channel, sub.repo, day, sub.filter.text, kind=sub.slot, release=release.tag, team=sub.team)


def post_release(poster: DailyPoster, sub: Subscription, release: Release) -> Outcome:
    """Post the mapped `release`'s thread for `sub`, exactly once: the parent holds its counts and highlights,
    the replies its PRs by area, only those the subscription's filter keeps. Nothing is posted when it keeps none."""
    runtime = poster.runtime
    settings = runtime.settings
    key = _key(poster, sub, release)

    def plan() -> list[dict[str, Any]]:
        rule = chosen_by(runtime.db, sub)
        found = load_release(runtime.db, release, settings.timezone)
        if rule is None or not rule.everything:
            found = found.keeping(lambda pr: rule is not None and rule.keeps(pr, settings.bots))
        if not found.report.prs:
            return []
        return [asdict(message) for message in release_thread(found, settings.timezone, filter_scope(sub.filter))]

    return poster.send(key, plan)


def post_shipped(poster: DailyPoster, sub: Subscription, release: Release) -> Outcome:
    """Tell the person of a my-prs subscription, once, which of their PRs the mapped `release` shipped: those it
    shipped first (a fix a patch release shipped is not news again in the next minor release). Nothing is sent
    when it ships none of theirs."""
    runtime = poster.runtime
    settings = runtime.settings

    def plan() -> list[dict[str, Any]]:
        rule = chosen_by(runtime.db, sub)
        if rule is None:
            return []
        found = load_release(runtime.db, release, settings.timezone).keeping(lambda pr: rule.keeps(pr, settings.bots))
        mine = sorted((pr for pr in found.report.prs if pr.number not in found.shipped_before), key=lambda pr: pr.number)
        return [asdict(yours_shipped_message(release, mine, settings.timezone))] if mine else []

    return poster.send(_key(poster, sub, release), plan)
