"""Live alerts: which newly stored PRs a channel is told about, each planned into exactly one post.

A live alert is a post of one message (see store.tables.posts), numbered per channel,
repository and day. Choosing its PRs, recording the post and marking the PRs as
alerted happen in one write transaction, so two processes never announce a PR twice.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from sqlite_utils import Database

from store.days import to_utc_text
from store.db import write_transaction
from store.model import PullRequest
from store.tables.posts import DailyPost, PostKey, claim_post, get_post
from store.tables.prs import get_prs
from store.tables.subscriptions import Subscription

# PRs merged this long before a live subscription began are old news, even when stored after it
# (a backfill of history, an import of last month's reports).
LOOKBACK = timedelta(days=1)

Render = Callable[[list[PullRequest]], list[dict[str, Any]]]


def due(db: Database, sub: Subscription) -> list[PullRequest]:
    """The PRs the subscription has not announced: stored since it began, in its areas, oldest merge first."""
    rows = db.execute(
        "select number from prs where repo = ? and merged_at >= ? and created_at >= ?"
        " and not exists (select 1 from live_alerts as a where a.channel = ? and a.repo = prs.repo"
        " and a.number = prs.number)",
        [sub.repo, to_utc_text(sub.created_at - LOOKBACK), to_utc_text(sub.created_at), sub.channel],
    )
    found = get_prs(db, sub.repo, [row[0] for row in rows])
    wanted = set(sub.areas)
    return sorted(
        (pr for pr in found.values() if not wanted or wanted & set(pr.areas)),
        key=lambda pr: (pr.merged_at, pr.number),
    )


def plan_alert(
    db: Database, sub: Subscription, day: date, render: Render, owner: str, lease: float, now: float
) -> DailyPost | None:
    """The next live post of the subscription, claimed by `owner`, holding every PR due; None when none is."""
    with write_transaction(db):
        prs = due(db, sub)
        if not prs:
            return None
        (last,) = db.execute(
            "select coalesce(max(batch), 0) from daily_posts where channel = ? and repo = ? and date = ?",
            [sub.channel, sub.repo, day.isoformat()],
        ).fetchone()
        key = PostKey.of(sub.channel, sub.repo, day, sub.areas, last + 1)
        post = claim_post(db, key, owner, lambda: render(prs), lease, now)
        db.table("live_alerts").insert_all(
            {"channel": sub.channel, "repo": sub.repo, "number": pr.number, "date": day.isoformat(),
             "batch": key.batch, "areas": json.dumps(list(key.areas))}
            for pr in prs
        )
    return post


def unfinished(db: Database, sub: Subscription) -> list[PostKey]:
    """Live posts of the subscription's channel and repository that a process began and did not finish."""
    rows = db.execute(
        "select date, areas, batch from daily_posts where channel = ? and repo = ? and batch > 0"
        " and state = 'posting' order by date, batch",
        [sub.channel, sub.repo],
    )
    return [PostKey.of(sub.channel, sub.repo, date.fromisoformat(day), json.loads(areas), batch) for day, areas, batch in rows]


def changed_since_sent(db: Database, sub: Subscription, since: date) -> list[tuple[DailyPost, list[PullRequest]]]:
    """The subscription's live posts sent since `since` that one of their PRs was saved again after
    (a new summary, new areas), each with the PRs it announces, oldest merge first.

    A tick asks this of every live subscription, so it is one query that skips the unchanged posts.
    """
    rows = db.execute(
        "select a.date, a.areas, a.batch, json_group_array(a.number) from live_alerts as a"
        " join daily_posts as p on p.channel = a.channel and p.repo = a.repo and p.date = a.date"
        " and p.areas = a.areas and p.batch = a.batch"
        " join prs on prs.repo = a.repo and prs.number = a.number"
        " where a.channel = ? and a.repo = ? and a.date >= ? and p.state = 'done'"
        # Seconds are the stored resolution: a PR saved in the post's last second is looked at again.
        " group by a.date, a.areas, a.batch having max(prs.updated_at) >= max(p.updated_at)"
        " order by a.date, a.batch",
        [sub.channel, sub.repo, since.isoformat()],
    )
    found = []
    for day, areas, batch, numbers in rows:
        post = get_post(db, sub.channel, sub.repo, date.fromisoformat(day), json.loads(areas), batch)
        if post is None:  # removed by another process since the query above read it
            continue
        prs = get_prs(db, sub.repo, json.loads(numbers))
        found.append((post, sorted(prs.values(), key=lambda pr: (pr.merged_at, pr.number))))
    return found
