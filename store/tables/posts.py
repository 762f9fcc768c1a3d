"""Records of reports and alerts posted to channels and people, which make each post happen exactly once.

A record is written with the planned messages before anything is sent, then
updated after every message Slack accepts: a restart resumes the same thread
from the first reply not yet sent, and a finished record stops any repeat.

One process at a time holds a post: the claim names its owner and a lease the
owner renews while it sends. Another process finding a live claim leaves it
alone; a claim whose lease ran out (its holder died) is taken over.
"""
from __future__ import annotations

import datetime
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from sqlite_utils import Database

from store.days import now_text
from store.db import write_transaction
from store.subscription.cadence import DAILY, WEEKLY
from store.tables.teams import NO_TEAM, OF_TEAM, Team

POSTING, DONE, EMPTY = "posting", "done", "empty"


@dataclass(frozen=True)
class PostKey:
    channel: str  # a channel, or a person's user ID (delivered by direct message)
    repo: str
    date: date  # the last day a report covers; the day of a live alert; the day a release came out
    filter: str = ""  # the subscription's filter, as its canonical text; empty: every PR
    batch: int = 0  # 0: a report; 1, 2, ...: the day's live alerts, in order
    kind: str = DAILY  # the subscription's slot: daily (daily or weekdays), weekly, live, my-prs, releases
    release: str = ""  # a release's thread: its tag
    team: Team = NO_TEAM  # the workspace of the channel or person

    # datetime.date: in the class body `date` names the field above, not the type.
    @classmethod
    def of(
        cls, channel: str, repo: str, day: datetime.date, filter: str = "", batch: int = 0, kind: str = DAILY,
        release: str = "", team: Team = NO_TEAM,
    ) -> PostKey:
        return cls(channel, repo, day, filter, batch, kind, release, team)

    @property
    def text(self) -> str:
        """The key as one string, as it travels in the messages' metadata (read back in the team's own channel)."""
        numbered = f" {self.kind}-{self.batch}" if self.batch else ""
        weekly = f" {self.kind}" if self.kind == WEEKLY else ""
        release = f" release-{self.release}" if self.release else ""
        return f"{self.channel} {self.repo} {self.date.isoformat()} {self.filter}".rstrip() + weekly + numbered + release

    @property
    def where(self) -> list[Any]:
        return [*self.team.key, self.channel, self.repo, self.kind, self.date.isoformat(), self.filter, self.batch,
                self.release]


@dataclass
class DailyPost:
    key: PostKey
    messages: list[dict[str, Any]]  # {text, blocks}; messages[0] is the thread's parent
    parent_ts: str | None = None
    replies_sent: int = 0
    state: str = POSTING
    owner: str | None = None
    lease_until: float | None = None  # unix time the owner's claim runs out
    in_flight: int | None = None  # the part sent last whose answer was not recorded
    sent_at: float | None = None  # unix time that part was sent
    replies: list[dict[str, Any]] = field(init=False)

    def __post_init__(self) -> None:
        self.replies = self.messages[1:]

    @property
    def channel(self) -> str:
        return self.key.channel

    @property
    def date(self) -> date:
        return self.key.date

    @property
    def finished(self) -> bool:
        return self.state in (DONE, EMPTY)


_WHERE = f"{OF_TEAM} and channel = ? and repo = ? and kind = ? and date = ? and filter = ? and batch = ? and release = ?"


def get_post(
    db: Database, channel: str, repo: str, day: date, filter: str = "", batch: int = 0, kind: str = DAILY,
    release: str = "", team: Team = NO_TEAM,
) -> DailyPost | None:
    """The record of the post to the team's channel that ends on `day` (the thread of the `release` that came out
    that day), if there is one."""
    return find_post(db, PostKey.of(channel, repo, day, filter, batch, kind, release, team))


def last_covered(db: Database, key: PostKey) -> date | None:
    """The last day that an earlier report of the key's channel, repository and kind covered, whatever its filter."""
    (day,) = db.execute(
        f"select max(date) from daily_posts where {OF_TEAM} and channel = ? and repo = ? and kind = ? and batch = 0"
        " and date < ?",
        [*key.team.key, key.channel, key.repo, key.kind, key.date.isoformat()],
    ).fetchone()
    return date.fromisoformat(day) if day else None


def find_post(db: Database, key: PostKey) -> DailyPost | None:
    rows = list(db["daily_posts"].rows_where(_WHERE, key.where))
    if not rows:
        return None
    row = rows[0]
    return DailyPost(
        key=key,
        messages=json.loads(row["messages"]),
        parent_ts=row["parent_ts"],
        replies_sent=row["replies_sent"],
        state=row["state"],
        owner=row["owner"],
        lease_until=row["lease_until"],
        in_flight=row["in_flight"],
        sent_at=row["sent_at"],
    )


def claim_post(
    db: Database, key: PostKey, owner: str, plan: Callable[[], list[dict[str, Any]]], lease: float, now: float
) -> DailyPost | None:
    """The post, held by `owner` until now + lease; None while another owner's lease runs.

    A post not recorded yet is planned with `plan()` under the same lock, so two
    processes never record two different plans. A finished post is returned as it is.
    """
    with write_transaction(db):
        post = find_post(db, key)
        if post is None:
            messages = plan()
            post = DailyPost(key, messages, state=POSTING if messages else EMPTY)
            stamp = now_text()
            db.table("daily_posts").insert(
                {
                    **key.team.columns,
                    "channel": key.channel,
                    "repo": key.repo,
                    "kind": key.kind,
                    "date": key.date.isoformat(),
                    "filter": key.filter,
                    "batch": key.batch,
                    "release": key.release,
                    "messages": json.dumps(messages, ensure_ascii=False),
                    "parent_ts": None,
                    "replies_sent": 0,
                    "state": post.state,
                    "owner": None if post.finished else owner,
                    "lease_until": None if post.finished else now + lease,
                    "created_at": stamp,
                    "updated_at": stamp,
                }
            )
            post.owner, post.lease_until = owner, now + lease
            return post
        if post.finished:
            return post
        if post.owner not in (None, owner) and post.lease_until is not None and post.lease_until > now:
            return None
        _update(db, key, owner=owner, lease_until=now + lease)
        post.owner, post.lease_until = owner, now + lease
        return post


def renew(db: Database, post: DailyPost, lease: float, now: float, **values: Any) -> bool:
    """Extend the owner's lease (and set `values` with it); False when the post is no longer the owner's."""
    with write_transaction(db):
        changed = db.execute(
            f"update daily_posts set lease_until = ?, updated_at = ?{''.join(f', {name} = ?' for name in values)}"
            f" where {_WHERE} and owner = ?",
            [now + lease, now_text(), *values.values(), *post.key.where, post.owner],
        ).rowcount
    return changed == 1


def begin_send(db: Database, post: DailyPost, part: int, lease: float, now: float) -> bool:
    """Note that `part` is about to be sent; False (nothing noted) when the claim was lost."""
    if not renew(db, post, lease, now, in_flight=part, sent_at=now):
        return False
    post.in_flight, post.sent_at = part, now
    return True


def release(db: Database, post: DailyPost) -> None:
    """Give the claim up at once (the holder failed), so a new run need not wait out the lease."""
    with write_transaction(db):
        db.execute(
            f"update daily_posts set owner = null, lease_until = null where {_WHERE} and owner = ?",
            [*post.key.where, post.owner],
        )


def release_team(db: Database, team: Team) -> int:
    """Give up every claim on the team's posts (its workspace uninstalled the app): a holder sending one stops at
    its next message. The number of posts released."""
    with write_transaction(db):
        return db.execute(
            f"update daily_posts set owner = null, lease_until = null where {OF_TEAM} and owner is not null",
            team.key,
        ).rowcount


def record_parent(db: Database, post: DailyPost, ts: str) -> None:
    post.parent_ts, post.in_flight = ts, None
    _update(db, post.key, parent_ts=ts, in_flight=None)


def record_replies(db: Database, post: DailyPost, count: int) -> None:
    """`count` replies are in the thread."""
    post.replies_sent, post.in_flight = count, None
    _update(db, post.key, replies_sent=count, in_flight=None)


def record_done(db: Database, post: DailyPost) -> None:
    post.state = DONE
    _update(db, post.key, state=DONE, owner=None, lease_until=None, in_flight=None)


def record_messages(db: Database, post: DailyPost, messages: list[dict[str, Any]]) -> None:
    """The messages as they now stand in Slack, after an edit."""
    post.messages = messages
    _update(db, post.key, messages=json.dumps(messages, ensure_ascii=False))


def _update(db: Database, key: PostKey, **values: Any) -> None:
    with write_transaction(db):
        db.table("daily_posts").update(
            tuple(key.where),
            {**values, "updated_at": now_text()},
        )
