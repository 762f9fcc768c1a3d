"""Records of daily reports posted to channels, which make each post happen exactly once.

A record is written with the planned messages before anything is sent, then
updated after every message Slack accepts: a restart resumes the same thread
from the first reply not yet sent, and a finished record stops any repeat.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from sqlite_utils import Database

from store.days import now_text

POSTING, DONE, EMPTY = "posting", "done", "empty"


@dataclass
class DailyPost:
    channel: str
    repo: str
    date: date
    messages: list[dict[str, Any]]  # {text, blocks}; messages[0] is the thread's parent
    parent_ts: str | None = None
    replies_sent: int = 0
    state: str = POSTING
    replies: list[dict[str, Any]] = field(init=False)

    def __post_init__(self) -> None:
        self.replies = self.messages[1:]

    @property
    def finished(self) -> bool:
        return self.state in (DONE, EMPTY)


def _key(post: DailyPost) -> tuple[str, str, str]:
    return post.channel, post.repo, post.date.isoformat()



def get_post(db: Database, channel: str, repo: str, day: date) -> DailyPost | None:
    rows = list(
        db["daily_posts"].rows_where("channel = ? and repo = ? and date = ?", [channel, repo, day.isoformat()])
    )
    if not rows:
        return None
    row = rows[0]
    return DailyPost(
        channel=row["channel"],
        repo=row["repo"],
        date=date.fromisoformat(row["date"]),
        messages=json.loads(row["messages"]),
        parent_ts=row["parent_ts"],
        replies_sent=row["replies_sent"],
        state=row["state"],
    )


def plan_post(db: Database, channel: str, repo: str, day: date, messages: list[dict[str, Any]]) -> DailyPost:
    """Record the messages about to be posted; a day with nothing to post is recorded as finished."""
    post = DailyPost(channel, repo, day, messages, state=POSTING if messages else EMPTY)
    now = now_text()
    db["daily_posts"].insert(
        {
            "channel": channel,
            "repo": repo,
            "date": day.isoformat(),
            "messages": json.dumps(messages, ensure_ascii=False),
            "parent_ts": None,
            "replies_sent": 0,
            "state": post.state,
            "created_at": now,
            "updated_at": now,
        }
    )
    return post


def record_parent(db: Database, post: DailyPost, ts: str) -> None:
    post.parent_ts = ts
    _update(db, post, parent_ts=ts)


def record_reply(db: Database, post: DailyPost) -> None:
    post.replies_sent += 1
    _update(db, post, replies_sent=post.replies_sent)


def record_done(db: Database, post: DailyPost) -> None:
    post.state = DONE
    _update(db, post, state=DONE)


def _update(db: Database, post: DailyPost, **values: Any) -> None:
    db["daily_posts"].update(_key(post), {**values, "updated_at": now_text()})
