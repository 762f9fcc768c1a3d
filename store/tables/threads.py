"""Questions asked by mention, per Slack thread of a workspace, with what each was read as and cited, so follow-ups
keep their context."""
from __future__ import annotations

import sqlite3

from sqlite_utils import Database

from store.days import now_text
from store.db import write_transaction
from store.tables.teams import OF_TEAM, Team
from store.text.safe import mask_secrets

# Enough context for a follow-up, short enough to keep prompts small.
HISTORY_TURNS = 6
# A mention may hold 40,000 characters; the question reader reads 600 (store.retrieval.reading.parse), so no more is kept.
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


def keep_answered(db: Database, team: Team, channel: str, ts: str, answered: str) -> None:
    """Keep what the mention at `ts` in the team's `channel` was read as and what its answer cited
    (store.retrieval.thread's JSON), its secrets masked as the question's are."""
    with write_transaction(db):
        db.execute(f"update thread_turns set answered = ? where {OF_TEAM} and channel = ? and ts = ?",
                   [mask_secrets(answered), *team.key, channel, ts])


def earlier_turns(db: Database, team: Team, channel: str, thread_ts: str, ts: str) -> list[tuple[str, str | None]]:
    """The questions asked in the thread before `ts`, oldest first, each with what was kept of its answer (or None)."""
    rows = db.execute(
        "select question, answered from (select question, answered, ts from thread_turns"
        f" where {OF_TEAM} and channel = ? and thread_ts = ? and ts < ? order by ts desc limit ?) order by ts",
        [*team.key, channel, thread_ts, ts, HISTORY_TURNS],
    ).fetchall()
    return [(row[0], row[1]) for row in rows]
