"""A concept: the words a question is about, what means the same, and what kind of words they are."""
from __future__ import annotations

from store.retrieval.reading.form import RELATION_TOPIC_WORDS, RELATION_WORDS
from store.retrieval.reading.query import Concept, Phrases, Relation
from store.retrieval.reading.synonyms import subwords_of, synonyms_of
from store.retrieval.reading.typos import misspelt_filler
from store.understanding.vocabulary import cue

# What a gain is stated in ("the largest TTFT cut", "the biggest decode speedup"), as opposed to what it is for.
_METRIC = cue("metric")


def concept(said: str, phrases: Phrases) -> Concept:
    """The concept of words as asked, with the phrases that say it, knowing what its words are."""
    return Concept(
        said,
        phrases,
        restates=frozenset(relation for relation in Relation if RELATION_TOPIC_WORDS[relation].search(said.lower())),
        names=frozenset(relation for relation in Relation if RELATION_WORDS[relation].search(said)),
        metric=bool(_METRIC.search(said)),
        misspelt_filler=misspelt_filler(said),
    )


def words_concept(said: list[str]) -> Concept:
    return concept(" ".join(said), synonyms_of(subwords_of(said)))


def word_concept(word: str) -> Concept:
    """One word asked on its own, with what means the same."""
    return words_concept([word])
