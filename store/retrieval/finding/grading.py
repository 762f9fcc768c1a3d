"""PRs graded for a question of words by how much of what was asked each says, and where, weighted by how rare each
word is."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from store.retrieval.evidence import FIELD_WEIGHT, RISK_WEIGHT, gather, rarity
from store.retrieval.finding.hits import TEXT_CEILING, Hit
from store.retrieval.finding.ranking import Scope, Stage, windowed
from store.retrieval.fts import any_of, area_names, quoted
from store.retrieval.reading.query import Concept, Cues, Phrases, Query
from store.tables.prs import pr_from_row
from store.text.prose import atoms

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
    for name in area_names(question):
        # The words that named the area belong to it only when it is the one area named.
        words = tuple(question.area_phrases) if len(question.areas) == 1 else ()
        phrases = Phrases((name, *words), (name, *words))
        expression = f"({{areas}} : {quoted(name)} OR {{title what_changed impact}} : {any_of(phrases.all)})"
        topics.append(_Topic(Concept(name, phrases), expression))
    return topics


def graded(db: Database, repo: str, question: Query, limit: int) -> list[Hit]:
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
    pool = _candidates(Scope(db, repo, question), question, topics, weights, max(limit, POOL))
    return _graded(db, question, topics, weights, pool, limit) if pool else []


# Each candidate's row id, to the band of the stage that found it, its bm25 score there and its row.
_Pool = dict[int, tuple[int, float, dict[str, Any]]]


def _candidates(scope: Scope, question: Query, topics: list[_Topic], weights: list[float], wanted: int) -> _Pool:
    pool: _Pool = {}
    for band, expression in _stages(question, topics, weights):
        for row in windowed(scope, Stage(expression, None, band), wanted):
            pool.setdefault(row["id"], (band, row["score"], row))
        if len(pool) >= wanted:
            break
    if len(topics) > 1:
        # A PR that says the question's point in other words misses its rare chatter ("sent", "sorted"),
        # and with it every stage above: each topic's own best PRs are graded too.
        for topic in topics:
            for row in windowed(scope, Stage(topic.expression, None, 1), PER_TOPIC):
                pool.setdefault(row["id"], (1, row["score"], row))
    return pool


def _stages(question: Query, topics: list[_Topic], weights: list[float]) -> list[tuple[int, str]]:
    """Each stage's FTS5 expression, with its band: every topic, then all but the commonest, … , then any, then the files."""
    telling = sorted(range(len(topics)), key=lambda i: -weights[i])
    stages = [" AND ".join(topics[i].expression for i in telling[:size]) for size in range(len(telling), 0, -1)]
    if len(topics) > 1:
        stages.append(" OR ".join(topic.expression for topic in topics))  # any topic at all, to fill up
    if question.paths:
        stages.append("{files} : " + any_of(" ".join(atoms(path)) for path in question.paths))  # the files alone
    return list(zip(range(len(stages), 0, -1), stages))


def _graded(
    db: Database, question: Query, topics: list[_Topic], weights: list[float], pool: _Pool, limit: int
) -> list[Hit]:
    """The best `limit` candidates, best first: by how much of what was asked each says, then by stage, then by bm25."""
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
    ranked = sorted(
        ((_coverage(list(said[pr_id]), grouped_weights, len(question.unknown)), size, score, row)
         for pr_id, (size, score, row) in pool.items()),
        key=lambda item: (-item[0], -item[1], -item[2]),
    )
    return [
        Hit(pr_from_row(row), round(TEXT_CEILING * coverage, 4), coverage=coverage, said=said[row["id"]])
        for coverage, _, _, row in ranked[:limit]
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
