"""Channels that follow repositories: the daily report at a local time, live alerts as PRs merge, or a thread
for each new release."""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, time
from typing import Any

from sqlite_utils import Database

from store.days import from_utc_text, to_utc_text
from store.db import write_transaction

DEFAULT_POST_AT = time(9, 0)
# daily: yesterday's report at post_at; live: each PR soon after it is stored; releases: each new release's thread
DAILY, LIVE, RELEASES = "daily", "live", "releases"


@dataclass(frozen=True)
class Subscription:
    channel: str
    repo: str
    areas: tuple[str, ...]  # empty: every area
    post_at: time  # local time in PRDIGEST_TIMEZONE (daily only)
    created_at: datetime
    created_by: str | None = None
    mode: str = DAILY  # DAILY, LIVE or RELEASES

    @property
    def live(self) -> bool:
        return self.mode == LIVE


def _from_row(row: dict[str, Any]) -> Subscription:
    return Subscription(
        channel=row["channel"],
        repo=row["repo"],
        areas=tuple(json.loads(row["areas"] or "[]")),
        post_at=time.fromisoformat(row["post_at"]),
        created_at=from_utc_text(row["created_at"]),
        created_by=row["created_by"],
        mode=row["mode"],
    )


def subscribe(
    db: Database,
    channel: str,
    repo: str,
    areas: Sequence[str],
    post_at: time,
    user: str | None,
    now: datetime,
    mode: str = DAILY,
) -> tuple[Subscription, bool]:
    """Create or update the channel's subscription to `repo` in `mode`; True when it is new.

    An update keeps the original creation time, which decides the first day a report is
    due and the first PR a live subscription announces.
    """
    with write_transaction(db):
        existing = get_subscription(db, channel, repo, mode)
        created_at = existing.created_at if existing else now
        row = {
            "channel": channel,
            "repo": repo,
            "mode": mode,
            "areas": json.dumps(list(areas)),
            "post_at": post_at.strftime("%H:%M"),
            "created_by": existing.created_by if existing else user,
            "created_at": to_utc_text(created_at),
        }
        db.table("subscriptions").insert(row, replace=True)
    return _from_row(row), existing is None


def get_subscription(db: Database, channel: str, repo: str, mode: str = DAILY) -> Subscription | None:
    rows = list(db["subscriptions"].rows_where("channel = ? and repo = ? and mode = ?", [channel, repo, mode]))
    return _from_row(rows[0]) if rows else None


def unsubscribe(db: Database, channel: str, repo: str | None = None, mode: str | None = None) -> list[Subscription]:
    """Remove the channel's subscriptions (to `repo`, in `mode`, when given); returns those removed."""
    where, args = "channel = ?", [channel]
    if repo is not None:
        where, args = where + " and repo = ?", [*args, repo]
    if mode is not None:
        where, args = where + " and mode = ?", [*args, mode]
    with write_transaction(db):
        removed = [_from_row(row) for row in db["subscriptions"].rows_where(where, args, order_by="repo, mode")]
        db.execute(f"delete from subscriptions where {where}", args)
    return removed


def channel_subscriptions(db: Database, channel: str) -> list[Subscription]:
    return [_from_row(row) for row in db["subscriptions"].rows_where("channel = ?", [channel], order_by="repo, mode")]


def all_subscriptions(db: Database, mode: str | None = None) -> list[Subscription]:
    where, args = ("mode = ?", [mode]) if mode else (None, [])
    return [_from_row(row) for row in db["subscriptions"].rows_where(where, args, order_by="channel, repo, mode")]
