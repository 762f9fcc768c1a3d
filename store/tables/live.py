"""Live alerts: which newly stored PRs a subscription is told about, each planned into exactly one post.

A live alert is a post of one message (see store.tables.posts), numbered per channel,
repository, kind and day. Choosing its PRs, recording the post and marking the PRs as
alerted happen in one write transaction, so two processes never announce a PR twice.
A live subscription groups every PR due at one look into one post; a subscription to
one's own PRs (my-prs) gives each PR a post of its own.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date, timedelta
from functools import partial
from typing import Any

from sqlite_utils import Database

from store.days import to_utc_text
from store.db import write_transaction
from store.model import PullRequest
from store.subscription.cadence import MY_PRS
from store.tables.posts import DailyPost, PostKey, claim_post, get_post
from store.tables.prs import get_prs
from store.tables.subscriptions import Subscription
from store.tables.teams import OF_TEAM

# PRs merged this long before a live subscription began are old news, even when stored after it
# (a backfill of history, an import of last month's reports).
LOOKBACK = timedelta(days=1)

Render = Callable[[list[PullRequest]], list[dict[str, Any]]]
Keeps = Callable[[PullRequest], bool]


def due(db: Database, sub: Subscription, keeps: Keeps) -> list[PullRequest]:
    """The PRs the subscription has not announced: stored since it began, kept by `keeps` (its filter), oldest
    merge first."""
    rows = db.execute(
        "select number from prs where repo = ? and merged_at >= ? and created_at >= ?"
        " and not exists (select 1 from live_alerts as a where a.enterprise_id = ? and a.team_id = ?"
        " and a.channel = ? and a.repo = prs.repo and a.kind = ? and a.number = prs.number)",
        [sub.repo, to_utc_text(sub.created_at - LOOKBACK), to_utc_text(sub.created_at), *sub.team.key, sub.channel,
         sub.slot],
    )
    found = get_prs(db, sub.repo, [row[0] for row in rows])
    return sorted(filter(keeps, found.values()), key=lambda pr: (pr.merged_at, pr.number))


def plan_alerts(
    db: Database, sub: Subscription, day: date, keeps: Keeps, render: Render, owner: str, lease: float, now: float
) -> list[DailyPost]:
    """The next live posts of the subscription, claimed by `owner`, holding every PR due (one post, or one a
    PR for my-prs); none when no PR is due."""
    with write_transaction(db):
        prs = due(db, sub, keeps)
        if not prs:
            return []
        (last,) = db.execute(
            f"select coalesce(max(batch), 0) from daily_posts where {OF_TEAM} and channel = ? and repo = ? and kind = ?"
            " and date = ?",
            [*sub.team.key, sub.channel, sub.repo, sub.slot, day.isoformat()],
        ).fetchone()
        groups = [[pr] for pr in prs] if sub.slot == MY_PRS else [prs]
        posts = []
        for batch, group in enumerate(groups, start=last + 1):
            key = PostKey.of(sub.channel, sub.repo, day, sub.filter.text, batch, sub.slot, team=sub.team)
            post = claim_post(db, key, owner, partial(render, group), lease, now)
            assert post is not None, "a new batch number is no other process's post"
            posts.append(post)
            db.table("live_alerts").insert_all(
                {**sub.team.columns, "channel": sub.channel, "repo": sub.repo, "kind": sub.slot, "number": pr.number,
                 "date": day.isoformat(), "batch": batch, "filter": key.filter}
                for pr in group
            )
    return posts


def unfinished(db: Database, sub: Subscription) -> list[PostKey]:
    """Live posts of the subscription's channel, repository and kind that a process began and did not finish."""
    rows = db.execute(
        f"select date, filter, batch from daily_posts where {OF_TEAM} and channel = ? and repo = ? and kind = ?"
        " and batch > 0 and state = 'posting' order by date, batch",
        [*sub.team.key, sub.channel, sub.repo, sub.slot],
    )
    return [PostKey.of(sub.channel, sub.repo, date.fromisoformat(day), text, batch, sub.slot, team=sub.team)
            for day, text, batch in rows]


def changed_since_sent(db: Database, sub: Subscription, since: date) -> list[tuple[DailyPost, list[PullRequest]]]:
    """The subscription's live posts sent since `since` that one of their PRs was saved again after
    (a new summary, new areas), each with the PRs it announces, oldest merge first.

    A tick asks this of every live subscription, so it is one query that skips the unchanged posts.
    """
    rows = db.execute(
        "select a.date, a.filter, a.batch, json_group_array(a.number) from live_alerts as a"
        " join daily_posts as p on p.enterprise_id = a.enterprise_id and p.team_id = a.team_id"
        " and p.channel = a.channel and p.repo = a.repo and p.kind = a.kind"
        " and p.date = a.date and p.filter = a.filter and p.batch = a.batch"
        " join prs on prs.repo = a.repo and prs.number = a.number"
        " where a.enterprise_id = ? and a.team_id = ? and a.channel = ? and a.repo = ? and a.kind = ? and a.date >= ?"
        " and p.state = 'done'"
        # Seconds are the stored resolution: a PR saved in the post's last second is looked at again.
        " group by a.date, a.filter, a.batch having max(prs.updated_at) >= max(p.updated_at)"
        " order by a.date, a.batch",
        [*sub.team.key, sub.channel, sub.repo, sub.slot, since.isoformat()],
    )
    found = []
    for day, text, batch, numbers in rows:
        post = get_post(db, sub.channel, sub.repo, date.fromisoformat(day), text, batch, sub.slot, team=sub.team)
        if post is None:  # removed by another process since the query above read it
            continue
        prs = get_prs(db, sub.repo, json.loads(numbers))
        found.append((post, sorted(prs.values(), key=lambda pr: (pr.merged_at, pr.number))))
    return found
