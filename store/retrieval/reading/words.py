"""Areas, people and topics from the words a question has left once times, numbers and people are read."""
from __future__ import annotations

from store.model import TYPES
from store.retrieval.reading.lexicon import STOPWORDS
from store.retrieval.reading.lookup import Lookup
from store.retrieval.reading.paths import path_words_at
from store.retrieval.reading.query import Concept, Person, PRType, Question, Role
from store.retrieval.reading.synonyms import longest_synonym, subwords, subwords_of, synonym_index, synonyms_of
from store.text.patterns import LazyPattern
from store.understanding import vocabulary
from store.understanding.areas import resolve_area

BARE_NUMBER = LazyPattern(r"^\d{2,7}$")


def take_words(
    words: list[str], lookup: Lookup | None, question: Question, stopwords: frozenset[str], repo: str | None
) -> None:
    """Areas, people and topics from the words left after times, PR numbers and @people."""
    longest = longest_synonym()
    area_spans: list[tuple[int, int, str]] = []
    i = 0
    while i < len(words):
        matched = path_words_at(words, i, question.paths)
        if matched:
            i += matched
            continue
        for size in (3, 2, 1):
            chunk = words[i : i + size]
            if len(chunk) < size:
                continue
            area = resolve_area(" ".join(chunk), repo)
            if area:
                # "the CPU backend" names the area and nothing narrower: its noun is no part of what was said.
                while len(chunk) > 1 and chunk[-1] in vocabulary.area_nouns() and resolve_area(" ".join(chunk[:-1]), repo) == area:
                    chunk = chunk[:-1]
                said = subwords(" ".join(chunk))
                if area not in question.areas:
                    question.areas.append(area)
                phrases = synonyms_of(said)
                question.area_same.extend(p for p in phrases.same if p not in question.area_same)
                for phrase in phrases.all + (" ".join(subwords(area)),):
                    if phrase not in question.area_phrases:
                        question.area_phrases.append(phrase)
                matched = size + area_nouns_after(words[i + size :])
                area_spans.append((i, i + matched, area))
                break
        if matched:
            i += matched
            continue
        for size in range(longest, 0, -1):
            said = subwords_of(words[i : i + size])
            if len(words[i : i + size]) == size and said in synonym_index():
                question.concepts.append(Concept(" ".join(words[i : i + size]), synonyms_of(said)))
                matched = size
                break
        if matched:
            i += matched
            continue
        word = words[i]
        i += 1
        if lookup and i < len(words) and _NAME_PART.fullmatch(word) and _NAME_PART.fullmatch(words[i]) and not (
            {word, words[i]} & stopwords
        ):
            login = lookup.full_name(word, words[i])
            if login:
                if all(p.login.lower() != login.lower() for p in question.people):
                    question.people.append(Person(login, Role.ANY))
                i += 1
                continue
        if word in TYPES:  # the report's own two kinds of PR
            question.pr_type = PRType(word)
            continue
        if len(word) < 2 or word in stopwords or all(len(sub) < 2 for sub in subwords(word)):  # "i.e"
            continue
        if BARE_NUMBER.match(word) and lookup and lookup.is_pr(int(word)):
            if int(word) not in question.numbers:
                question.numbers.append(int(word))
            continue
        login = lookup.login(word) if lookup and not word.isdigit() else None
        if login:
            if all(p.login.lower() != login.lower() for p in question.people):
                question.people.append(Person(login, Role.ANY))
            continue
        said = subwords(word)
        if said and not all(sub in stopwords for sub in said):
            # "Blackwell-related": a compound the vocabulary knows once its filler is left out.
            telling = tuple(sub for sub in said if sub not in stopwords)
            if len(telling) < len(said) and telling in synonym_index():
                said, word = telling, " ".join(telling)
            question.concepts.append(Concept(word, synonyms_of(said)))
    question.area_groups = _area_groups(area_spans, words)


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
SLASH = LazyPattern(r"\s+/\s+")
# Areas named as alternatives rather than together: "speech / audio", "ROCm or CUDA", "either TPU or XPU".
_ALTERNATIVE_WORDS = frozenset({"or", "either"})
# At most this many words between two areas named as alternatives ("ROCm or the CUDA side").
_ALTERNATIVE_GAP = 3


# A version after a name: "gemma 4", "deepseek v4", "kimi k3"; the two are one phrase, the version alone says nothing.
_VERSION = LazyPattern(r"[a-z]?\d{1,3}(?:\.\d{1,2})?")


# The second half of a compound that only says "to do with": "amd-side", "security-related", "llama.cpp-style".
COMPOUND_FILLERS = frozenset(
    {"side", "sided", "related", "style", "based", "specific", "focused", "facing", "oriented", "wise", "ish",
     "heavy", "centric", "flavored", "flavoured", "adjacent", "like", "type", "flavor", "flavour", "level"}
)


def without_filler(word: str) -> str:
    """"amd-side" is "amd": a compound's filler half goes, unless the vocabulary knows the compound."""
    head, dash, tail = word.rpartition("-")
    if not dash or tail not in COMPOUND_FILLERS or not head or subwords(word) in synonym_index():
        return word
    return head


def alternatives(word: str) -> list[str]:
    """"h100/h200" is two names the vocabulary knows; any other slashed word ("acme/engine") stays one phrase."""
    parts = word.split("/")
    known = len(parts) > 1 and all(subwords(part) in synonym_index() for part in parts)
    return parts if known else [word]


def with_versions(words: list[str]) -> list[str]:
    joined: list[str] = []
    for word in words:
        name = joined[-1] if joined else ""
        known = subwords(word) in synonym_index() or subwords(name) in synonym_index()  # "Blackwell B200": two names
        if _VERSION.fullmatch(word) and name.isalpha() and name not in STOPWORDS and not known:
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
