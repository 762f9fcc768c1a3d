"""Channels that receive the daily report: which repository, which areas, at what local time."""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, time
from typing import Any, Sequence

from sqlite_utils import Database

from store.db import write_transaction
from store.days import from_utc_text, to_utc_text

DEFAULT_POST_AT = time(9, 0)


@dataclass(frozen=True)
class Subscription:
    channel: str
    repo: str
    areas: tuple[str, ...]  # empty: every area
    post_at: time  # local time in PRDIGEST_TIMEZONE
    created_at: datetime
    created_by: str | None = None


def _from_row(row: dict[str, Any]) -> Subscription:
    return Subscription(
        channel=row["channel"],
        repo=row["repo"],
        areas=tuple(json.loads(row["areas"] or "[]")),
        post_at=time.fromisoformat(row["post_at"]),
        created_at=from_utc_text(row["created_at"]),
        created_by=row["created_by"],
    )


def subscribe(
    db: Database, channel: str, repo: str, areas: Sequence[str], post_at: time, user: str | None, now: datetime
) -> tuple[Subscription, bool]:
    """Create or update the channel's subscription to `repo`; True when it is new.

    An update keeps the original creation time, which decides the first day a report is due.
    """
    with write_transaction(db):
        existing = get_subscription(db, channel, repo)
        created_at = existing.created_at if existing else now
        db["subscriptions"].insert(
            {
                "channel": channel,
                "repo": repo,
                "areas": json.dumps(list(areas)),
                "post_at": post_at.strftime("%H:%M"),
                "created_by": existing.created_by if existing else user,
                "created_at": to_utc_text(created_at),
            },
            replace=True,
        )
    return get_subscription(db, channel, repo), existing is None  # type: ignore[return-value]


def get_subscription(db: Database, channel: str, repo: str) -> Subscription | None:
    rows = list(db["subscriptions"].rows_where("channel = ? and repo = ?", [channel, repo]))
    return _from_row(rows[0]) if rows else None


def unsubscribe(db: Database, channel: str) -> list[str]:
    """Remove every subscription of the channel; returns the repositories it followed."""
    with write_transaction(db):
        repos = [sub.repo for sub in channel_subscriptions(db, channel)]
        db.execute("delete from subscriptions where channel = ?", [channel])
    return repos


def channel_subscriptions(db: Database, channel: str) -> list[Subscription]:
    return [_from_row(row) for row in db["subscriptions"].rows_where("channel = ?", [channel], order_by="repo")]


def all_subscriptions(db: Database) -> list[Subscription]:
    return [_from_row(row) for row in db["subscriptions"].rows_where(order_by="channel, repo")]
