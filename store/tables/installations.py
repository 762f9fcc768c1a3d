"""The workspaces that installed the app through its Add to Slack page, with their tokens, and the states of
installs under way.

A team has one installation: the latest replaces the one before, and a rotated token replaces its own. An
uninstall removes it and gives up the team's claims on posts in the same transaction, so nothing more is
posted there; the team's other rows (subscriptions, posts, answers) are kept. A state is issued when an install
starts, and taken once, before it expires, when Slack redirects back; expired ones are dropped as new ones come.
"""
from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from store.days import now_text
from store.db import write_transaction
from store.subscription.cadence import LIVE, MY_PRS, RELEASES
from store.tables.posts import release_team
from store.tables.teams import OF_TEAM, Team

# What a row holds besides its team; store.migrations names each column.
FIELDS = (
    "app_id", "enterprise_name", "team_name", "is_enterprise_install", "bot_token", "bot_id", "bot_user_id", "bot_scopes",
    "bot_refresh_token", "bot_token_expires_at", "installer", "user_token", "user_scopes", "user_refresh_token",
    "user_token_expires_at", "token_type", "installed_at",
)


def save_installation(db: Database, team: Team, fields: dict[str, Any]) -> bool:
    """Keep the team's installation (or its rotated tokens); True when the team had none before.

    A team that installs again after an uninstall gets its subscriptions back. Its live ones and its release threads
    begin again now: the PRs stored while the app was away are in its reports, and would otherwise come in one
    alert (and the releases in a row of threads)."""
    with write_transaction(db):
        new = find_installation(db, team) is None
        db.table("slack_installations").insert(
            {**team.columns, **{name: fields.get(name) for name in FIELDS}, "updated_at": now_text()}, replace=True
        )
        if new:
            db.execute(f"update subscriptions set created_at = ? where {OF_TEAM} and mode in (?, ?, ?)",
                       [now_text(), *team.key, LIVE, MY_PRS, RELEASES])
    return new


def find_installation(db: Database, team: Team) -> dict[str, Any] | None:
    rows = list(db["slack_installations"].rows_where(OF_TEAM, team.key))
    return rows[0] if rows else None


def known_teams(db: Database) -> list[Team]:
    """The workspaces the store serves: the one of the configured bot token, and those that installed the app."""
    rows = db.execute("select enterprise_id, team_id from home_team union select enterprise_id, team_id"
                      " from slack_installations order by enterprise_id, team_id")
    return [Team(team_id, enterprise_id) for enterprise_id, team_id in rows]


def remove_installation(db: Database, team: Team) -> bool:
    """The team uninstalled the app, or Slack revoked its bot token: forget its installation and release its
    posts. False when it had none."""
    with write_transaction(db):
        removed = db.execute(f"delete from slack_installations where {OF_TEAM}", team.key).rowcount
        release_team(db, team)
    return bool(removed)


def forget_user_token(db: Database, team: Team, user: str) -> None:
    """Slack revoked the user token `user` granted when installing; the bot token stays."""
    with write_transaction(db):
        db.execute(
            "update slack_installations set user_token = null, user_scopes = null, user_refresh_token = null,"
            f" user_token_expires_at = null, updated_at = ? where {OF_TEAM} and installer = ?",
            [now_text(), *team.key, user],
        )


def issue_state(db: Database, state: str, expires_at: float, now: float) -> None:
    with write_transaction(db):
        db.execute("delete from slack_oauth_states where expires_at <= ?", [now])
        db.table("slack_oauth_states").insert({"state": state, "expires_at": expires_at})


def consume_state(db: Database, state: str, now: float) -> bool:
    """Take the state once: True only for the first redirect that brings it back before it expires."""
    with write_transaction(db):
        return db.execute("delete from slack_oauth_states where state = ? and expires_at > ?", [state, now]).rowcount == 1
