"""A thread of questions: each turn as read and the PRs its answer cited, and a follow-up read against them.

A follow-up is read once, then completed from the turn before it as that turn was
read and answered: "and on ROCm?" keeps its week, "which of those touched ROCm?"
picks among the PRs that answer cited, and "was any of that reverted?" asks it of
them, so a thread resolves against what the person was shown, with a model or
without. A turn that was not kept (asked before turns were kept, or still being
answered) is read again from its text.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from sqlite_utils import Database

from store.retrieval.choose import without_relation_words
from store.retrieval.reading.kept import query_data, query_from_data
from store.retrieval.reading.query import Intent, Person, Query, Role
from store.retrieval.search import read_question
from store.tables.prs import get_pr
from store.understanding.relations import Link

# An earlier answer's PRs a follow-up may ask about, at most, and the people who wrote them.
MAX_POINTED_AT = 10
MAX_POINTED_AT_PEOPLE = 3


@dataclass(frozen=True)
class Answered:
    """A turn as one repository read and answered it."""

    query: Query  # the question as read in its thread: what the next turn follows
    cited: tuple[int, ...] = ()  # the PRs its answer cited, most relevant first
    links: tuple[Link, ...] = ()  # the relations its first line stated


@dataclass(frozen=True)
class Turn:
    """An earlier question of a thread: as asked, and as each repository it covered read and answered it."""

    text: str
    answered: Mapping[str, Answered] = field(default_factory=dict)


@dataclass(frozen=True)
class Reading:
    """A question read in its thread."""

    asked: Query  # what to answer: the question, completed from the thread
    kept: Query  # what the next turn follows: the question as the thread reads it on
    follows: bool  # whether the thread supplied part of it


def read_in_thread(
    db: Database, text: str, turns: Sequence[Turn], repo: str, tz: ZoneInfo, now: datetime | None = None
) -> Reading:
    """The question, with what it leaves unsaid taken from the thread's earlier turns (oldest first).

    A relation asked of what an earlier answer gave ("was any of that
    reverted?", "did it ever come back?") is asked of the PRs that answer cited,
    and "they" or "he" ("what else did they land?") are the people who wrote them.
    """
    asked = read_question(db, text, repo, tz, now)
    context = _context(db, turns, repo, tz, now)
    if context is None:
        return Reading(asked, asked, False)
    kept = asked.following(context)
    shown = turns[-1].answered.get(repo) or Answered(context)
    resolved = _completed(db, repo, asked, kept, shown)
    if asked.cues.picks_among and asked.intent is not Intent.YESNO and not _carries_on(asked):
        # "which of those was the fix?" asks which of the earlier PRs, not what is on the other side of them
        # ("what reverted any of those?" and "was any of that reverted?" still ask for the revert).
        resolved = replace(resolved, asks_other=False)
    return Reading(resolved, kept, resolved != asked)


def _context(db: Database, turns: Sequence[Turn], repo: str, tz: ZoneInfo, now: datetime | None) -> Query | None:
    """The last turn as the thread reads it; a turn not kept is read again, following the one before it."""
    context: Query | None = None
    for turn in turns:
        answered = turn.answered.get(repo)
        if answered is not None:
            context = answered.query
            continue
        read = read_question(db, turn.text, repo, tz, now)
        context = read if context is None else read.following(context)
    return context


def _carries_on(asked: Query) -> bool:
    """Whether the question asks nothing of its own shape and carries on from the one before ("and on may 12?")."""
    return asked.intent is Intent.LOOKUP and asked.cues.continues


def _completed(db: Database, repo: str, asked: Query, kept: Query, shown: Answered) -> Query:
    """The follow-up `kept`, asked of what the earlier answer `shown` cited where its words point back at it."""
    cues = asked.cues
    originals = tuple(link.other for link in shown.links)
    if cues.original and originals:
        # "who wrote the original?" after a revert or a follow-up: the PR it undid or followed.
        return replace(kept, numbers=originals, within=originals, concepts=(), areas=(), area_phrases=(), area_same=())
    if cues.narrows and (not asked.relation or cues.picks_among):
        # "which of those touched ROCm?", "which of those got reverted?": the earlier PRs, picked among. Only a time of
        # this question's own ("which of those landed friday?") narrows them, not the thread's, nor "later".
        kept = replace(kept, within=shown.cited, time=asked.time)
    if asked.relation and asked.points_back and not kept.numbers and not without_relation_words(asked).concepts:
        # "was any of that reverted?": asked of what the earlier answer cited.
        return replace(kept, numbers=_pointed_at(shown, cues.one_back))
    if asked.intent is Intent.WHO and cues.one_back and asked.points_back and not kept.within and shown.cited:
        # "who wrote it?": the one PR the earlier answer put first.
        return replace(kept, within=shown.cited[:1])
    if asked.intent is Intent.YESNO and asked.relation_implied and cues.one_back and not kept.within and shown.cited:
        # "is it on by default now?": of what the earlier answer cited.
        return replace(kept, within=shown.cited)
    if not asked.relation and asked.points_at_people:
        return _of_people(db, repo, asked, kept, shown)
    return kept


def _pointed_at(shown: Answered, one: bool) -> tuple[int, ...]:
    """What the earlier answer cited, and both sides of the relations it stated ("it" may be what was reverted);
    of "it", only the first PR and the PRs on the other side of its relations."""
    cited = list(shown.cited)
    one = one and bool(cited)
    if one:
        cited = cited[:1]
    linked = [n for link in shown.links if not one or cited[0] in (link.number, link.other) for n in (link.number, link.other)]
    return tuple(dict.fromkeys(cited + linked))[:MAX_POINTED_AT]


def _of_people(db: Database, repo: str, asked: Query, kept: Query, shown: Answered) -> Query:
    """"anything from him yesterday?": the people the thread asked about, else those who wrote what it cited."""
    people = shown.query.people or tuple(Person(author, Role.AUTHOR) for author in _authors(db, repo, shown.cited))
    if not 0 < len(people) <= MAX_POINTED_AT_PEOPLE:
        return kept
    # "what else did they land?": besides what the earlier answer cited.
    besides = shown.cited if asked.cues.besides_shown else ()
    if asked.has_topic:
        return replace(kept, people=people, besides=besides)
    # About those people now: the earlier topic is theirs no longer.
    return replace(kept, people=people, besides=besides, areas=(), area_phrases=(), area_same=(), concepts=())


def _authors(db: Database, repo: str, numbers: Sequence[int]) -> list[str]:
    prs = (get_pr(db, repo, number) for number in numbers)
    return list(dict.fromkeys(pr.author for pr in prs if pr is not None))


# ---------------------------------------------------------------- kept with the thread's turns


def answered_text(answered: Mapping[str, Answered]) -> str:
    """A turn's readings and answers, by repository, as kept in the store."""
    return json.dumps({repo: _answered_data(one) for repo, one in answered.items()}, separators=(",", ":"))


def turn_from_store(text: str, kept: str | None) -> Turn:
    """A turn as the store keeps it; what cannot be read of it (kept by another version) is read again from its text."""
    return Turn(text, _answered_from(kept))


def _answered_data(answered: Answered) -> dict[str, Any]:
    links = [[link.number, link.other, link.kind, link.outgoing] for link in answered.links]
    return {"reading": query_data(answered.query), "cited": list(answered.cited), "links": links}


def _answered_from(kept: str | None) -> dict[str, Answered]:
    try:
        data = json.loads(kept) if kept else {}
        return {repo: _answered(one) for repo, one in data.items()}
    except (ValueError, TypeError, AttributeError, KeyError):
        return {}


def _answered(data: dict[str, Any]) -> Answered:
    links = tuple(Link(int(number), int(other), str(kind), bool(outgoing)) for number, other, kind, outgoing in data["links"])
    return Answered(query_from_data(data["reading"]), tuple(int(number) for number in data["cited"]), links)
