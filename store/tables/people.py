"""People: a Slack user's GitHub login (whose PRs are theirs), and the channel of their direct messages; a user
is a user of one workspace."""
from __future__ import annotations

from sqlite_utils import Database

from store.days import now_text
from store.db import write_transaction
from store.tables.teams import OF_TEAM, Team


def link_github(db: Database, team: Team, user: str, login: str) -> str | None:
    """Link `user` to the GitHub `login`; returns the login they were linked to before, if any."""
    with write_transaction(db):
        before = github_login(db, team, user)
        db.execute(
            "insert into people (enterprise_id, team_id, user, github, updated_at) values (?, ?, ?, ?, ?)"
            " on conflict (enterprise_id, team_id, user) do update set github = excluded.github,"
            " updated_at = excluded.updated_at",
            [*team.key, user, login, now_text()],
        )
    return before


def github_login(db: Database, team: Team, user: str) -> str | None:
    row = db.execute(f"select github from people where {OF_TEAM} and user = ?", [*team.key, user]).fetchone()
    return row[0] if row else None


def dm_channel(db: Database, team: Team, user: str) -> str | None:
    """The direct-message channel Slack opened with `user`, once it has been."""
    row = db.execute(f"select dm_channel from people where {OF_TEAM} and user = ?", [*team.key, user]).fetchone()
    return row[0] if row else None


def remember_dm_channel(db: Database, team: Team, user: str, channel: str) -> None:
    with write_transaction(db):
        db.execute(
            "insert into people (enterprise_id, team_id, user, dm_channel, updated_at) values (?, ?, ?, ?, ?)"
            " on conflict (enterprise_id, team_id, user) do update set dm_channel = excluded.dm_channel,"
            " updated_at = excluded.updated_at",
            [*team.key, user, channel, now_text()],
        )
