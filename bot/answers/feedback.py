"""Feedback on answers: 👍/👎 buttons on each answer given in Slack, the votes per week, and the 👎 answers
written out as evaluation lines a team can grow its own evaluation from."""
from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from bot.answers.pr_refs import read_pr_list
from bot.answers.scope import channel_repos
from bot.messages.blocks import Message
from bot.messages.interactive import vote_buttons, with_blocks
from bot.runtime import Runtime
from store.db import StoreError
from store.tables.feedback import Answered, Vote, WeekVotes, down_votes, record_answer
from store.tables.teams import Team

log = logging.getLogger(__name__)


def votable(runtime: Runtime, message: Message, kind: str, team: Team, channel: str | None, user: object) -> Message:
    """An answer with its 👍/👎 buttons, kept so a vote knows what was asked and cited. Anything that is
    not an answer (a command's report, a refusal) is returned as it is, and so is an answer the store
    cannot keep: it is better unvoted than not given."""
    asked = message.asked
    if asked is None:
        return message
    try:
        asker = user if isinstance(user, str) else None  # as Slack sent it: a Socket Mode event is not checked at the door
        answer_id = record_answer(
            runtime.db, team, kind, asked.question, asked.first_line, asked.citations, channel, asker, runtime.now(), asked.history
        )
    except (StoreError, sqlite3.Error) as exc:
        log.warning("answered without vote buttons: the answer could not be kept (%s)", exc)
        return message
    return with_blocks(message, vote_buttons(answer_id))


def answer_repo(runtime: Runtime, answer: Answered) -> str:
    """The repository an answer was about: that of its first citation, else the first of its channel's."""
    cited = [citation.rpartition("#")[0] for citation in answer.citations]
    return cited[0] if cited else channel_repos(runtime, answer.team, answer.channel)[0]


def expected_prs(runtime: Runtime, answer: Answered, text: str | None) -> list[str] | None:
    """The PRs a person says the answer should have cited, as OWNER/NAME#N (a number alone is of the
    answer's repository); None when they named none. ValueError says what could not be read."""
    if not text or not text.strip():
        return None
    return [f"{repo}#{number}" for repo, number in read_pr_list(runtime, answer.team, text, answer_repo(runtime, answer))]


# ------------------------------------------------------------------ evaluation lines

def evaluation_lines(runtime: Runtime, since: datetime | None) -> list[dict[str, Any]]:
    """One line per answer marked 👎 since `since`, as bench/eval.py reads it.

    {"q", "cited", "expected", "comment"} plus "repo", "now" (when it was asked), "first_line" and, for a
    follow-up, "history". Numbers are of the line's repository. "expected" is null when nobody who marked
    the answer named the PRs it should have cited: the evaluation then checks only that the same PRs are
    not cited again. When several people marked it, their PRs and comments are put together.
    """
    by_answer: dict[int, list[Vote]] = {}
    for vote in down_votes(runtime.db, since):
        by_answer.setdefault(vote.answer.id, []).append(vote)
    return [_line(runtime, votes) for votes in by_answer.values()]


def _line(runtime: Runtime, votes: list[Vote]) -> dict[str, Any]:
    answer = votes[0].answer
    given = [vote.expected for vote in votes if vote.expected is not None]
    expected = list(dict.fromkeys(pr for prs in given for pr in prs)) if given else None
    repo = expected[0].rpartition("#")[0] if expected else answer_repo(runtime, answer)
    line: dict[str, Any] = {
        "q": answer.question,
        "cited": _numbers(answer.citations, repo),
        "expected": None if expected is None else _numbers(expected, repo),
        "comment": " / ".join(vote.comment for vote in votes if vote.comment),
        "repo": repo,
        "now": answer.asked_at.astimezone(runtime.settings.timezone).isoformat(),
        "first_line": answer.first_line,
    }
    if answer.history:
        line["history"] = answer.history
    return line


def _numbers(prs: Sequence[str], repo: str) -> list[int]:
    return [int(number) for owner_name, _, number in (pr.rpartition("#") for pr in prs) if owner_name == repo]


# ------------------------------------------------------------------ `prdigest stats`

def votes_text(weeks: list[WeekVotes], since: date, tz: str) -> list[str]:
    if not weeks:
        return [f"Feedback on answers: no votes since {since.isoformat()}."]
    lines = [f"Feedback on answers per week ({tz}, weeks from Monday):", _row("week of", "up", "down", "share up")]
    lines += [_row(week.week.isoformat(), week.up, week.down, f"{week.share_up:.0%}") for week in weeks]
    up, down = sum(week.up for week in weeks), sum(week.down for week in weeks)
    lines.append(_row(f"since {since.isoformat()}", up, down, f"{up / (up + down):.0%}"))
    return lines


def votes_json(weeks: list[WeekVotes]) -> list[dict[str, Any]]:
    return [{"week": week.week.isoformat(), "up": week.up, "down": week.down, "share_up": round(week.share_up, 3)} for week in weeks]


def _row(first: str, *values: object) -> str:
    return f"  {first:<18}" + "".join(f"{value:>10}" for value in values)
