"""Questions asked by mention, per Slack thread of a workspace, so follow-ups keep their context."""
from __future__ import annotations

import sqlite3

from sqlite_utils import Database

from store.days import now_text
from store.db import write_transaction
from store.tables.teams import OF_TEAM, Team
from store.text.safe import mask_secrets

# Enough context for a follow-up, short enough to keep prompts small.
HISTORY_TURNS = 6
# A mention may hold 40,000 characters; the question reader reads 600 (store.retrieval.question), so no more is kept.
QUESTION_CHARS = 600


def claim_turn(db: Database, team: Team, channel: str, thread_ts: str, ts: str, question: str) -> bool:
    """Record a mention; False when it was recorded before (Slack retried the event)."""
    try:
        with write_transaction(db):
            db.table("thread_turns").insert(
                {
                    **team.columns,
                    "channel": channel,
                    "thread_ts": thread_ts,
                    "ts": ts,
                    "question": kept_question(question),
                    "created_at": now_text(),
                }
            )
    except sqlite3.IntegrityError:
        return False
    return True


def kept_question(question: str) -> str:
    """What a thread keeps of a question: as much as is read, with its secrets masked (people paste logs)."""
    return mask_secrets(question)[:QUESTION_CHARS]


def earlier_questions(db: Database, team: Team, channel: str, thread_ts: str, ts: str) -> list[str]:
    """The questions asked in the thread before `ts`, oldest first."""
    rows = db.execute(
        "select question from (select question, ts from thread_turns"
        f" where {OF_TEAM} and channel = ? and thread_ts = ? and ts < ? order by ts desc limit ?) order by ts",
        [*team.key, channel, thread_ts, ts, HISTORY_TURNS],
    ).fetchall()
    return [row[0] for row in rows]

