"""What means the same as a question's words: the synonym groups of the lexicon (store/understanding/vocabulary.toml)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from store.retrieval.reading.query import Phrases
from store.text.patterns import LazyPattern
from store.text.prose import atoms
from store.understanding import vocabulary

WORD = LazyPattern(r"[a-z0-9]+(?:[-_./+][a-z0-9]+)*")


def subwords(text: str) -> tuple[str, ...]:
    return tuple(atoms(text))


def subwords_of(words: list[str]) -> tuple[str, ...]:
    """The subwords of several words, as one phrase: what the synonyms are keyed by."""
    return tuple(sub for word in words for sub in subwords(word))


@dataclass(frozen=True)
class _SynonymGroup:
    terms: tuple[tuple[str, ...], ...]
    narrower: tuple[tuple[str, ...], ...]
    # Work said of the whole family ("Intel GPUs") is work for each member ("Battlemage"), not broader than it.
    family: bool = False

    def expand(self, said: tuple[str, ...]) -> tuple[tuple[tuple[str, ...], ...], tuple[tuple[str, ...], ...]]:
        """What means the same as `said`, and what is only related (narrower, or the wider terms)."""
        if said in self.terms:
            return self.terms, self.narrower
        return (said,), self.terms


def synonym_specs() -> list[dict[str, Any]]:
    """The synonym groups of the lexicon."""
    return vocabulary.groups()


@vocabulary.cached
def synonym_index() -> dict[tuple[str, ...], list[_SynonymGroup]]:
    """Every term and narrower term, as its subwords, to the groups that hold it."""
    index: dict[tuple[str, ...], list[_SynonymGroup]] = {}
    for spec in synonym_specs():
        group = _SynonymGroup(
            terms=tuple(subwords(term) for term in spec["terms"]),
            narrower=tuple(subwords(term) for term in spec.get("narrower", [])),
            family=bool(spec.get("family", False)),
        )
        for term in group.terms + group.narrower:
            index.setdefault(term, []).append(group)
    return index


@vocabulary.cached
def longest_synonym() -> int:
    return max(len(term) for term in synonym_index())


def synonyms_of(words: tuple[str, ...]) -> Phrases:
    """The phrases to search for `words` (subwords)."""
    same = [words]
    related: list[tuple[str, ...]] = []
    wider: list[tuple[str, ...]] = []
    kin: list[tuple[str, ...]] = []
    for group in synonym_index().get(words, []):
        equal, other = group.expand(words)
        same.extend(equal)
        related.extend(other)
        if words not in group.terms:  # asked for a narrower term: the group's terms are broader, or its family's
            (kin if group.family else wider).extend(other)
    wider = [phrase for phrase in wider if phrase not in kin]
    # A phrase that holds the words asked ("extra gpu memory" for "memory") finds nothing they do not: left out,
    # it costs no lookup in the index.
    same = [phrase for phrase in same if phrase == words or not _holds_words(phrase, words)]
    related = [phrase for phrase in related if not _holds_words(phrase, words)]
    same_text = tuple(dict.fromkeys(" ".join(phrase) for phrase in same))
    all_text = tuple(dict.fromkeys(same_text + tuple(" ".join(phrase) for phrase in related)))
    return Phrases(same_text, all_text, tuple(dict.fromkeys(" ".join(phrase) for phrase in wider if phrase in related)))


def _holds_words(phrase: tuple[str, ...], words: tuple[str, ...]) -> bool:
    size = len(words)
    return any(phrase[i : i + size] == words for i in range(len(phrase) - size + 1))
