"""PR link previews: the channels that asked for them, and when each PR was last previewed in each channel (of a
workspace)."""
from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlite_utils import Database

from store.days import to_utc_text
from store.db import write_transaction
from store.tables.teams import OF_TEAM, Team

# A link pasted again within this many seconds of its preview, in the same channel, is not previewed again.
QUIET_SECONDS = 30 * 60

PR = tuple[str, int]  # (OWNER/NAME, number)


def set_previews(db: Database, team: Team, channel: str, on: bool, user: str | None, now: datetime) -> bool:
    """Turn the channel's previews on or off; False when they already were."""
    with write_transaction(db):
        was = previews_on(db, team, channel)
        if on and not was:
            db.table("preview_channels").insert(
                {**team.columns, "channel": channel, "enabled_by": user, "enabled_at": to_utc_text(now)}
            )
        elif was and not on:
            db.execute(f"delete from preview_channels where {OF_TEAM} and channel = ?", [*team.key, channel])
    return was != on


def previews_on(db: Database, team: Team, channel: str) -> bool:
    row = db.execute(f"select 1 from preview_channels where {OF_TEAM} and channel = ?", [*team.key, channel]).fetchone()
    return row is not None


def claim_previews(
    db: Database, team: Team, channel: str, prs: Sequence[PR], now: float, quiet: float = QUIET_SECONDS
) -> list[PR]:
    """The PRs of `prs` this process may preview in `channel` now: those not previewed there in the last
    `quiet` seconds. Each is claimed in one statement, so of two processes (or two deliveries) only one wins."""
    claimed = []
    with write_transaction(db):
        for repo, number in dict.fromkeys(prs):
            cursor = db.execute(
                "insert into link_previews (enterprise_id, team_id, channel, repo, number, at) values (?, ?, ?, ?, ?, ?)"
                " on conflict (enterprise_id, team_id, channel, repo, number) do update set at = excluded.at"
                " where link_previews.at <= ?",
                [*team.key, channel, repo, number, now, now - quiet],
            )
            if cursor.rowcount:
                claimed.append((repo, number))
    return claimed


def release_previews(db: Database, team: Team, channel: str, prs: Sequence[PR], at: float) -> None:
    """Give back claims made at `at` whose preview was not shown, so the next paste of the link may show it."""
    if not prs:
        return
    with write_transaction(db):
        for repo, number in prs:
            db.execute(
                f"delete from link_previews where {OF_TEAM} and channel = ? and repo = ? and number = ? and at = ?",
                [*team.key, channel, repo, number, at],
            )
