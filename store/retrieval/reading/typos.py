"""Words typed with one slip: common question words, time words, and the long words of areas and vLLM's vocabulary."""
from __future__ import annotations

import re

from store.retrieval.reading.lookup import Lookup
from store.retrieval.reading.synonyms import synonym_specs
from store.text.patterns import LazyPattern
from store.understanding import vocabulary
from store.understanding.areas import aliases as area_aliases


def misspelt_filler(word: str) -> bool:
    """Whether `word` is a common question word typed with one slip ("waht", "whcih", "chnages", "workin")."""
    return len(word) >= 4 and word not in vocabulary.stopwords() and any(one_slip(word, filler) for filler in vocabulary.words("often_mistyped"))


def one_slip(typed: str, meant: str) -> bool:
    """One letter added, dropped, changed, or two neighbours swapped."""
    if abs(len(typed) - len(meant)) > 1 or typed[0] != meant[0]:
        return False
    if len(typed) == len(meant):
        diff = [i for i, (a, b) in enumerate(zip(typed, meant)) if a != b]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and typed[diff[0]] == meant[diff[1]] and typed[diff[1]] == meant[diff[0]])
    short, long_ = sorted((typed, meant), key=len)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


# Time words typed with one slip ("yesteday", "feburary", "thrusday") still name the time, and the long words of
# areas and vLLM's vocabulary their topic ("strucutred output", "decodng"). Short month names are one slip from
# too many words ("marsh", "aptil").
_TIME_WORDS = (
    "yesterday", "today", "january", "february", "august", "september", "october", "november", "december",
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
)
_LONG_WORD = LazyPattern(r"(?<![\w/.-])[a-z]{4,16}(?![\w/.-])", re.IGNORECASE)
# Shorter words are one slip from too many others ("cache", "catch").
_TOPIC_WORD_MIN = 6


@vocabulary.cached
def _topic_words() -> tuple[str, ...]:
    """The long words of area names and of every synonym group, in order (the first near one wins, every time)."""
    names = [*area_aliases(), *(term for spec in synonym_specs() for key in ("terms", "narrower") for term in spec.get(key, []))]
    return tuple(sorted({word for name in names for word in re.findall(r"[a-z]+", name.lower()) if len(word) >= _TOPIC_WORD_MIN}))


@vocabulary.cached
def _is_topic_word() -> frozenset[str]:
    return frozenset(_topic_words())


@vocabulary.cached
def _topic_words_by_letter() -> dict[str, tuple[str, ...]]:
    """The topic words by first letter: one slip keeps the first letter, so only those are compared."""
    by_letter: dict[str, list[str]] = {}
    for word in _topic_words():
        by_letter.setdefault(word[0], []).append(word)
    return {letter: tuple(words) for letter, words in by_letter.items()}


def time_words_fixed(text: str) -> str:
    """Time words typed with one slip, as meant: "yesteday", "feburary"."""
    return _LONG_WORD.sub(_time_word, text)


def _time_word(m: re.Match[str]) -> str:
    word = m[0].lower()
    # "mondays" is no slip: the plural is read as it is.
    return next((time for time in _TIME_WORDS if word not in (time, f"{time}s") and one_slip(word, time)), m[0])


def topic_typos_fixed(text: str, lookup: Lookup) -> str:
    """Long words no PR says, one slip from a word of an area's name or vLLM's vocabulary, as that word."""

    def as_meant(m: re.Match[str]) -> str:
        word = m[0].lower()
        if len(word) < _TOPIC_WORD_MIN or word in vocabulary.stopwords() or word in _is_topic_word():
            return m[0]
        meant = next((topic for topic in _topic_words_by_letter().get(word[0], ()) if one_slip(word, topic)), None)
        return meant if meant and not lookup.says(word) else m[0]

    return _LONG_WORD.sub(as_meant, text)
