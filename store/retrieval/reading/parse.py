"""What a question about merged PRs asks for: when, by whom, in which areas, which PRs, and about what.

The parser is deliberately forgiving: whatever it does not recognise as a time,
person, area or PR reference stays free text, and search decides what matches.
"""
from __future__ import annotations

import re
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from store.model import TYPES
from store.retrieval.reading.clean import LEAD_IN, TRAILING_CONTEXT, clean
from store.retrieval.reading.effects import EFFECT_WORDS, ORIGIN_WORDS, REMOVAL_WORDS, SWITCHED, take_risk_words
from store.retrieval.reading.form import read_form
from store.retrieval.reading.leaving_out import leave_out_words_of_asked_areas, take_excluded, take_negated
from store.retrieval.reading.lexicon import STOPWORDS
from store.retrieval.reading.lookup import Lookup
from store.retrieval.reading.numbers import take_numbers
from store.retrieval.reading.order import COUNTING, take_order, take_relative, take_top
from store.retrieval.reading.paths import take_paths, take_untouched
from store.retrieval.reading.people import take_people
from store.retrieval.reading.query import Question
from store.retrieval.reading.synonyms import WORD
from store.retrieval.reading.typos import topic_typos_fixed
from store.retrieval.reading.when import read_time
from store.retrieval.reading.words import SLASH, alternatives, take_words, with_versions, without_filler
from store.text.patterns import LazyPattern
from store.text.prose import atoms, stem

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
_WHOLE_STORE = LazyPattern(
    r"\b(?:in|across|from)\s+(?:the\s+)?(?:whole|entire)\s+(?:store|history|db|database)\b|\bof\s+all\s+time\b|\ball[\s-]time\b",
    re.IGNORECASE,
)


def parse_question(
    text: str,
    tz: ZoneInfo,
    now: datetime | None = None,
    lookup: Lookup | None = None,
    extra_stopwords: frozenset[str] = frozenset(),
    repo: str | None = None,
) -> Question:
    """Read a question; `now` defaults to the current time, `lookup` tells people and PRs apart from words,
    and `repo` names the repository whose areas count (None: the default areas)."""
    now = now or datetime.now(UTC)
    if now.tzinfo is None:
        now = now.replace(tzinfo=tz)
    # Slack markup is undone on a bounded prefix: a question is short, a pasted log is not read whole.
    cleaned = LEAD_IN.sub("", " ".join(clean((text or "")[: 4 * MAX_QUESTION_CHARS]).split()), count=1)
    cleaned = TRAILING_CONTEXT.sub("?", cleaned, count=1)
    form = read_form(cleaned)
    question = Question(text=cleaned, tally=form.tally, linked=form.linked)
    if not cleaned:
        return question  # an empty question holds nothing to read, and reading it costs a process's start
    if len(cleaned) > MAX_QUESTION_CHARS or len(text or "") > 4 * MAX_QUESTION_CHARS:
        # A pasted log is not a question; its start says what it is about.
        cleaned = cleaned[:MAX_QUESTION_CHARS]
        question.problems.append(f"only the first {MAX_QUESTION_CHARS} characters were read")
    rest = take_numbers(_the_other_type(_WHOLE_STORE.sub(" ", cleaned)), question.numbers)
    rest = take_excluded(rest, lookup, question.excluded)
    rest = take_untouched(rest, question.excluded_paths)
    rest, named_left_out = take_negated(rest, repo, question)
    rest = take_people(rest, lookup, question.people)
    question.time, rest, problems = read_time(rest, tz, now, lookup.merged_between if lookup else None)
    question.problems.extend(problems)
    rest, question.order = take_order(rest)
    rest, question.relative = take_relative(rest)
    rest = COUNTING.sub(" ", rest)
    if question.order is None:
        rest, question.order = take_top(rest)
    rest = take_paths(rest, question.paths, lookup)
    rest, question.about_risks = take_risk_words(rest)
    if lookup is not None:
        rest = topic_typos_fixed(rest, lookup)
    question.improves = bool(EFFECT_WORDS.search(rest))
    question.removes = bool(REMOVAL_WORDS.search(rest))
    rest = ORIGIN_WORDS.sub(" ", REMOVAL_WORDS.sub(" ", rest))
    rest = EFFECT_WORDS.sub(lambda m: f" {m['kept'] or ''} ", rest)
    rest = SWITCHED.sub(lambda m: m["how"], rest)
    # " / " between names is "or" ("speech / audio").
    words = [
        part
        for word in WORD.findall(SLASH.sub(" or ", rest.replace("'s ", " ")))
        for part in alternatives(without_filler(word.strip("._/+-")))
    ]
    take_words(with_versions([w for w in words if w]), lookup, question, STOPWORDS | extra_stopwords, repo)
    if question.paths and question.area_same and _said_by_paths(question.area_same, question.paths):
        # "the tool parsers dir (vllm/entrypoints/openai/tool_parsers)": the words only describe the folder.
        question.areas, question.area_groups, question.area_phrases, question.area_same = [], [], [], []
    leave_out_words_of_asked_areas(question, named_left_out)
    if len(question.concepts) > MAX_CONCEPTS:
        question.concepts = question.concepts[:MAX_CONCEPTS]
        question.problems.append(f"only the first {MAX_CONCEPTS} words were searched for")
    return question
