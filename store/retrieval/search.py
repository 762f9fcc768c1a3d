"""Finding the merged PRs a question is about.

Time and people narrow through indexes; areas and free text go to FTS5 as
quoted phrases ranked with bm25 over weighted columns; PRs named by number come
first, with the PRs that revert, fix or follow them. A filter that leaves
nothing is relaxed (time first, then people, then areas) and the result says so.
"""
from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import cached_property
from typing import Any
from zoneinfo import ZoneInfo

from sqlite_utils import Database

from store.days import from_utc_text, to_utc_text
from store.migrations import FTS_COLUMNS
from store.model import PullRequest
from store.retrieval.evidence import FIELD_WEIGHT, RISK_WEIGHT, gather, rarity
from store.retrieval.exclusions import left_out
from store.retrieval.fts import any_of, quoted, store_size
from store.retrieval.reading.concepts import word_concept
from store.retrieval.reading.parse import parse_question
from store.retrieval.reading.query import BOTS, Concept, Cues, Order, Person, Phrases, PRType, Query, Role, Tally
from store.retrieval.reading.when import TimeRange
from store.tables.prs import first_id, get_pr, pr_from_row
from store.text.prose import atoms
from store.understanding import vocabulary
from store.understanding.relations import Link, related

# bm25 weight per FTS column. A word in the title says most about a PR; the
# risks and insights sections speculate about neighbouring code, so they count little.
WEIGHTS = {
    "title": 10.0,
    "what_changed": 4.0,
    "impact": 2.0,
    "risks": 0.5,
    "insights": 0.5,
    "files": 3.0,
    "author": 5.0,
    "areas": 6.0,
}


def _bm25(table: str) -> str:
    return f"bm25({table}, " + ", ".join(str(WEIGHTS[column]) for column in FTS_COLUMNS) + ")"


# Scores are relevance in [0, 1]: PRs named in the question, then PRs related to
# them, then text matches (bm25 squashed below those), then plain listings.
NAMED_SCORE = 1.0
_RELATED_SCORE = {"reverts": 0.95, "fixes": 0.9, "follows": 0.85, "mentions": 0.8}
_TEXT_CEILING = 0.75
_TEXT_HALF = 5.0  # the bm25 value that maps to the middle of its band
# Listings count their PRs up to this many; a bot that says "1000+" needs no exact figure.
COUNT_CAP = 1000
# In stores of LOCAL_FROM PRs or more, up to LOCAL_CAP matches of a window are ranked in a small
# FTS table of their own, at a cost that no longer grows with the store (see _score_locally).
# Measured: from about 5,000 PRs (four months of vLLM) this is the cheaper way.
LOCAL_FROM = 5_000
LOCAL_CAP = 2000
# How far back (days from the newest PR asked about) text search looks before it widens to everything.
WINDOW_DAYS = (3, 7, 30, 180, 730)


@dataclass
class Hit:
    pr: PullRequest
    score: float
    link: Link | None = None  # how it relates to a PR named in the question
    coverage: float | None = None  # for a question of words: how much of what was asked the PR says, 0 to 1
    said: tuple[float, ...] = ()  # for a question of words: how strongly it says each topic (concepts, then areas)


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


# A first name shorter than this ("al", "jo") is too often a word.
_FIRST_NAME_MIN = 3
# A first name run into the rest of a login ("AndreasKaratzas") is at least this long.
_CAMEL_NAME_MIN = 5
# Letters a login may put between a first initial and the last name: a middle initial, a dash.
_INITIALS = 2
_LOGIN_COLUMNS = ("author", "merged_by")
# The index's columns a PR says things in; the login itself is indexed too, as author.
_TEXT_COLUMNS = " ".join(column for column in FTS_COLUMNS if column != "author")


class StoreLookup:
    """Tells the question parser which words are logins, which numbers are PRs of `repo` and when any merged."""

    def __init__(self, db: Database, repo: str) -> None:
        self.db = db
        self.repo = repo

    def login(self, name: str) -> str | None:
        row = self.db.execute(
            """
            select author from prs where repo = ? and author = ? collate nocase
            union all
            select merged_by from prs where repo = ? and merged_by = ? collate nocase
            limit 1
            """,
            [self.repo, name, self.repo, name],
        ).fetchone()
        return row[0] if row else self._by_first_name(name)

    def full_name(self, first: str, last: str) -> str | None:
        """"andreas karatzas" for AndreasKaratzas, the names run together; "nick hill" for njhill, the one login
        that is the first name's initial, at most _INITIALS more letters and the last name, when no PR says either."""
        login = self.login(first + last)
        if login or len(last) < _FIRST_NAME_MIN or self.says(first) or self.says(last):
            return login
        initial = first[0]
        logins = self._logins(
            (f"select distinct {column} from prs where repo = ? and {column} >= ? collate nocase "
             f"and {column} < ? collate nocase and {column} like ? and length({column}) <= ?",
             [self.repo, initial, chr(ord(initial) + 1), f"%{last}", len(last) + 1 + _INITIALS])
            for column in _LOGIN_COLUMNS
        )
        return logins.pop() if len(logins) == 1 else None

    def _by_first_name(self, name: str) -> str | None:
        """"evelyn" for evelyn-zhou, "andreas" for AndreasKaratzas: the one login that starts with the word and then
        a new part (a dash or an underscore; for a longer name, a capital or a digit), when no PR says the word."""
        if len(name) < _FIRST_NAME_MIN or not name.isalpha():
            return None
        # "{" follows "z": the range holds every login that starts with the name. Most words start none.
        logins = self._ends_between(name, f"{name}{{")
        if len(logins) > 1:
            # Several do ("raj-v", "rajeshwar"): those that start with the name and a dash, or an underscore.
            logins = self._ends_between(f"{name}-", f"{name}.") or self._ends_between(f"{name}_", f"{name}`")
        if len(logins) != 1:
            return None
        login = logins.pop()
        after = login[len(name) : len(name) + 1]
        # "rajesh" is no "raj", and a short word ("big") is a name only before a dash.
        # A longer name may also run into a capital, a digit, or one last initial ("russell" for russellb).
        run_in = after.isupper() or after.isdigit() or len(login) == len(name) + 1
        new_part = after in ("-", "_") or (len(name) >= _CAMEL_NAME_MIN and run_in)
        return login if new_part and not self.says(name) else None

    def _ends_between(self, low: str, high: str) -> set[str]:
        """The first and the last login in [low, high), for authors and mergers: four seeks of an index at any size."""
        return self._logins(
            (f"select {column} from prs where repo = ? and {column} >= ? collate nocase and {column} < ? collate nocase "
             f"order by {column} collate nocase {order} limit 1",
             [self.repo, low, high])
            for column in _LOGIN_COLUMNS
            for order in ("asc", "desc")
        )

    def _logins(self, queries: Iterable[tuple[str, list[object]]]) -> set[str]:
        """The logins the queries find, each once whatever its case."""
        found = {row[0].lower(): row[0] for sql, args in queries for row in self.db.execute(sql, args)}
        return set(found.values())

    def says(self, word: str) -> bool:
        """Whether a PR of any repository says the word in its text."""
        return self.db.execute("select 1 from prs_fts where prs_fts match ? limit 1", [f"{{{_TEXT_COLUMNS}}} : {quoted(word)}"]).fetchone() is not None

    def is_pr(self, number: int) -> bool:
        return self.db.execute(
            "select 1 from prs where repo = ? and number = ?", [self.repo, number]
        ).fetchone() is not None

    def merged_between(self, start: datetime, end: datetime) -> bool:
        bounds, args = _time_bounds(self.repo, start, end)
        return self.db.execute(f"select 1 from prs where {bounds} limit 1", args).fetchone() is not None

    def is_path(self, fragment: str) -> bool:
        """Whether a changed file of the repository holds `fragment`: the index finds its words, the files confirm."""
        words = " ".join(atoms(fragment))
        row = self.db.execute(
            f"select 1 from {_FROM} where prs_fts match ? and prs.repo = ? "
            "and exists (select 1 from json_each(prs.files) where instr(lower(value), ?) > 0) limit 1",
            [f"{{files}} : {quoted(words)}", self.repo, fragment],
        ).fetchone()
        return row is not None


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
                hits[link.other] = Hit(pr, _RELATED_SCORE[link.kind], link)
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
    words = ", ".join(f'"{concept.said}"' for concept in unknown)
    return replace(question, concepts=tuple(known), unknown=tuple(unknown), problems=(*question.problems, f"no PR mentions {words}"))


def _says_any(db: Database, repo: str, phrases: tuple[str, ...]) -> bool:
    row = db.execute(f"select 1 from {_FROM} where prs_fts match ? and prs.repo = ? limit 1", [any_of(phrases), repo]).fetchone()
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


# ---------------------------------------------------------------- FTS expressions


def _area_expression(question: Query) -> str | None:
    """In one of the areas, or naming it in the title, what changed or impact (not in risks or insights)."""
    if not question.areas:
        return None
    names = _area_names(question)
    return f"({{areas}} : {any_of(names)} OR {{title what_changed impact}} : {any_of(question.area_phrases or names)})"


def _area_names(question: Query) -> list[str]:
    return [area_name(area) for area in question.areas]


def area_name(area: str) -> str:
    """An area as the index's areas column holds its words ("tool-calling" is "tool calling")."""
    return " ".join(area.split("-"))


def membership_expression(question: Query) -> str | None:
    """The FTS5 query for the PRs classified in the question's areas: in one area of each group named together."""
    if not question.areas:
        return None
    joined = " AND ".join(any_of([area_name(area) for area in group]) for group in question.areas_together())
    return f"{{areas}} : ({joined})"


def match_expression(question: Query) -> str | None:
    """The loose FTS5 query: any area or any word of the topic (an area is then required apart)."""
    words = [p for concept in question.concepts for p in concept.phrases.all]
    area = _area_expression(question)
    if area and words:
        return f"{area} OR {any_of(words)}"
    return area or (any_of(words) if words else None)


def strict_expression(question: Query) -> str | None:
    """The strict FTS5 query: in the areas AND saying something for every concept."""
    parts = [any_of(concept.phrases.all) for concept in question.concepts]
    area = _area_expression(question)
    return " AND ".join(([area] if area else []) + parts) or None


def exact_expression(question: Query) -> str | None:
    """Every concept, and any area, in the asker's words or what means the same (areas then required apart).

    Scored on these words alone, so a PR in core that says "scheduler" comes
    before one that only carries the [Core] tag.
    """
    parts = [any_of(concept.phrases.same) for concept in question.concepts]
    if question.areas and question.area_same:
        parts.insert(0, f"{{title what_changed impact}} : {any_of(question.area_same)}")
    return " AND ".join(parts) or None


# ---------------------------------------------------------------- ranking by text


@dataclass(frozen=True)
class _Stage:
    expression: str
    required: str | None  # a second FTS query every row must also match
    band: int  # 2: every concept in the asker's own words, 1: every concept, 0: some


def _stages(question: Query) -> list[_Stage]:
    """Every concept (and area) as asked, then with synonyms, then the area (or any word) to fill up."""
    exact, strict, loose = exact_expression(question), strict_expression(question), match_expression(question)
    assert strict is not None and loose is not None
    area = _area_expression(question) if question.areas else None
    # First: PRs classified in the area (in one of each group of areas named together) that also say what was asked.
    several = len(question.areas_together()) > 1
    stages = [_Stage(exact or strict, membership_expression(question), 2)] if exact or several else []
    if strict != exact:
        stages.append(_Stage(strict, None, 1))
    if loose not in (strict, exact):
        stages.append(_Stage(loose, area, 0))
    return stages


def _find(db: Database, repo: str, question: Query, limit: int, near: TimeRange | None) -> tuple[list[Hit], int | None]:
    """The best PRs for a question, and how many match when that is cheap to know (listings)."""
    if match_expression(question) is None:
        return _listing(db, repo, question, limit, near)
    if question.concepts:
        return _graded(db, repo, question, limit), None
    scope = _Scope(db, repo, question)
    found: dict[int, Hit] = {}
    for stage in _stages(question):
        for row in _windowed(scope, stage, limit):
            if row["id"] not in found:
                found[row["id"]] = Hit(pr_from_row(row), _squash(row["score"], stage.band))
        if len(found) >= limit:
            break
    return list(found.values())[:limit], None


# ---------------------------------------------------------------- graded by what each PR says

# PRs graded for a question of words: more than any one answer cites, few enough that grading
# costs the same in a store of any size.
POOL = 30
# And the few best-ranked PRs of each topic alone, whatever the stages found.
PER_TOPIC = 5


@dataclass(frozen=True)
class _Topic:
    """One thing a question of words is about: a concept, or an area it names, and the FTS5 text that says it."""

    concept: Concept
    expression: str


def _topics(question: Query) -> list[_Topic]:
    """The question's concepts, and each area it names as one more: an area grades PRs, it does not filter them."""
    topics = [_Topic(concept, any_of(concept.phrases.all)) for concept in question.concepts]
    for name in _area_names(question):
        # The words that named the area belong to it only when it is the one area named.
        words = tuple(question.area_phrases) if len(question.areas) == 1 else ()
        phrases = Phrases((name, *words), (name, *words))
        expression = f"({{areas}} : {quoted(name)} OR {{title what_changed impact}} : {any_of(phrases.all)})"
        topics.append(_Topic(Concept(name, phrases), expression))
    return topics


def _graded(db: Database, repo: str, question: Query, limit: int) -> list[Hit]:
    """PRs that say what was asked, graded by how much of it they say, weighted by how rare each word is.

    Candidates come from FTS5: first the PRs that say every topic, then those
    that say all but the commonest, and so on down to the rarest topic alone,
    then any topic, until there are enough; and the few best of each topic
    alone. Each candidate is then graded on where it says each
    topic (title, first sentence of what changed, ... risks), so a PR that
    misses one common or paraphrased word still answers, and one that names
    the topic only among its risks comes last.
    """
    topics = _topics(question)
    weights = rarity(db, repo, [topic.concept for topic in topics])
    telling = sorted(range(len(topics)), key=lambda i: -weights[i])
    scope = _Scope(db, repo, question)
    wanted = max(limit, POOL)
    pool: dict[int, tuple[int, float, dict[str, Any]]] = {}
    stages = [" AND ".join(topics[i].expression for i in telling[:size]) for size in range(len(telling), 0, -1)]
    if len(topics) > 1:
        stages.append(" OR ".join(topic.expression for topic in topics))  # any topic at all, to fill up
    if question.paths:
        stages.append("{files} : " + any_of(" ".join(atoms(path)) for path in question.paths))  # the files alone
    for band, expression in zip(range(len(stages), 0, -1), stages):
        for row in _windowed(scope, _Stage(expression, None, band), wanted):
            pool.setdefault(row["id"], (band, row["score"], row))
        if len(pool) >= wanted:
            break
    if len(topics) > 1:
        # A PR that says the question's point in other words misses its rare chatter ("sent", "sorted"),
        # and with it every stage above: each topic's own best PRs are graded too.
        for topic in topics:
            for row in _windowed(scope, _Stage(topic.expression, None, 1), PER_TOPIC):
                pool.setdefault(row["id"], (1, row["score"], row))
    if not pool:
        return []
    groups = _alternatives(question.cues, [topic.concept for topic in topics])
    grouped_weights = _grouped(weights, groups)
    strengths = gather(db, list(pool), [topic.concept for topic in topics], RISK_WEIGHT if question.about_risks else FIELD_WEIGHT)
    if question.paths:
        # The files asked about are one more topic, said fully by every candidate (search keeps to them),
        # as rare as can be: a word beside them ("the buildkite config") grades, and one missing no longer sinks a PR.
        grouped_weights.append(1.0)
        for found in strengths.values():
            found.append(1.0)
        groups.append([len(topics)])
    said = {pr_id: tuple(_grouped(strengths[pr_id], groups)) for pr_id in pool}
    graded = sorted(
        ((_coverage(list(said[pr_id]), grouped_weights, len(question.unknown)), size, score, row)
         for pr_id, (size, score, row) in pool.items()),
        key=lambda item: (-item[0], -item[1], -item[2]),
    )
    return [
        Hit(pr_from_row(row), round(_TEXT_CEILING * coverage, 4), coverage=coverage, said=said[row["id"]])
        for coverage, _, _, row in graded[:limit]
    ]


def _coverage(strengths: list[float], weights: list[float], unsaid: int) -> float:
    # Words no PR says weigh as one word as rare as can be, which no PR has: an absent topic
    # ("gaudi") sinks a match, and a sentence of chatter no PR uses ("spit", "pegged") sinks it no further.
    total = sum(weights) + min(1, unsaid)
    if not total:
        return max(strengths, default=0.0)
    return sum(s * w for s, w in zip(strengths, weights)) / total


def _alternatives(cues: Cues, concepts: list[Concept]) -> list[list[int]]:
    """Concepts in groups: "whisper or audio", "eagle, mtp", "h100/h200" are one group that either word satisfies."""
    groups: list[list[int]] = []
    for index, concept in enumerate(concepts):
        if groups and index > 0 and cues.joined(concepts[index - 1].said.lower(), concept.said.lower()):
            groups[-1].append(index)
        else:
            groups.append([index])
    return groups


def _grouped(values: list[float], groups: list[list[int]]) -> list[float]:
    """One value per group of alternatives: the best of its members' (strength, or rarity)."""
    return [max(values[i] for i in group) for group in groups]


class _Scope:
    """The time range and people a question keeps to."""

    def __init__(self, db: Database, repo: str, question: Query) -> None:
        self.db, self.repo, self.question = db, repo, question
        self.start, self.end = _span(question)

    @cached_property
    def edges(self) -> tuple[datetime, datetime] | None:
        """When the first and the last PR asked about merged; None when none did (read once, for every stage)."""
        bounds, args = _time_bounds(self.repo, self.start, self.end)
        # Two statements: SQLite reads min() or max() straight off the index only when it is alone.
        first, last = (
            self.db.execute(f"select {edge}(merged_at) from prs where {bounds}", args).fetchone()[0] for edge in ("min", "max")
        )
        return (from_utc_text(first), from_utc_text(last)) if first else None

    def where(self, stage: _Stage, lower: datetime | None) -> tuple[str, list[Any]]:
        """The WHERE clause of a stage from `lower` on.

        Row ids sort by merge time, so FTS5 reads only the window's stretch of
        each doclist, however many PRs are older or newer.
        """
        where, args = [f"prs_fts match ?{_rowid_range('prs_fts.rowid', lower, self.end)}"], [stage.expression]
        if stage.required:
            # "+prs.id": a plain rowid IN would be pushed into FTS5 as one lookup (and one bm25 setup) per id.
            where.append(f"+prs.id in (select rowid from prs_fts where prs_fts match ?{_rowid_range('rowid', lower, self.end)})")
            args.append(stage.required)
        bounds, bound_args = _time_bounds(self.repo, lower, self.end, "prs.")
        where.append(bounds)
        args.extend(bound_args)
        narrowing, narrowing_args = narrowing_condition(self.question)
        if narrowing:
            where.append(narrowing)
            args.extend(narrowing_args)
        return " and ".join(where), args


def _rowid_range(column: str, start: datetime | None, end: datetime | None) -> str:
    """Bounds on FTS5 rowids for PRs merged in [start, end); ids are integers of ours, never user text."""
    lower = f" and {column} >= {first_id(start)}" if start is not None else ""
    upper = f" and {column} < {first_id(end)}" if end is not None else ""
    return lower + upper


def _windowed(scope: _Scope, stage: _Stage, limit: int) -> list[dict[str, Any]]:
    """Top rows of a stage, from the narrowest recent window that holds `limit` of its matches.

    Ranking is what costs, not matching. The windows are three days, a week, a
    month, half a year and two years back from the newest PR asked about, then
    the whole range asked, and only the first window holding `limit` matches is
    ranked. Which one that is, the `limit`-th newest match says: FTS5 walks its
    doclists newest first and stops there. FTS5 reads only a window's stretch
    of rowids, so a question costs the same in a store of 100,000 PRs as in
    one of 1,000, whatever order they were stored in, and recent PRs win among equals.
    """
    edges = scope.edges
    if edges is None:
        return []
    oldest, newest = edges
    whole = scope.where(stage, scope.start)
    recent = _newest_matches(scope.db, whole, limit)
    if len(recent) < limit:
        return _rank(scope.db, stage, whole, [pr_id for pr_id, _ in recent], limit)
    reached = recent[-1][1]
    for days in WINDOW_DAYS:
        lower = newest - timedelta(days=days)
        if lower <= oldest:
            break  # this window already holds every PR asked about
        if lower <= reached:
            window = scope.where(stage, lower)
            return _rank(scope.db, stage, window, _match_ids(scope.db, window, LOCAL_CAP + 1), limit)
    return _rank(scope.db, stage, whole, _match_ids(scope.db, whole, LOCAL_CAP + 1), limit)


def _newest_matches(db: Database, query: tuple[str, list[Any]], most: int) -> list[tuple[int, datetime]]:
    """The ids and merge times of the newest `most` matches, newest first."""
    where, args = query
    rows = db.execute(
        f"select prs.id, prs.merged_at from {_FROM} where {where} order by prs_fts.rowid desc limit ?", [*args, most]
    )
    return [(pr_id, from_utc_text(merged_at)) for pr_id, merged_at in rows]


def _match_ids(db: Database, query: tuple[str, list[Any]], most: int) -> list[int]:
    where, args = query
    return [row[0] for row in db.execute(f"select prs.id from {_FROM} where {where} limit ?", [*args, most])]


def _rank(db: Database, stage: _Stage, query: tuple[str, list[Any]], ids: list[int], limit: int) -> list[dict[str, Any]]:
    if not ids:
        return []
    if len(ids) <= LOCAL_CAP and store_size(db) >= LOCAL_FROM:
        return _score_locally(db, stage.expression, ids, limit)
    where, args = query
    cursor = db.execute(
        f"select prs.*, -{_bm25('prs_fts')} as score from {_FROM} where {where} "
        "order by score desc, prs.merged_at desc limit ?",
        [*args, limit],
    )
    return _dicts(cursor)


def _score_locally(db: Database, expression: str, ids: list[int], limit: int) -> list[dict[str, Any]]:
    """bm25 over just these PRs, indexed afresh in a small contentless FTS table of this connection.

    In a big store, bm25 on the store's own index slows down with every PR
    added (each phrase's instances are read from its full doclist); indexing a
    window's few hundred matches costs the same at any size. Rarity ("idf")
    then means rare among those matches.
    """
    columns = ", ".join(FTS_COLUMNS)
    db.execute(
        f"create virtual table if not exists temp.search_window using fts5({columns}, tokenize='porter', content='')"
    )
    with db.atomic():
        db.execute("insert into temp.search_window (search_window) values ('delete-all')")
        db.execute(
            f"insert into temp.search_window (rowid, {columns}) "
            f"select id, {columns} from prs where id in (select value from json_each(?))",
            [json.dumps(ids)],
        )
    cursor = db.execute(
        f"select prs.*, -{_bm25('search_window')} as score "
        "from temp.search_window cross join prs on prs.id = search_window.rowid "
        "where search_window match ? order by score desc, prs.merged_at desc limit ?",
        [expression, limit],
    )
    return _dicts(cursor)


# CROSS JOIN keeps FTS as the outer loop: bm25 needs the FTS cursor to drive.
_FROM = "prs_fts cross join prs on prs.id = prs_fts.rowid"


def _span(question: Query) -> tuple[datetime | None, datetime | None]:
    return (question.time.start, question.time.end) if question.time else (None, None)


def _time_bounds(repo: str, start: datetime | None, end: datetime | None, table: str = "") -> tuple[str, list[Any]]:
    where, args = [f"{table}repo = ?"], [repo]
    if start is not None:
        where.append(f"{table}merged_at >= ?")
        args.append(to_utc_text(start))
    if end is not None:
        where.append(f"{table}merged_at < ?")
        args.append(to_utc_text(end))
    return " and ".join(where), args


def narrowing_condition(question: Query) -> tuple[str, list[str]]:
    """The people, paths, type and people left out that a question keeps to, as one SQL condition on `prs`."""
    return _all_of(people_condition(question), kept_condition(question))


def kept_condition(question: Query) -> tuple[str, list[str]]:
    """Everything a question keeps to but time and people: paths, the type asked, the people it leaves out, and the
    earlier answer it picks among."""
    return _all_of(path_condition(question), type_condition(question), left_out_condition(question), within_condition(question))


def within_condition(question: Query) -> tuple[str, list[str]]:
    """Among the PRs a follow-up picks from ("which of those …"), and not those it asks beside ("what else …")."""
    return _all_of(
        ("prs.number in (select value from json_each(?))", [json.dumps(question.within)]) if question.within else ("", []),
        ("prs.number not in (select value from json_each(?))", [json.dumps(question.besides)]) if question.besides else ("", []),
    )


def _all_of(*conditions: tuple[str, list[str]]) -> tuple[str, list[str]]:
    parts = [part for part in conditions if part[0]]
    return " and ".join(where for where, _ in parts), [arg for _, args in parts for arg in args]


def type_condition(question: Query) -> tuple[str, list[str]]:
    return ("prs.type = ?", [question.pr_type]) if question.pr_type else ("", [])


def left_out_condition(question: Query) -> tuple[str, list[str]]:
    """Neither author nor merger is a person the question leaves out ("besides vllm-bot"), or a bot when it leaves bots out."""
    logins = [login for login in question.excluded if login != BOTS]
    where: list[str] = []
    for column in ("lower(prs.author)", "lower(coalesce(prs.merged_by, ''))"):
        if logins:
            where.append(f"{column} not in ({', '.join('?' for _ in logins)})")
        if BOTS in question.excluded:
            where.append(f"not {_is_bot(column)}")
    return " and ".join(where), logins * 2 if logins else []


def _is_bot(column: str) -> str:
    """store.retrieval.reading.query.is_bot, in SQL, of a lowercased login column."""
    return f"({column} like '%[bot]' or {column} like '%-bot' or {column} like '%\\_bot' escape '\\' or {column} = 'bot')"


def path_condition(question: Query) -> tuple[str, list[str]]:
    """A changed file's path holds one of the paths asked about (a folder, a file, a part of either), and none
    holds a path the question leaves out."""
    return _all_of(_files_holding(question.paths, ""), _files_holding(question.excluded_paths, "not "))


def _files_holding(paths: Sequence[str], negation: str) -> tuple[str, list[str]]:
    if not paths:
        return "", []
    either = " or ".join("instr(lower(value), ?) > 0" for _ in paths)
    return f"{negation}exists (select 1 from json_each(prs.files) where {either})", list(paths)


def people_condition(question: Query) -> tuple[str, list[str]]:
    either, args = [], []
    for person in question.people:
        for _, where, person_args in _person_conditions(person):
            either.append(where)
            args.extend(person_args)
    return ("(" + " or ".join(either) + ")" if either else ""), args


def _person_conditions(person: Person) -> list[tuple[Role, str, list[str]]]:
    """For each role a person is asked in: the role, and the SQL condition that a PR's login in it is theirs."""
    conditions: list[tuple[Role, str, list[str]]] = []
    for role, column in ((Role.AUTHOR, "prs.author"), (Role.MERGER, "prs.merged_by")):
        if person.role not in (Role.ANY, role):
            continue
        if person.login == BOTS:
            conditions.append((role, _is_bot(f"lower(coalesce({column}, ''))"), []))
        else:
            conditions.append((role, f"{column} = ? collate nocase", [person.login]))
    return conditions


def _squash(raw: float, band: int) -> float:
    """bm25 mapped below named and related PRs, each stage's matches in a band above the next stage's."""
    width = _TEXT_CEILING / 3
    return round(band * width + (width * raw / (raw + _TEXT_HALF) if raw > 0 else 0.0), 4)


# ---------------------------------------------------------------- listing by time and people


@dataclass(frozen=True)
class _Arm:
    """One index-friendly slice of a listing: a person's authored or merged PRs, or every PR."""

    where: str
    args: tuple[Any, ...]
    rank: int  # 0 before 1: a person's own PRs before those they only merged


def _arms(question: Query) -> list[_Arm]:
    if not question.people:
        return [_Arm("", (), 0)]
    # What a person asked about in any role wrote comes before what they merged.
    return [
        _Arm(f" and {where}", tuple(args), int(role is Role.MERGER and person.role is Role.ANY))
        for person in question.people
        for role, where, args in _person_conditions(person)
    ]


def _listing(
    db: Database, repo: str, question: Query, limit: int, near: TimeRange | None
) -> tuple[list[Hit], int | None]:
    """PRs by time and people only: newest first, or nearest to `near` when the time was relaxed away."""
    if not question.has_filters and near is None:
        return [], 0
    bounds, bound_args = _time_bounds(repo, *_span(question))
    kept, kept_args = kept_condition(question)
    if kept:
        bounds, bound_args = f"{bounds} and {kept}", [*bound_args, *kept_args]
    arms = [(f"{bounds}{arm.where}", [*bound_args, *arm.args], arm.rank) for arm in _arms(question)]
    total = _count(db, [(where, args) for where, args, _ in arms])
    if not total:
        return [], 0
    found: list[tuple[Any, dict[str, Any]]] = []
    for where, args, rank in arms:
        if near is None:
            cursor = db.execute(f"select * from prs where {where} order by merged_at desc, number desc limit ?", [*args, limit])
            found.extend(((rank, -from_utc_text(row["merged_at"]).timestamp(), -row["number"]), row) for row in _dicts(cursor))
            continue
        for edge, bound, direction in ((near.start, "<", "desc"), (near.end, ">=", "asc")):
            if edge is None:
                continue
            cursor = db.execute(
                f"select * from prs where {where} and merged_at {bound} ? order by merged_at {direction} limit ?",
                [*args, to_utc_text(edge), limit],
            )
            found.extend((abs((from_utc_text(row["merged_at"]) - edge).total_seconds()), row) for row in _dicts(cursor))
    found.sort(key=lambda item: item[0])
    hits: dict[int, Hit] = {}
    for _, row in found:
        hits.setdefault(row["id"], Hit(pr_from_row(row), 0.0))
    return list(hits.values())[:limit], total


def _count(db: Database, arms: list[tuple[str, list[Any]]]) -> int:
    """How many PRs the arms hold together, up to COUNT_CAP; each arm is counted on its own index first."""
    counts = [
        db.execute(f"select count(*) from (select 1 from prs where {where} limit ?)", [*args, COUNT_CAP]).fetchone()[0]
        for where, args in arms
    ]
    if len(arms) == 1 or max(counts) >= COUNT_CAP:
        return max(counts)
    # Arms overlap (a PR its own author merged): count the union, at most len(arms) * COUNT_CAP rows.
    union = " union ".join(f"select id from prs where {where}" for where, _ in arms)
    return db.execute(f"select count(*) from ({union})", [a for _, args in arms for a in args]).fetchone()[0]


def _dicts(cursor: sqlite3.Cursor) -> list[dict[str, Any]]:
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]
