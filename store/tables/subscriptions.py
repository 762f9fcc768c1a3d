"""What channels and people follow: a repository, through a filter, on a cadence.

A subscription belongs to a channel, or to a person (its `channel` is then their Slack user ID, and it is
delivered by direct message), of one workspace (store.tables.teams). Each has at most one subscription to a
repository per slot (the daily report, the weekly report, live alerts, their own PRs, release threads);
subscribing again updates it.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time
from typing import Any

from sqlite_utils import Database

from store.days import from_utc_text, to_utc_text
from store.db import write_transaction
from store.subscription.cadence import DAILY, EVERY_DAY, LIVE, MY_PRS, RELEASES, WEEKLY, Cadence
from store.subscription.filter import EVERYTHING, Filter, load_filter
from store.tables.people import github_login
from store.tables.posts import PostKey
from store.tables.teams import NO_TEAM, OF_TEAM, Team
from store.text.patterns import LazyPattern

# Slack user IDs: U… (W… in Enterprise Grid). Channels are C…, G… and D….
_USER = LazyPattern(r"^[UW][A-Z0-9]{2,}$")
SLOTS = (DAILY, WEEKLY, LIVE, MY_PRS, RELEASES)


def is_user(channel: str) -> bool:
    """Whether a subscription's `channel` is a person, who gets it by direct message."""
    return bool(_USER.match(channel))


@dataclass(frozen=True)
class Subscription:
    channel: str  # a channel ID, or a user ID for a personal subscription
    repo: str
    created_at: datetime
    filter: Filter = EVERYTHING
    cadence: Cadence = EVERY_DAY
    created_by: str | None = None
    team: Team = NO_TEAM  # the workspace of the channel or person

    @property
    def slot(self) -> str:
        return self.cadence.slot

    @property
    def live(self) -> bool:
        """Whether it sends PRs one look at a time (live alerts, one's own PRs) rather than reports or release threads."""
        return self.slot in (LIVE, MY_PRS)

    @property
    def personal(self) -> bool:
        return is_user(self.channel)


def report_key(sub: Subscription, last: date) -> PostKey:
    """The post of the subscription's report whose last day is `last`."""
    return PostKey.of(sub.channel, sub.repo, last, sub.filter.text, kind=sub.slot, team=sub.team)


def chosen_by(db: Database, sub: Subscription) -> Filter | None:
    """The filter every PR the subscription sends passes, whatever sends it (a report, an alert, a direct
    message, a dry run): its own, and for my-prs the person's GitHub login too; None while my-prs has no login."""
    if sub.slot != MY_PRS:
        return sub.filter
    login = github_login(db, sub.team, sub.channel)
    return sub.filter.with_author(login) if login else None


def _from_row(row: dict[str, Any]) -> Subscription:
    return Subscription(
        channel=row["channel"],
        repo=row["repo"],
        created_at=from_utc_text(row["created_at"]),
        filter=load_filter(row["filter"]),
        cadence=Cadence(row["cadence"], time.fromisoformat(row["post_at"]), row["weekday"]),
        created_by=row["created_by"],
        team=Team(row["team_id"], row["enterprise_id"]),
    )


def subscribe(
    db: Database, team: Team, channel: str, repo: str, filter: Filter, cadence: Cadence, user: str | None, now: datetime
) -> tuple[Subscription, bool]:
    """Create or update the subscription of the team's `channel` to `repo` in the cadence's slot; True when it is new.

    An update keeps the original creation time, which decides the first report due and the first PR
    a live subscription announces.
    """
    with write_transaction(db):
        existing = get_subscription(db, team, channel, repo, cadence.slot)
        created_at = existing.created_at if existing else now
        row = {
            **team.columns,
            "channel": channel,
            "repo": repo,
            "mode": cadence.slot,
            "cadence": cadence.name,
            "filter": filter.text,
            "post_at": cadence.post_at.strftime("%H:%M"),
            "weekday": cadence.weekday,
            "created_by": existing.created_by if existing else user,
            "created_at": to_utc_text(created_at),
        }
        db.table("subscriptions").insert(row, replace=True)
    return _from_row(row), existing is None


def get_subscription(db: Database, team: Team, channel: str, repo: str, slot: str = DAILY) -> Subscription | None:
    rows = list(db["subscriptions"].rows_where(f"{OF_TEAM} and channel = ? and repo = ? and mode = ?", [*team.key, channel, repo, slot]))
    return _from_row(rows[0]) if rows else None


def unsubscribe(
    db: Database, team: Team, channel: str, repo: str | None = None, slot: str | None = None
) -> list[Subscription]:
    """Remove the subscriptions of the team's `channel` (to `repo`, in `slot`, when given); returns those removed."""
    where, args = f"{OF_TEAM} and channel = ?", [*team.key, channel]
    if repo is not None:
        where, args = where + " and repo = ?", [*args, repo]
    if slot is not None:
        where, args = where + " and mode = ?", [*args, slot]
    with write_transaction(db):
        removed = [_from_row(row) for row in db["subscriptions"].rows_where(where, args, order_by=_ORDER)]
        db.execute(f"delete from subscriptions where {where}", args)
    return removed


# daily, weekly, live, my-prs: the order subscriptions are listed in
_ORDER = "repo, case mode when 'daily' then 0 when 'weekly' then 1 when 'live' then 2 else 3 end"


def channel_subscriptions(db: Database, team: Team, channel: str) -> list[Subscription]:
    rows = db["subscriptions"].rows_where(f"{OF_TEAM} and channel = ?", [*team.key, channel], order_by=_ORDER)
    return [_from_row(row) for row in rows]


def team_subscriptions(db: Database, team: Team) -> list[Subscription]:
    """Every subscription of the team's channels and people."""
    return [_from_row(row) for row in db["subscriptions"].rows_where(OF_TEAM, team.key, order_by=f"channel, {_ORDER}")]


def all_subscriptions(db: Database, slots: tuple[str, ...] = SLOTS) -> list[Subscription]:
    """The subscriptions of every workspace in these slots, a workspace's together: what the scheduler sends."""
    marks = ", ".join("?" * len(slots))
    rows = db["subscriptions"].rows_where(f"mode in ({marks})", list(slots),
                                          order_by=f"enterprise_id, team_id, channel, {_ORDER}")
    return [_from_row(row) for row in rows]
