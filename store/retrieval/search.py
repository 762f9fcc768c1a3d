"""Finding the merged PRs a question is about.

Time and people narrow through indexes; areas and free text go to FTS5 as
quoted phrases ranked with bm25 over weighted columns; PRs named by number come
first, with the PRs that revert, fix or follow them. A filter that leaves
nothing is relaxed (time first, then people, then areas) and the result says so.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from zoneinfo import ZoneInfo

from sqlite_utils import Database

from store.model import PullRequest
from store.retrieval.exclusions import left_out
from store.retrieval.finding.conditions import FTS_JOIN
from store.retrieval.finding.grading import graded
from store.retrieval.finding.hits import NAMED_SCORE, RELATED_SCORE, Hit, squash
from store.retrieval.finding.listing import COUNT_CAP, listing
from store.retrieval.finding.lookup import StoreLookup
from store.retrieval.finding.ranking import Scope, stages, windowed
from store.retrieval.fts import any_of, match_expression
from store.retrieval.reading.concepts import word_concept
from store.retrieval.reading.parse import parse_question
from store.retrieval.reading.query import Concept, Order, PRType, Query, Tally
from store.retrieval.reading.when import TimeRange
from store.tables.prs import get_pr, pr_from_row
from store.understanding import vocabulary
from store.understanding.relations import related


@dataclass
class SearchResult:
    hits: list[Hit]
    note: str | None
    question: Query  # what was searched for, after any relaxing
    # How many PRs matched before the limit, counted up to COUNT_CAP; None for text
    # search, where counting every match would cost as much as ranking them.
    total: int | None

    @property
    def numbers(self) -> list[int]:
        return [hit.pr.number for hit in self.hits]


def search_prs(
    db: Database, query: str, repo: str, tz: ZoneInfo, limit: int = 10, now: datetime | None = None
) -> SearchResult:
    """The PRs of `repo` that `query` asks about, best first."""
    return search_shown(db, repo, read_question(db, query, repo, tz, now), limit)


def search_shown(db: Database, repo: str, asked: Query, limit: int = 10) -> SearchResult:
    """What a search shows: the PRs found, each followed by those on the other side of the links the question asks
    about ("what got reverted yesterday?" lists each revert with what it undid)."""
    result = search(db, repo, asked, limit)
    if not asked.linked or asked.numbers or not result.hits:
        return result  # PRs named by number come with what relates to them already
    return replace(result, hits=_with_linked(db, repo, result.hits, asked.linked)[:limit])


def read_question(db: Database, text: str, repo: str, tz: ZoneInfo, now: datetime | None = None) -> Query:
    # The repository's own name is in every path and says nothing.
    names = frozenset(part.lower() for part in repo.split("/"))
    return parse_question(text, tz, now, StoreLookup(db, repo), extra_stopwords=names, repo=repo)


def search(db: Database, repo: str, asked: Query, limit: int = 10) -> SearchResult:
    """Run a parsed question: named PRs and their relations first, else filters and text, relaxed if empty."""
    limit = max(1, limit)
    missing = missing_note(db, repo, asked)
    named = _named(db, repo, asked, limit)
    if named:
        return SearchResult(named, missing, asked, len(named))
    # Nothing known about the numbers: search the rest of the question instead.
    question = without_unknown_words(db, repo, replace(asked, numbers=()))
    for attempt in _relaxations(question):
        near = question.time if attempt.time is None else None
        ordered = _ordered(attempt)
        hits, total = _find(db, repo, attempt, COUNT_CAP if ordered else limit, near)
        if hits:
            relaxed = None if attempt is question else _relaxed_note(question, attempt)
            return SearchResult(ordered(hits)[:limit] if ordered else hits, _notes(missing, relaxed), attempt, total)
    nothing = None if question.is_empty else f"No PRs {question.describe()}."
    return SearchResult([], _notes(missing, nothing), asked, 0)


def _with_linked(db: Database, repo: str, hits: list[Hit], kinds: tuple[str, ...]) -> list[Hit]:
    """Each PR followed by those on the other side of the links asked about: "what got reverted yesterday?" asks for
    the reverts and what they undid, "was X ever relanded?" for X and what followed it."""
    found: dict[int, Hit] = {}
    for hit in hits:
        found.setdefault(hit.pr.number, hit)
        for link in related(db, repo, hit.pr.number):
            pr = get_pr(db, repo, link.other) if link.kind in kinds else None
            if pr is not None:
                found.setdefault(pr.number, Hit(pr, hit.score, link))
    return list(found.values())


def _ordered(question: Query) -> Callable[[list[Hit]], list[Hit]] | None:
    """How PRs listed by filters alone are put in the order asked: the PRs of whoever has the most first ("who merged
    the most yesterday?"), the largest first, or the first to merge; None for newest first (or words, by relevance)."""
    if question.concepts:
        return None
    if question.tally:
        tally, excluded = question.tally, question.excluded
        return lambda hits: _by_tally(hits, tally, excluded)
    if question.order is Order.LARGEST:
        return lambda hits: sorted(hits, key=lambda hit: size(hit.pr), reverse=True)
    if question.order is Order.FIRST:
        return lambda hits: sorted(hits, key=lambda hit: hit.pr.merged_at)
    return None


def _by_tally(hits: list[Hit], tally: Tally, excluded: Sequence[str]) -> list[Hit]:
    counts = Counter(key for hit in hits for key in tally_keys(hit.pr, tally, excluded))
    return sorted(hits, key=lambda hit: -max((counts[key] for key in tally_keys(hit.pr, tally, excluded)), default=0))


def tally_keys(pr: PullRequest, tally: Tally, excluded: Sequence[str]) -> list[str]:
    """Who or what a PR counts for in a tally, leaving out the excluded."""
    keys = pr.areas if tally is Tally.AREA else [pr.merged_by or "" if tally is Tally.MERGER else pr.author]
    return [key for key in keys if key and not left_out(key, excluded)]


def size(pr: PullRequest) -> tuple[int, bool]:
    """Files changed, then substantial before trivial."""
    return len(pr.files), pr.type == PRType.SUBSTANTIAL


def _notes(*notes: str | None) -> str | None:
    return " ".join(note for note in notes if note) or None


# ---------------------------------------------------------------- named PRs


def _named(db: Database, repo: str, question: Query, limit: int) -> list[Hit]:
    hits: dict[int, Hit] = {}
    for number in question.numbers:
        pr = get_pr(db, repo, number)
        if pr:
            hits[number] = Hit(pr, NAMED_SCORE)
    for number in question.numbers:
        for link in related(db, repo, number):
            if link.other in hits:
                continue
            pr = get_pr(db, repo, link.other)
            if pr:
                hits[link.other] = Hit(pr, RELATED_SCORE[link.kind], link)
    ordered = sorted(hits.values(), key=lambda hit: -hit.score)
    return ordered[:limit]


def missing_note(db: Database, repo: str, question: Query) -> str | None:
    unknown = [n for n in question.numbers if get_pr(db, repo, n) is None]
    if not unknown:
        return None
    listed = ", ".join(f"#{n}" for n in unknown)
    return f"{listed} {'is' if len(unknown) == 1 else 'are'} not in the store of {repo}."


def without_unknown_words(db: Database, repo: str, question: Query, stands: bool = False) -> Query:
    """Drop words no PR of the repository says ("ship", typos): they could only empty the answer.

    Kept when nothing would be left to search for, unless the caller knows that
    what is left still `stands` as a question (a relation, a tally)."""
    known: list[Concept] = []
    unknown: list[Concept] = []
    concepts = _with_unsaid_phrases_split(db, repo, question.concepts)
    question = replace(question, concepts=tuple(concepts))
    for concept in concepts:
        # Said only by what it is a kind of ("TPU" for "Ironwood"): no PR says it.
        found = _says_any(db, repo, tuple(p for p in concept.phrases.all if p not in concept.phrases.wider))
        if not found and concept.misspelt_filler:
            continue  # "waht", "workin": a common word mistyped says nothing, and no note is owed
        (known if found else unknown).append(concept)
    if len(known) + len(unknown) < len(concepts) and not unknown:
        return replace(question, concepts=tuple(known))
    if not unknown or not (known or stands or question.has_filters or question.areas):
        return question  # nothing to drop, or nothing would be left to search for
    # No note: an answer says which words no PR has only when they are what it is about (choose, subject.py).
    return replace(question, concepts=tuple(known), unknown=tuple(unknown))


def _says_any(db: Database, repo: str, phrases: tuple[str, ...]) -> bool:
    row = db.execute(f"select 1 from {FTS_JOIN} where prs_fts match ? and prs.repo = ? limit 1", [any_of(phrases), repo]).fetchone()
    return row is not None


def _with_unsaid_phrases_split(db: Database, repo: str, concepts: Sequence[Concept]) -> list[Concept]:
    """A known phrase no PR says ("suffix decoding") is asked as its words: a PR may say them apart ("suffix-tree
    proposer for speculative decoding"), and what the phrase is a kind of would otherwise be all that is left."""
    split: list[Concept] = []
    for concept in concepts:
        words = concept.said.split()
        hyphenated = [part for part in re.split(r"[-_]", concept.said) if len(part) > 2 and part not in vocabulary.words("made_up_fillers")]
        if len(words) > 1 and concept.phrases.all != concept.phrases.same and not _says_any(db, repo, concept.phrases.same):
            split.extend(word_concept(word) for word in words)
        elif len(words) == 1 and len(hyphenated) > 2 and not _says_any(db, repo, concept.phrases.all):
            # "async-scheduling-on-by-default": a compound made up for the question, said by no PR in one piece.
            split.extend(word_concept(part) for part in hyphenated)
        else:
            split.append(concept)
    return split


# ---------------------------------------------------------------- relaxing


def _relaxations(question: Query) -> Iterable[Query]:
    """The question, then with time dropped, then people, areas and paths: topic outlives constraints."""
    yield question
    current = question
    drops: tuple[tuple[str, Callable[[Query], Query]], ...] = (
        ("time", lambda q: replace(q, time=None)),
        ("people", lambda q: replace(q, people=())),
        ("areas", lambda q: replace(q, areas=(), area_phrases=(), area_same=())),
        ("paths", lambda q: replace(q, paths=())),
    )
    for field, drop in drops:
        if getattr(current, field):
            current = drop(current)
            # Asked only for a time: what merged closest to it.
            if current.has_filters or current.has_topic or field == "time":
                yield current


def _relaxed_note(asked: Query, found: Query) -> str:
    return f"No PRs {asked.describe()}; showing the nearest matches ({found.describe()})."


def _find(db: Database, repo: str, question: Query, limit: int, near: TimeRange | None) -> tuple[list[Hit], int | None]:
    """The best PRs for a question, and how many match when that is cheap to know (listings)."""
    if match_expression(question) is None:
        return listing(db, repo, question, limit, near)
    if question.concepts:
        return graded(db, repo, question, limit), None
    scope = Scope(db, repo, question)
    found: dict[int, Hit] = {}
    for stage in stages(question):
        for row in windowed(scope, stage, limit):
            if row["id"] not in found:
                found[row["id"]] = Hit(pr_from_row(row), squash(row["score"], stage.band))
        if len(found) >= limit:
            break
    return list(found.values())[:limit], None
