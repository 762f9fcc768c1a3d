"""Slack workspaces (teams): every row a workspace writes carries its team, and a workspace reads only its own.

A team is its `team_id` and, in an Enterprise Grid organisation, its `enterprise_id` (empty outside one).
Channel and user IDs are unique within a team only, so every key that holds one holds the team too.
Rows made before the store knew a workspace (by an older prdigest, or on the command line before the bot
first started) carry empty ones: the first start with a bot token gives them that token's team (claim_home).
The PRs and their summaries belong to no team: they are public repository data, shared by every workspace.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from store.days import now_text
from store.db import write_transaction

# Every table whose rows belong to a team: each has enterprise_id and team_id columns.
TEAM_TABLES = (
    "subscriptions", "daily_posts", "live_alerts", "thread_turns", "answers", "shared_replies", "preview_channels",
    "link_previews", "people",
)
# The condition on a row's team, its parameters given by Team.key.
OF_TEAM = "enterprise_id = ? and team_id = ?"


@dataclass(frozen=True, order=True)
class Team:
    team_id: str = ""
    enterprise_id: str = ""  # only inside an Enterprise Grid organisation

    @property
    def key(self) -> list[str]:
        """The parameters of OF_TEAM, in its order."""
        return [self.enterprise_id, self.team_id]

    @property
    def columns(self) -> dict[str, Any]:
        return {"enterprise_id": self.enterprise_id, "team_id": self.team_id}

    def __str__(self) -> str:
        return self.team_id or "no workspace"

    @classmethod
    def of(cls, team_id: str | None, enterprise_id: str | None = None) -> Team:
        """The team of IDs as Slack gives them, where an absent one is None."""
        return cls(team_id or "", enterprise_id or "")


NO_TEAM = Team()  # the rows of no workspace yet


def home_team(db: Database) -> Team | None:
    """The workspace of the configured bot token, once a start with it recorded it (claim_home)."""
    row = db.execute("select team_id, enterprise_id from home_team").fetchone()
    return Team(*row) if row else None


def claim_home(db: Database, team: Team) -> tuple[Team, int]:
    """Record `team` as the store's workspace (the one of the configured bot token), unless another was recorded
    before, and give the rows of no workspace to the recorded one. The recorded team, and how many rows it got.

    Under one write lock, so two processes starting together record one team and move each row once. A row the
    team holds already (made again since, by the bot) is kept as the team has it."""
    with write_transaction(db):
        home = home_team(db)
        if home is None:
            db.table("home_team").insert({**team.columns, "recorded_at": now_text()})
            home = team
        if home != team:
            return home, 0
        moved = sum(
            db.execute(f"update or ignore {table} set enterprise_id = ?, team_id = ? where {OF_TEAM}", [*team.key, *NO_TEAM.key]).rowcount
            for table in TEAM_TABLES
        )
    return home, moved
