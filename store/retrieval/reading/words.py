"""Areas, people and topics from the words a question has left once times, numbers and people are read."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from store.model import TYPES
from store.retrieval.reading.concepts import concept
from store.retrieval.reading.lookup import Lookup
from store.retrieval.reading.paths import path_words_at
from store.retrieval.reading.query import Concept, Person, PRType, Role
from store.retrieval.reading.synonyms import WORD, longest_synonym, subwords, subwords_of, synonym_index, synonyms_of
from store.text.patterns import LazyPattern
from store.understanding import vocabulary
from store.understanding.areas import resolve_area

BARE_NUMBER = LazyPattern(r"^\d{2,7}$")
# A release as written: "2.4", "0.1.32". Said alone ("pinned to 2.4") it is kept, as a word of one letter is not.
RELEASE = r"\d{1,4}(?:\.\d{1,4}){1,3}"
_RELEASE = LazyPattern(RELEASE)


@dataclass
class Words:
    """What the words left of a question name: areas (with the words that named them), topics and the type asked."""

    areas: list[str] = field(default_factory=list)
    area_phrases: list[str] = field(default_factory=list)
    area_same: list[str] = field(default_factory=list)
    area_groups: list[tuple[str, ...]] = field(default_factory=list)
    concepts: list[Concept] = field(default_factory=list)
    pr_type: PRType | None = None


def take_words(
    words: list[str],
    lookup: Lookup | None,
    stopwords: frozenset[str],
    repo: str | None,
    found: Found,
) -> Words:
    """Areas, people and topics from the words left after times, PR numbers and @people; the people, PR numbers and
    paths among them are added to those `found` before."""
    return _WordReader(words, lookup, stopwords, repo, found).read()


@dataclass
class Found:
    """What earlier steps of the reading found that the words may add to."""

    people: list[Person]
    numbers: list[int]
    paths: list[str]


class _WordReader:
    """Reads the words in order; at each, the longest thing it names: files, an area, a known phrase, a name, a word."""

    def __init__(self, words: list[str], lookup: Lookup | None, stopwords: frozenset[str], repo: str | None, found: Found) -> None:
        self.words, self.lookup, self.stopwords, self.repo, self.found = words, lookup, stopwords, repo, found
        self.read_words = Words()
        self.area_spans: list[tuple[int, int, str]] = []

    def read(self) -> Words:
        i = 0
        while i < len(self.words):
            i += path_words_at(self.words, i, self.found.paths) or self._area(i) or self._phrase(i) or self._word(i)
        self.read_words.area_groups = _area_groups(self.area_spans, self.words)
        return self.read_words

    def _area(self, i: int) -> int:
        """How many words from `i` name an area (and only name it further: "the CPU backend"), 0 when none does."""
        for size in (3, 2, 1):
            chunk = self.words[i : i + size]
            area = resolve_area(" ".join(chunk), self.repo) if len(chunk) == size else None
            if area:
                self._add_area(area, chunk)
                matched = size + area_nouns_after(self.words[i + size :])
                self.area_spans.append((i, i + matched, area))
                return matched
        return 0

    def _add_area(self, area: str, chunk: list[str]) -> None:
        # "the CPU backend" names the area and nothing narrower: its noun is no part of what was said.
        while len(chunk) > 1 and chunk[-1] in vocabulary.area_nouns() and resolve_area(" ".join(chunk[:-1]), self.repo) == area:
            chunk = chunk[:-1]
        read = self.read_words
        if area not in read.areas:
            read.areas.append(area)
        phrases = synonyms_of(subwords(" ".join(chunk)))
        read.area_same.extend(p for p in phrases.same if p not in read.area_same)
        for phrase in phrases.all + (" ".join(subwords(area)),):
            if phrase not in read.area_phrases:
                read.area_phrases.append(phrase)

    def _phrase(self, i: int) -> int:
        """How many words from `i` make the longest phrase the vocabulary knows, 0 when none does."""
        for size in range(longest_synonym(), 0, -1):
            said = subwords_of(self.words[i : i + size])
            if len(self.words[i : i + size]) == size and said in synonym_index():
                self.read_words.concepts.append(concept(" ".join(self.words[i : i + size]), synonyms_of(said)))
                return size
        return 0

    def _word(self, i: int) -> int:
        """One word, or a person's first and last name (two words)."""
        if self._full_name(i):
            return 2
        read = len(self.read_words.concepts)
        self._one_word(self.words[i])
        if len(self.read_words.concepts) > read and self._names_kind(i):
            self.read_words.concepts[-1] = replace(self.read_words.concepts[-1], said_as_name=True)
        return 1

    def _names_kind(self, i: int) -> bool:
        """Whether the word at `i` names a kind of thing after it: "jamba models", not "our big models" or "newly
        supported models"."""
        after, before = self.words[i + 1 : i + 2], self.words[max(i - 1, 0) : i]
        if not after or after[0] not in vocabulary.words("kind_nouns") or self.words[i].endswith(("ed", "ing")):
            return False
        return not set(before) & vocabulary.words("possessives")

    def _full_name(self, i: int) -> bool:
        """"andreas karatzas", "nick hill": a person's login, told by their names."""
        if not self.lookup or i + 1 >= len(self.words):
            return False
        first, last = self.words[i], self.words[i + 1]
        if not (_NAME_PART.fullmatch(first) and _NAME_PART.fullmatch(last)) or {first, last} & self.stopwords:
            return False
        login = self.lookup.full_name(first, last)
        if login:
            self._add_person(login)
        return bool(login)

    def _one_word(self, word: str) -> None:
        if word in TYPES:  # the report's own two kinds of PR
            self.read_words.pr_type = PRType(word)
        elif len(word) < 2 or word in self.stopwords or (all(len(sub) < 2 for sub in subwords(word)) and not _RELEASE.fullmatch(word)):
            return  # "i.e", but not a release ("pinned to 2.4")
        elif BARE_NUMBER.match(word) and self.lookup and self.lookup.is_pr(int(word)):
            if int(word) not in self.found.numbers:
                self.found.numbers.append(int(word))
        elif not self._login(word):
            self._topic(word)

    def _login(self, word: str) -> bool:
        login = self.lookup.login(word) if self.lookup and not word.isdigit() else None
        if login:
            self._add_person(login)
        return bool(login)

    def _add_person(self, login: str) -> None:
        if all(p.login.lower() != login.lower() for p in self.found.people):
            self.found.people.append(Person(login, Role.ANY))

    def _topic(self, word: str) -> None:
        said = subwords(word)
        if said and not all(sub in self.stopwords for sub in said):
            # "Blackwell-related": a compound the vocabulary knows once its filler is left out.
            telling = tuple(sub for sub in said if sub not in self.stopwords)
            if len(telling) < len(said) and telling in synonym_index():
                said, word = telling, " ".join(telling)
            self.read_words.concepts.append(concept(word, synonyms_of(said)))


def _area_groups(spans: list[tuple[int, int, str]], words: list[str]) -> list[tuple[str, ...]]:
    """Areas one "or" apart in one group ("tpu or xpu"), the others each in their own ("lora on tpu")."""
    groups: list[list[str]] = []
    for index, (start, _, area) in enumerate(spans):
        end = spans[index - 1][1] if index else None
        if end is not None and end < start <= end + _ALTERNATIVE_GAP and _ALTERNATIVE_WORDS & set(words[end:start]):
            groups[-1].append(area)
        else:
            groups.append([area])
    return list(dict.fromkeys(tuple(dict.fromkeys(group)) for group in groups))  # "moe … moe" is one group


_NAME_PART = LazyPattern(r"[a-z]{3,20}")
_SLASH = LazyPattern(r"\s+/\s+")
# Areas named as _alternatives rather than together: "speech / audio", "ROCm or CUDA", "either TPU or XPU".
_ALTERNATIVE_WORDS = frozenset({"or", "either"})
# At most this many words between two areas named as _alternatives ("ROCm or the CUDA side").
_ALTERNATIVE_GAP = 3


# A version after a name: "gemma 4", "deepseek v4", "kimi k3", "torch 2.5.0", "flashinfer 0.6.x"; the two are one
# phrase, the version alone says nothing.
_VERSION = LazyPattern(r"[a-z]?\d{1,3}(?:\.\d{1,3}){0,3}(?:\.x)?")


def _without_filler(word: str) -> str:
    """"amd-side" is "amd": a compound's filler half goes, unless the vocabulary knows the compound."""
    head, dash, tail = word.rpartition("-")
    if not dash or tail not in vocabulary.words("compound_fillers") or not head or subwords(word) in synonym_index():
        return word
    return head


def _alternatives(word: str) -> list[str]:
    """"h100/h200" is two names the vocabulary knows; any other slashed word ("acme/engine") stays one phrase."""
    parts = word.split("/")
    known = len(parts) > 1 and all(subwords(part) in synonym_index() for part in parts)
    return parts if known else [word]


def _with_versions(words: list[str]) -> list[str]:
    joined: list[str] = []
    for word in words:
        name = joined[-1] if joined else ""
        # "Blackwell B200": two names; "flashinfer 0.6.3" a name and its release.
        known = "." not in word and (subwords(word) in synonym_index() or subwords(name) in synonym_index())
        if _VERSION.fullmatch(word) and name.isalpha() and name not in vocabulary.stopwords() and not known:
            joined[-1] = f"{joined[-1]} {word}"
        else:
            joined.append(word)
    return joined


def area_nouns_after(words: list[str]) -> int:
    """How many of the words after an area only name it further: "the CPU backend", "AMD GPU changes"."""
    nouns = vocabulary.area_nouns()
    taken = 0
    while taken < len(words) and words[taken] in nouns:
        taken += 1
    return taken


def words_of(text: str) -> list[str]:
    """The words of what is left of a question, read as names: " / " between names is "or" ("speech / audio"), a
    compound's filler half goes ("amd-side"), known names slashed together are apart ("h100/h200"), and a version
    stays with its name ("gemma 4")."""
    words = [
        part
        for word in WORD.findall(_SLASH.sub(" or ", text.replace("'s ", " ")))
        for part in _alternatives(_without_filler(word.strip("._/+-")))
    ]
    return _with_versions([w for w in words if w])
