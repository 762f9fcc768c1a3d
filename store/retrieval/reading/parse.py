"""What a question about merged PRs asks for: when, by whom, in which areas, which PRs, and about what.

The parser is deliberately forgiving: whatever it does not recognise as a time,
person, area or PR reference stays free text, and search decides what matches.
"""
from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from store.model import TYPES
from store.retrieval.reading.clean import plain_question
from store.retrieval.reading.concepts import words_concept
from store.retrieval.reading.cues import cues_of
from store.retrieval.reading.effects import take_effects, take_risk_words, take_soon_after
from store.retrieval.reading.form import read_form
from store.retrieval.reading.leaving_out import take_excluded, take_negated
from store.retrieval.reading.lookup import Lookup
from store.retrieval.reading.numbers import take_numbers
from store.retrieval.reading.order import take_order, take_relative, take_top, without_counting
from store.retrieval.reading.paths import take_paths, take_untouched
from store.retrieval.reading.people import take_people
from store.retrieval.reading.query import Concept, Doubt, Order, Person, Query, Role, Side
from store.retrieval.reading.releases import take_release
from store.retrieval.reading.typos import topic_typos_fixed
from store.retrieval.reading.when import read_time
from store.retrieval.reading.words import RELEASE, Found, Words, take_words, words_of
from store.text.patterns import LazyPattern
from store.text.prose import atoms, stem, typed_sentences
from store.understanding import vocabulary
from store.understanding.vocabulary import cue

# Longer text is cut: each word may cost a lookup, and a question is short.
MAX_QUESTION_CHARS = 600
MAX_CONCEPTS = 12


# "non-trivial PRs" are the substantial ones, and "non-substantial" the trivial ones: the report has these two types.
_NOT_TYPE = LazyPattern(
    r"\b(?:non[\s-]?|(?:not|isn'?t|aren'?t|wasn'?t|weren'?t)\s+(?:an?\s+|one\s+of\s+the\s+)?"
    # "apart from the trivial stuff", "leaving out the trivial ones"
    r"|(?:apart\s+from|besides|except(?:\s+for)?|excluding|other\s+than|leaving\s+out|ignoring|skipping|without)\s+(?:the\s+|any\s+)?)"
    r"(trivial|substantial)\b",
    re.IGNORECASE,
)


def _the_other_type(text: str) -> str:
    return _NOT_TYPE.sub(lambda m: next(t for t in TYPES if t != m[1].lower()), text)


def _said_by_paths(phrases: list[str], paths: list[str]) -> bool:
    """Whether every word of the phrases is a word of the paths ("tool parsers" of ".../tool_parsers")."""
    in_paths = {stem(atom) for path in paths for atom in atoms(path)}
    return all(stem(atom) in in_paths for phrase in phrases for atom in atoms(phrase))


# "in the whole store", "of all time": no time, said outright.
_WHOLE_STORE = cue("whole_store")


def parse_question(
    text: str,
    tz: ZoneInfo,
    now: datetime | None = None,
    lookup: Lookup | None = None,
    extra_stopwords: frozenset[str] = frozenset(),
    repo: str | None = None,
) -> Query:
    """Read a question; `now` defaults to the current time, `lookup` tells people and PRs apart from words,
    and `repo` names the repository whose areas count (None: the default areas)."""
    now = now or datetime.now(UTC)
    if now.tzinfo is None:
        now = now.replace(tzinfo=tz)
    # Slack markup is undone on a bounded prefix: a question is short, a pasted log is not read whole.
    cleaned = plain_question((text or "")[: 4 * MAX_QUESTION_CHARS])
    if not cleaned:
        return Query()  # an empty question holds nothing to read, and reading it costs a process's start
    shape = read_form(cleaned)
    problems = []
    if len(cleaned) > MAX_QUESTION_CHARS or len(text or "") > 4 * MAX_QUESTION_CHARS:
        # A pasted log is not a question; its start says what it is about.
        problems.append(f"only the first {MAX_QUESTION_CHARS} characters were read")
    reader = _Reader(tz, now, lookup, vocabulary.stopwords() | extra_stopwords, repo, problems)
    read = cleaned[:MAX_QUESTION_CHARS]
    read_fields = reader.read(read)
    if shape.doubt is Doubt.NOW:
        read_fields["concepts"], read_fields["versions"] = _releases_asked(read_fields["concepts"])
    return replace(shape, cues=cues_of(cleaned), sentences=_sentences(read), **read_fields)


def _releases_asked(concepts: tuple[Concept, ...]) -> tuple[tuple[Concept, ...], tuple[str, ...]]:
    """"still on flashinfer 0.6.x?": the dependency by its name, and the release asked of it ("0.6", any 0.6)."""
    named: list[Concept] = []
    versions: list[str] = []
    for asked in concepts:
        name, _, release = asked.said.rpartition(" ")
        if _RELEASE.fullmatch(release):
            named.extend([words_concept(name.split())] if name else [])  # "pinned to 1.15": the release alone
            versions.append(release.removesuffix(".x"))
        else:
            named.append(asked)
    return tuple(named), tuple(versions)


# A release of a dependency, as a question says it: "0.1.32", "2.9", "0.6.x".
_RELEASE = LazyPattern(rf"v?{RELEASE}(?:\.x)?")


def _sentences(text: str) -> tuple[frozenset[str], ...]:
    """The words of each sentence of a question of several; none for a question of one."""
    parts = [frozenset(atoms(part)) for part in typed_sentences(text) if atoms(part)]
    return tuple(parts) if len(parts) > 1 else ()


class _Reader:
    """One reading of a question: each step takes what it recognises out of the text, in this order."""

    def __init__(
        self, tz: ZoneInfo, now: datetime, lookup: Lookup | None, stopwords: frozenset[str], repo: str | None, problems: list[str]
    ) -> None:
        self.tz, self.now, self.lookup, self.stopwords, self.repo = tz, now, lookup, stopwords, repo
        self.problems = problems
        self.numbers: list[int] = []
        self.excluded: list[str] = []
        self.excluded_roles: list[Role] = []
        self.excluded_paths: list[str] = []
        self.people: list[Person] = []
        self.paths: list[str] = []

    def read(self, text: str) -> dict[str, Any]:
        """The fields of the Query the text holds."""
        # Releases first: "since v0.10" is no time, and "0.11.1" no word to search for.
        rest, release = take_release(text)
        rest = take_numbers(_the_other_type(_WHOLE_STORE.sub(" ", rest)), self.numbers)
        rest = take_excluded(rest, self.lookup, self.excluded, self.excluded_roles)
        rest = take_untouched(rest, self.excluded_paths)
        rest, left_out = take_negated(rest, self.repo)
        rest = take_people(rest, self.lookup, self.people)
        rest, soon_after = take_soon_after(rest)  # "the same day" is no day of its own
        time, rest, problems = read_time(rest, self.tz, self.now, self.lookup.merged_between if self.lookup else None)
        self.problems.extend(problems)
        rest, order, relative = _take_order(rest)
        rest = take_paths(rest, self.paths, self.lookup)
        rest, about_risks = take_risk_words(rest)
        if self.lookup is not None:
            rest = topic_typos_fixed(rest, self.lookup)
        rest, improves, removes = take_effects(rest)
        words = self._words(rest)
        left_out.keep_asked(words.areas)
        concepts = self._concepts(_coded(words.concepts, text))
        return {
            "time": time, "people": tuple(self.people), "areas": tuple(words.areas), "area_phrases": tuple(words.area_phrases),
            "area_same": tuple(words.area_same), "area_groups": tuple(words.area_groups), "numbers": tuple(self.numbers),
            "concepts": tuple(concepts), "paths": tuple(self.paths), "pr_type": words.pr_type,
            "excluded": tuple(self.excluded), "excluded_role": _one_role(self.excluded_roles), "excluded_areas": tuple(left_out.areas), "excluded_words": tuple(left_out.words),
            "excluded_paths": tuple(self.excluded_paths), "problems": tuple(self.problems), "order": order,
            "relative": relative, "about_risks": about_risks, "improves": improves, "removes": removes,
            "soon_after": soon_after,
            "release": release,
        }

    def _words(self, rest: str) -> Words:
        found = Found(self.people, self.numbers, self.paths)
        words = take_words(words_of(rest), self.lookup, self.stopwords, self.repo, found)
        if self.paths and words.area_same and _said_by_paths(words.area_same, self.paths):
            # "the tool parsers dir (vllm/entrypoints/openai/tool_parsers)": the words only describe the folder.
            return Words(concepts=words.concepts, pr_type=words.pr_type)
        return words

    def _concepts(self, concepts: list[Concept]) -> list[Concept]:
        if len(concepts) <= MAX_CONCEPTS:
            return concepts
        self.problems.append(f"only the first {MAX_CONCEPTS} words were searched for")
        return concepts[:MAX_CONCEPTS]


def _one_role(roles: list[Role]) -> Role:
    """The role people are left out in, when every negation said the same one."""
    return roles[0] if roles and len(set(roles)) == 1 else Role.ANY


def _coded(concepts: list[Concept], text: str) -> list[Concept]:
    """The concepts that name something in code: a flag, a variable, a name in backticks, a snake_case name."""
    named = {name.lower().strip("-`") for name in _CODE_NAME.findall(text)}
    return [replace(c, code=True) if c.said in named or "_" in c.said else c for c in concepts]


# "--disable-log-requests", "VLLM_ENGINE_READY_TIMEOUT_S", "`max_num_seqs`".
_CODE_NAME = LazyPattern(r"(?<![\w-])--[a-zA-Z][\w-]{1,60}|\b[A-Z][A-Z0-9]{1,30}_[A-Z0-9_]{1,60}\b|`[^`\s]{2,60}`")


def _take_order(text: str) -> tuple[str, Order | None, Side | None]:
    """Which end of what is asked ("the earliest merge", "the largest PR"), and which side of an earlier time."""
    rest, order = take_order(text)
    rest, relative = take_relative(rest)
    rest = without_counting(rest)
    if order is None:
        rest, order = take_top(rest)
    return rest, order, relative
