"""Answers given in Slack and the 👍/👎 people gave them: one vote per person per answer.

An answer belongs to the workspace it was given in, and only a vote from there counts; a vote is of its
answer's workspace. Reading them back (`prdigest stats`, `feedback export`) is the operator's, across workspaces.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from sqlite_utils import Database

from store.days import day_bounds, from_utc_text, local_day, to_utc_text
from store.db import write_transaction
from store.tables.teams import OF_TEAM, Team
from store.tables.threads import kept_question
from store.text.safe import mask_secrets

UP, DOWN = "up", "down"
# Enough of an answer's first line to recognise it; the rest of the answer follows from the question.
FIRST_LINE_CHARS = 300
# What a person may type in the feedback modal (its input takes no more), and the PRs they may name.
COMMENT_CHARS = 2000
MAX_EXPECTED = 20
MAX_CITATIONS = 50


@dataclass(frozen=True)
class Answered:
    """An answer given in Slack: what was asked (after which earlier questions), its first line, what it cited."""

    id: int
    kind: str  # mention | ask
    question: str
    history: list[str]
    first_line: str
    citations: list[str]  # OWNER/NAME#N
    channel: str | None
    asked_by: str | None
    asked_at: datetime
    team: Team  # the workspace it was given in


@dataclass(frozen=True)
class Vote:
    answer: Answered
    user: str
    vote: str  # up | down
    comment: str | None
    expected: list[str] | None  # OWNER/NAME#N; None when the person named none
    voted_at: datetime


@dataclass(frozen=True)
class WeekVotes:
    week: date  # its Monday, in the configured timezone
    up: int
    down: int

    @property
    def share_up(self) -> float:
        return self.up / (self.up + self.down)


def record_answer(
    db: Database,
    team: Team,
    kind: str,
    question: str,
    first_line: str,
    citations: Sequence[str],
    channel: str | None,
    asked_by: str | None,
    now: datetime,
    history: Sequence[str] = (),
) -> int:
    """Keep an answer as it was given, its secrets masked as a thread's questions are; its id goes in its
    vote buttons."""
    with write_transaction(db):
        cursor = db.execute(
            "insert into answers (enterprise_id, team_id, kind, question, history, first_line, citations, channel,"
            " asked_by, asked_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                *team.key,
                kind,
                kept_question(question),
                json.dumps([kept_question(turn) for turn in history]),
                mask_secrets(first_line)[:FIRST_LINE_CHARS],
                json.dumps(list(citations)[:MAX_CITATIONS]),
                channel,
                asked_by,
                to_utc_text(now),
            ],
        )
    return int(cursor.lastrowid or 0)


def get_answer(db: Database, team: Team, answer_id: int) -> Answered | None:
    """The team's answer of that id; None when it has none (an id of another workspace's answer included)."""
    row = db.execute(f"select {_ANSWER_COLUMNS} from answers a where {OF_TEAM} and id = ?", [*team.key, answer_id]).fetchone()
    return _answered(row) if row else None


def record_vote(
    db: Database,
    team: Team,
    answer_id: int,
    user: str,
    vote: str,
    now: datetime,
    details: tuple[str | None, Sequence[str] | None] | None = None,
) -> bool:
    """Set `user`'s vote on the team's answer; False when the team keeps no such answer.

    `details` (what was wrong, the PRs it should have cited) replace the vote's earlier ones. Without them a
    vote keeps its details while it stays the same (a second click on 👎) and loses them when it changes.
    """
    comment, expected = details or (None, None)
    with write_transaction(db):
        if db.execute(f"select 1 from answers where {OF_TEAM} and id = ?", [*team.key, answer_id]).fetchone() is None:
            return False
        db.execute(
            "insert into answer_votes (answer_id, user, vote, comment, expected, voted_at)"
            " values (:answer, :user, :vote, :comment, :expected, :now)"
            " on conflict (answer_id, user) do update set vote = excluded.vote, voted_at = excluded.voted_at,"
            " comment = case when :replace or answer_votes.vote != excluded.vote then excluded.comment else answer_votes.comment end,"
            " expected = case when :replace or answer_votes.vote != excluded.vote then excluded.expected else answer_votes.expected end",
            {
                "answer": answer_id,
                "user": user,
                "vote": vote,
                "comment": mask_secrets(comment)[:COMMENT_CHARS] if comment else None,  # people paste logs
                "expected": None if expected is None else json.dumps(list(expected)[:MAX_EXPECTED]),
                "now": to_utc_text(now),
                "replace": details is not None,
            },
        )
    return True


def weekly_votes(db: Database, tz: ZoneInfo, since: date) -> list[WeekVotes]:
    """Votes per local week (Monday first) from the week holding `since`, weeks without votes left out."""
    first = since - timedelta(days=since.weekday())
    weeks: dict[date, list[int]] = {}
    rows = db.execute(
        "select voted_at, vote from answer_votes where voted_at >= ?", [to_utc_text(day_bounds(first, tz)[0])]
    )
    for voted_at, vote in rows:
        day = local_day(from_utc_text(voted_at), tz)
        counts = weeks.setdefault(day - timedelta(days=day.weekday()), [0, 0])
        counts[vote != UP] += 1
    return [WeekVotes(week, up, down) for week, (up, down) in sorted(weeks.items())]


def down_votes(db: Database, since: datetime | None = None) -> list[Vote]:
    """Every 👎 cast since `since` (all of them without it), oldest answer first."""
    rows = db.execute(
        f"select {_ANSWER_COLUMNS}, v.user, v.vote, v.comment, v.expected, v.voted_at"
        " from answer_votes v join answers a on a.id = v.answer_id"
        " where v.vote = ? and v.voted_at >= ? order by a.asked_at, a.id, v.voted_at",
        [DOWN, to_utc_text(since) if since else ""],
    )
    return [
        Vote(_answered(row[:11]), row[11], row[12], row[13], None if row[14] is None else json.loads(row[14]), from_utc_text(row[15]))
        for row in rows
    ]


_ANSWER_COLUMNS = (
    "a.id, a.kind, a.question, a.history, a.first_line, a.citations, a.channel, a.asked_by, a.asked_at, a.team_id,"
    " a.enterprise_id"
)


def _answered(row: Sequence) -> Answered:
    id_, kind, question, history, first_line, citations, channel, asked_by, asked_at, team_id, enterprise_id = row
    return Answered(
        id_, kind, question, json.loads(history or "[]"), first_line or "", json.loads(citations or "[]"),
        channel, asked_by, from_utc_text(asked_at), Team(team_id, enterprise_id),
    )
