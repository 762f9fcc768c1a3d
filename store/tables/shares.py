"""Private replies kept for their "Share in channel" button, each shared at most once."""
from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from store.db import write_transaction
from store.tables.teams import OF_TEAM, Team

# How long a private reply can still be shared. Slack keeps an ephemeral message only until the
# person reloads, so a day is generous; older ones are dropped as new ones are kept.
KEPT_SECONDS = 24 * 3600


@dataclass(frozen=True)
class Share:
    """What a click on "Share in channel" found: the reply to post if this click won it, or who shared it first."""

    messages: list[dict[str, Any]] | None  # set only for the click that claimed it
    shared_by: str | None = None  # who shared it, when this click did not
    gone: bool = False  # not kept: too old, or never was


def keep_reply(
    db: Database, team: Team, channel: str | None, user: str | None, messages: list[dict[str, Any]], now: float
) -> str:
    """Keep a private reply to share later; its id, random so that none can be guessed from another."""
    share_id = secrets.token_urlsafe(12)
    with write_transaction(db):
        db.execute("delete from shared_replies where created_at < ?", [now - KEPT_SECONDS])
        db.table("shared_replies").insert(
            {**team.columns, "id": share_id, "channel": channel, "user": user, "messages": json.dumps(messages), "created_at": now}
        )
    return share_id


def claim_share(db: Database, team: Team, share_id: str, user: str, now: float) -> Share:
    """Claim the team's reply for sharing, once: the first click gets its messages, every later one who shared it."""
    with write_transaction(db):
        claimed = db.execute(
            f"update shared_replies set shared_by = ?, shared_at = ? where {OF_TEAM} and id = ? and shared_by is null"
            " and created_at >= ?",
            [user, now, *team.key, share_id, now - KEPT_SECONDS],
        ).rowcount
        row = db.execute(
            f"select messages, shared_by from shared_replies where {OF_TEAM} and id = ?", [*team.key, share_id]
        ).fetchone()
    if row is None:
        return Share(None, gone=True)
    if not claimed:
        return Share(None, shared_by=row[1], gone=row[1] is None)
    return Share(json.loads(row[0]))


def release_share(db: Database, team: Team, share_id: str) -> None:
    """Undo a claim whose post failed, so a later click can share the reply."""
    with write_transaction(db):
        db.execute(
            f"update shared_replies set shared_by = null, shared_at = null where {OF_TEAM} and id = ?", [*team.key, share_id]
        )
